"""Shared fixtures: a store on SQLite and on PostgreSQL, the fake GitHub, a wired syncer."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from connectors.feeds import FeedClient
from connectors.github import GitHubClient
from service.config import Settings
from service.database import Base, make_engine, make_session_factory
from service.migrate import upgrade
from service.sync.service import ProjectSyncer
from tests.fake_github import FakeGitHub

POSTGRES_URL = os.environ.get(
    "DIGEST_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
TOKEN = "ghp_test_token"
FAKE_NOW = datetime(2026, 10, 8, 12, 0, tzinfo=UTC)


def _postgres_engine() -> Iterator[Engine]:
    """A throw-away database on the local PostgreSQL server, dropped afterwards."""
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT", pool_pre_ping=True)
    name = f"digest_test_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # the suite must run on both databases; never skip silently
        pytest.fail(f"PostgreSQL at {POSTGRES_URL} is needed for the store tests: {exc}")
    url = make_url(POSTGRES_URL).set(database=name)
    engine = make_engine(url.render_as_string(hide_password=False))
    try:
        yield engine
    finally:
        engine.dispose()
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def engine(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("store") / "digest.sqlite3"
        sqlite_engine = make_engine(f"sqlite:///{path}")
        upgrade(sqlite_engine)
        yield sqlite_engine
        sqlite_engine.dispose()
    else:
        for postgres_engine in _postgres_engine():
            upgrade(postgres_engine)
            yield postgres_engine


@pytest.fixture
def factory(engine: Engine) -> Iterator[sessionmaker[Session]]:
    """A session factory on an empty store (every table emptied before the test)."""
    with engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())
    yield make_session_factory(engine)


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(token=TOKEN)
    fake.set_time(FAKE_NOW)
    with fake:
        fake.web_url = fake.base_url  # its github.com pages (Atom feeds) on the same server
        yield fake


@pytest.fixture
def settings(fake_github: FakeGitHub, engine: Engine, tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path,
        database_url=engine.url.render_as_string(hide_password=False),
        github_api_url=fake_github.base_url,
        github_web_url=fake_github.base_url,
        github_token=TOKEN,
        backfill_days=3650,
        _env_file=None,  # type: ignore[call-arg]
    )


def bearer(
    factory: sessionmaker[Session], role: str = "admin", name: str = "tester"
) -> dict[str, str]:
    """Authorization headers of a new token with the given role."""
    from service.auth import service as tokens

    with factory.begin() as session:
        _, plain = tokens.create(session, name, tokens.Role.parse(role))
    return {"Authorization": f"Bearer {plain}"}


def make_test_client(
    fake: FakeGitHub, token: str | None = TOKEN, **options: object
) -> GitHubClient:
    """A real client against the fake; waiting advances the fake's clock instead of sleeping."""
    return GitHubClient(
        fake.base_url,
        token,
        sleep=fake.advance,
        clock=lambda: fake.now().timestamp(),
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture
def client(fake_github: FakeGitHub) -> Iterator[GitHubClient]:
    with make_test_client(fake_github) as github:
        yield github


@pytest.fixture
def syncer(
    factory: sessionmaker[Session],
    settings: Settings,
    client: GitHubClient,
    fake_github: FakeGitHub,
) -> ProjectSyncer:
    with FeedClient() as feeds:
        yield ProjectSyncer(factory, settings, client, clock=fake_github.now, feeds=feeds)
