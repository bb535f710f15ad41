"""Faults of the parts around the service: PostgreSQL restarted under `digest serve`, and a
webhook receiver down for a (simulated) hour. Bounded, loopback only."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from service.config import Settings
from service.webhooks.worker import DeliveryWorker
from tests.fake_github import FakeGitHub
from tests.test_processes import digest_env, free_port, start_digest, terminate, wait_until
from tests.test_webhooks import (  # noqa: F401  (fixtures)
    FakeClock,
    Receiver,
    api,
    emit,
    hook_settings,
    make_receiver,
    receivers,
    subscribe,
)

PG_CLUSTER = ["pg_ctlcluster", "--skip-systemctl-redirect"]


def postgres(action: str) -> None:
    version = sorted(p.name for p in Path("/etc/postgresql").iterdir())[-1]
    subprocess.run([*PG_CLUSTER, version, "main", action], check=True, timeout=60)


def test_postgresql_restarted_under_serve_fails_cleanly_then_recovers(
    fake_github: FakeGitHub, settings: Settings, factory: sessionmaker[Session], tmp_path: Path
) -> None:
    if factory.kw["bind"].dialect.name != "postgresql":
        pytest.skip("this fault is PostgreSQL's")
    if shutil.which("pg_ctlcluster") is None or not Path("/etc/postgresql").exists():
        pytest.skip("no local PostgreSQL cluster to restart")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = start_digest(
        "serve",
        "--port",
        str(port),
        env=digest_env(settings, fake_github, DIGEST_POLL_INTERVAL="3600"),
        cwd=tmp_path,
        keep_stderr=True,
    )
    try:
        with httpx.Client(base_url=base, timeout=10) as http:

            def answers(path: str, status: int) -> Callable[[], bool]:
                def check() -> bool:
                    try:
                        return http.get(path).status_code == status
                    except httpx.TransportError:
                        return False

                return check

            wait_until(answers("/readyz", 200), 30, "the service to be ready")
            assert http.get("/v1/projects").status_code == 200
            postgres("stop")
            try:
                down = http.get("/v1/projects")
                assert down.status_code == 503
                assert down.json()["error"] == "database_unavailable"
                assert http.get("/readyz").status_code == 503
                assert http.get("/healthz").status_code == 200  # the process itself is up
            finally:
                postgres("start")
            wait_until(answers("/v1/projects", 200), 60, "the service to recover by itself")
            assert http.get("/readyz").status_code == 200
    finally:
        terminate(process)


def test_receiver_down_for_an_hour_gets_every_event_afterwards(
    factory: sessionmaker[Session],
    settings: Settings,
    api: TestClient,  # noqa: F811
    make_receiver: Callable[..., Receiver],  # noqa: F811
) -> None:
    defaults = settings.model_copy(
        update={"webhook_allowed_hosts": "127.0.0.1", "webhook_timeout": 2.0}
    )
    receiver = make_receiver()
    created = subscribe(api, receiver.url)
    receiver.secret = created["secret"]
    receiver.stop()  # down: connections are refused
    clock = FakeClock()
    worker = DeliveryWorker(factory, defaults, clock=clock, rng=lambda: 1.0)
    emitted = [emit(factory, f"outage-{n}", clock.now) for n in range(5)]
    attempts = 0
    hour = clock.now + timedelta(hours=1)
    while clock.now < hour:
        attempts += worker.run_pending()
        clock.advance(minutes=1)
    assert attempts >= 5  # it kept trying through the hour, with backoff
    assert receiver.received == []
    receiver.start()
    for _ in range(24 * 60):  # at most a simulated day until the next retries come due
        worker.run_pending()
        if set(receiver.accepted_ids()) == set(emitted):
            break
        clock.advance(minutes=1)
    assert receiver.accepted_ids() == emitted  # all of them, in order, each once
    assert receiver.bad_signatures == 0
