"""Claiming, renewing and releasing leases with one atomic statement each (compare-and-set
in the database), so any number of workers on one PostgreSQL never work on the same thing
at once."""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from sqlalchemy import delete, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from service.database import utcnow
from service.leases.models import Lease


def worker_identity() -> str:
    """Unique per process: host, pid and a random part (pids are reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def claim(
    factory: sessionmaker[Session], name: str, owner: str, ttl: timedelta, now: datetime
) -> bool:
    """Take the lease if it is free, expired, or already ours."""
    with factory() as session, session.begin():
        taken = session.execute(
            update(Lease)
            .where(Lease.name == name, or_(Lease.expires_at < now, Lease.owner == owner))
            .values(owner=owner, expires_at=now + ttl)
            .execution_options(synchronize_session=False)
        )
        if taken.rowcount == 1:  # type: ignore[attr-defined]
            return True
        if session.get(Lease, name) is not None:
            return False
    try:
        with factory() as session, session.begin():
            session.add(Lease(name=name, owner=owner, expires_at=now + ttl))
        return True
    except IntegrityError:  # another worker created it first
        return False


def release(factory: sessionmaker[Session], name: str, owner: str) -> None:
    with factory() as session, session.begin():
        session.execute(delete(Lease).where(Lease.name == name, Lease.owner == owner))


def holder(session: Session, name: str, now: datetime) -> str | None:
    lease = session.scalar(select(Lease).where(Lease.name == name, Lease.expires_at >= now))
    return lease.owner if lease else None


@contextmanager
def held(
    factory: sessionmaker[Session],
    name: str,
    owner: str,
    ttl: timedelta,
    clock: Callable[[], datetime] = utcnow,
) -> Iterator[bool]:
    """Hold a lease for the duration of a block, renewing it in the background; yields
    whether it was obtained (the block should skip its work if not)."""
    if not claim(factory, name, owner, ttl, clock()):
        yield False
        return
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(ttl.total_seconds() / 3):
            claim(factory, name, owner, ttl, clock())

    renewer = threading.Thread(target=renew, name=f"lease {name}", daemon=True)
    renewer.start()
    try:
        yield True
    finally:
        stop.set()
        renewer.join(timeout=5)
        release(factory, name, owner)
