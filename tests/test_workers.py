"""Several workers on one store: leases so nothing is polled twice at once, a worker killed
with SIGKILL losing its leases to the others, and SQLite staying single-worker."""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from service.config import Settings
from service.leases import service as leases
from service.scheduler import Poller
from service.sync.service import ProjectSyncer
from tests.conftest import make_test_client
from tests.fake_github import FakeGitHub
from tests.store_snapshot import snapshot, track
from tests.test_processes import digest_env, start_digest, terminate, wait_until
from tests.test_sync import load_history

NOW = datetime(2026, 10, 8, tzinfo=UTC)
TTL = timedelta(seconds=30)


def test_a_lease_is_held_by_one_worker_until_released_or_expired(
    factory: sessionmaker[Session],
) -> None:
    assert leases.claim(factory, "project:a/b", "w1", TTL, NOW)
    assert not leases.claim(factory, "project:a/b", "w2", TTL, NOW)
    assert leases.claim(factory, "project:a/b", "w1", TTL, NOW + timedelta(seconds=5))  # renewal
    assert not leases.claim(factory, "project:a/b", "w2", TTL, NOW + timedelta(seconds=34))
    # w1 died: once its lease has expired, w2 takes over
    assert leases.claim(factory, "project:a/b", "w2", TTL, NOW + timedelta(seconds=36))
    leases.release(factory, "project:a/b", "w1")  # not the holder: nothing happens
    assert not leases.claim(factory, "project:a/b", "w1", TTL, NOW + timedelta(seconds=37))
    leases.release(factory, "project:a/b", "w2")
    assert leases.claim(factory, "project:a/b", "w1", TTL, NOW + timedelta(seconds=38))


def build_projects(fake: FakeGitHub, count: int) -> list[str]:
    repos = []
    for index in range(count):
        repo = fake.repo(f"team/p{index:02d}")
        repo.commit("initial", committed_at=NOW - timedelta(days=30))
        for number in range(1, 4):
            repo.merge_pull(
                number, f"[Core] change {number}", merged_at=NOW - timedelta(days=20 - number)
            )
        repo.release("v1.0.0", published_at=NOW - timedelta(days=10))
        repos.append(repo.full_name)
    return repos


def test_two_workers_split_twenty_projects_and_no_request_is_made_twice(
    fake_github: FakeGitHub, factory: sessionmaker[Session], settings: Settings
) -> None:
    repos = build_projects(fake_github, 20)
    for repo in repos:
        track(factory, repo)
    fake_github.latency = 0.005  # long enough for the two workers to meet on a project
    workers = [
        Poller(factory, settings, client=make_test_client(fake_github), clock=fake_github.now)
        for _ in range(2)
    ]
    done: list[str] = []

    def work(poller: Poller) -> None:
        for repo in repos:
            report = poller.run_job(repo)
            if report is not None:
                assert report.ok, report.error
                done.append(repo)

    threads = [threading.Thread(target=work, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for poller in workers:
        poller.client.close()
    assert sorted(done) == sorted(repos)  # each project synced once, by one of the two
    requests = Counter(
        (r.method, r.path, tuple(sorted(r.query.items()))) for r in fake_github.requests
    )
    assert [key for key, count in requests.items() if count > 1] == []


def test_sqlite_mode_refuses_a_second_worker(
    fake_github: FakeGitHub, factory: sessionmaker[Session], settings: Settings, engine: object
) -> None:
    if factory.kw["bind"].dialect.name != "sqlite":
        pytest.skip("PostgreSQL takes any number of workers")
    first = Poller(factory, settings, client=make_test_client(fake_github))
    second = Poller(factory, settings, client=make_test_client(fake_github))
    first.start()
    try:
        with pytest.raises(RuntimeError, match="SQLite mode runs one worker"):
            second.start()
    finally:
        first.shutdown()
        second.client.close()
    third = Poller(factory, settings, client=make_test_client(fake_github))
    third.start()  # the first released the store when it stopped
    third.shutdown()


def test_a_worker_killed_mid_sync_loses_its_lease_and_another_finishes_the_same_result(
    fake_github: FakeGitHub,
    factory: sessionmaker[Session],
    settings: Settings,
    syncer: ProjectSyncer,
    tmp_path: Path,
) -> None:
    if factory.kw["bind"].dialect.name != "postgresql":
        pytest.skip("several workers need PostgreSQL")
    load_history(fake_github)
    track(factory, "tile-ai/tilelang")
    assert syncer.sync("tile-ai/tilelang").ok
    expected = snapshot(factory)
    with factory.begin() as session:
        from sqlalchemy import delete

        from service.projects.models import Project

        session.execute(delete(Project))
    track(factory, "tile-ai/tilelang")

    env = digest_env(settings, fake_github, DIGEST_LEASE_SECONDS="5", DIGEST_POLL_INTERVAL="3600")
    fake_github.latency = 0.02
    fake_github.reset_log()
    first = start_digest("worker", env=env, cwd=tmp_path)
    try:
        wait_until(lambda: len(fake_github.requests) >= 8, 60, "the first worker to be mid-sync")
        first.send_signal(signal.SIGKILL)
    finally:
        first.wait(timeout=10)
    killed_at = time.monotonic()
    fake_github.latency = 0.0
    second = start_digest("worker", env=env, cwd=tmp_path, keep_stderr=True)
    try:
        wait_until(lambda: snapshot(factory) == expected, 90, "the second worker to finish")
        # it waited for the dead worker's lease to expire before taking the project over
        assert time.monotonic() - killed_at >= 3
    finally:
        terminate(second)
