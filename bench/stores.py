"""Stores for the benchmarks: a SQLite file in a temporary directory, or a throw-away
database on the local PostgreSQL server (created, migrated, and dropped afterwards)."""

from __future__ import annotations

import argparse
import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from service.database import make_engine
from service.migrate import upgrade

POSTGRES_URL = os.environ.get(
    "DIGEST_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
DATABASES = ("sqlite", "postgresql")


def add_database_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database",
        choices=[*DATABASES, "both"],
        default="both",
        help="which store to measure (default: both)",
    )


def selected(choice: str) -> list[str]:
    return list(DATABASES) if choice == "both" else [choice]


@contextmanager
def sqlite_store(path: Path | None = None) -> Iterator[Engine]:
    """A migrated SQLite store; in a temporary directory unless ``path`` is given."""
    with tempfile.TemporaryDirectory(prefix="digest-bench-") as tmp:
        file = path or Path(tmp) / "bench.sqlite3"
        engine = make_engine(f"sqlite:///{file}")
        try:
            upgrade(engine)
            yield engine
        finally:
            engine.dispose()


@contextmanager
def postgres_store(keep: bool = False, reuse: str | None = None) -> Iterator[Engine]:
    """A migrated throw-away database on the local PostgreSQL, dropped unless ``keep``;
    ``reuse`` names an existing (kept) database instead, which is left in place."""
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    name = reuse or f"digest_bench_{uuid.uuid4().hex[:12]}"
    keep = keep or reuse is not None
    if reuse is None:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_URL).set(database=name)
    engine = make_engine(url.render_as_string(hide_password=False))
    try:
        upgrade(engine)
        yield engine
    finally:
        engine.dispose()
        if keep:
            print(f"kept PostgreSQL database {name}")
        else:
            with admin.connect() as connection:
                connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def store(kind: str) -> Iterator[Engine]:
    manager = sqlite_store() if kind == "sqlite" else postgres_store()
    with manager as engine:
        yield engine


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def server_version(engine: Engine) -> str:
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            return "SQLite " + str(connection.exec_driver_sql("select sqlite_version()").scalar())
        return str(connection.exec_driver_sql("show server_version").scalar()).join(
            ("PostgreSQL ", "")
        )
