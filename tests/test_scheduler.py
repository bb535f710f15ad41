"""The poller: a job per project; a failing project backs off, the others carry on."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from service.config import Settings
from service.projects.models import Project
from service.scheduler import Poller, backoff_delay
from service.sync.models import SyncState
from tests.conftest import make_test_client
from tests.fake_github import FakeGitHub
from tests.store_snapshot import first_releases, track
from tests.test_sync import build_cherry_pick_repo


def cycle_states(factory: sessionmaker[Session]) -> dict[str, SyncState]:
    with factory() as session:
        rows = session.execute(
            select(Project.repo, SyncState)
            .join(SyncState, SyncState.project_id == Project.id)
            .where(SyncState.resource == "cycle")
        )
        return {repo: state for repo, state in rows}


def test_backoff_doubles_per_failure_up_to_six_hours() -> None:
    interval = timedelta(minutes=15)
    assert [backoff_delay(interval, n) for n in (1, 2, 3)] == [
        timedelta(minutes=15),
        timedelta(minutes=30),
        timedelta(minutes=60),
    ]
    assert backoff_delay(interval, 30) == timedelta(hours=6)


def test_poller_syncs_every_project_and_a_failing_one_backs_off(
    fake_github: FakeGitHub, factory: sessionmaker[Session], settings: Settings
) -> None:
    build_cherry_pick_repo(fake_github)
    track(factory, "acme/engine")
    track(factory, "acme/missing")
    settings = settings.model_copy(update={"poll_interval": 600, "poll_jitter": 0})
    poller = Poller(factory, settings, client=make_test_client(fake_github))
    poller.start()
    try:
        job = poller.scheduler.get_job(poller.job_id("acme/engine"))
        assert job is not None and job.max_instances == 1 and job.coalesce
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(cycle_states(factory)) < 2:
            time.sleep(0.05)
        while time.monotonic() < deadline and any(
            s.next_run_at is None for s in cycle_states(factory).values()
        ):
            time.sleep(0.05)
        states = cycle_states(factory)
        assert states["acme/engine"].last_success_at is not None
        assert states["acme/missing"].error_count == 1
        assert first_releases(factory)[4] == ("v1.1.0rc1", "v1.1.0")

        before = datetime.now(UTC)
        poller.run_job("acme/missing")
        states = cycle_states(factory)
        assert states["acme/missing"].error_count == 2
        delay = states["acme/missing"].next_run_at - before
        assert timedelta(minutes=19) < delay <= timedelta(minutes=21)
        missing_job = poller.scheduler.get_job(poller.job_id("acme/missing"))
        assert missing_job.next_run_time - before > timedelta(minutes=19)
        healthy = states["acme/engine"]
        assert healthy.error_count == 0
    finally:
        poller.shutdown()
