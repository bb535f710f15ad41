"""Events from syncs against the fake GitHub, on SQLite and PostgreSQL: a new RC reaches a
subscriber once, signed; re-syncs and backfills write none; the look-back; breaking changes
from release notes and PRs; a pass stopped before inclusion releases its events next time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from service.app import create_app
from service.catalog import from_options
from service.config import Settings
from service.events.models import Event
from service.projects.models import Project
from service.sync.service import ProjectSyncer
from service.webhooks.worker import DeliveryWorker
from tests.conftest import bearer
from tests.fake_github import FakeGitHub
from tests.store_snapshot import track
from tests.test_sync import build_cherry_pick_repo
from tests.test_webhooks import Receiver, hook_settings, make_receiver, receivers  # noqa: F401


def track_now(factory: sessionmaker[Session], fake: FakeGitHub, repo: str) -> None:
    """Track a project as added at the fake GitHub's current time."""
    track(factory, repo)
    with factory.begin() as session:
        session.execute(
            update(Project).where(Project.repo_key == repo.lower()).values(added_at=fake.now())
        )


def stored_events(factory: sessionmaker[Session]) -> list[tuple[str, str, bool]]:
    with factory() as session:
        return [
            (e.type, e.subject, e.ready) for e in session.scalars(select(Event).order_by(Event.id))
        ]


def test_a_new_rc_reaches_the_subscriber_once_signed_and_backfill_sends_nothing(
    fake_github: FakeGitHub,
    factory: sessionmaker[Session],
    syncer: ProjectSyncer,
    hook_settings: Settings,  # noqa: F811
    make_receiver: Callable[..., Receiver],  # noqa: F811
) -> None:
    engine = build_cherry_pick_repo(fake_github)  # releases in September: old news
    track_now(factory, fake_github, "acme/engine")
    receiver = make_receiver()
    with TestClient(create_app(factory, settings=hook_settings), headers=bearer(factory)) as api:
        created = api.post("/v1/webhooks", json={"url": receiver.url}).json()
    receiver.secret = created["secret"]
    worker = DeliveryWorker(factory, hook_settings)
    worker.start()
    try:
        assert syncer.sync("acme/engine").ok
        assert stored_events(factory) == []

        fake_github.advance(3600)
        engine.merge_pull(7, "[Quantization] FP8 <b>KV</b> cache", merged_at=fake_github.now())
        fake_github.advance(60)
        engine.release("v1.2.0rc1", prerelease=True, body="## Highlights\n- FP8 KV cache (#7)")
        assert syncer.sync("acme/engine").ok
        assert stored_events(factory) == [("release.prerelease", "acme/engine@v1.2.0rc1", True)]
        receiver.wait_for(lambda r: len(r.accepted_ids()) == 1, "the release event")

        fake_github.advance(3600)
        assert syncer.sync("acme/engine").ok  # seeing it again
        engine.edit_release("v1.2.0rc1", body="edited notes")
        assert syncer.sync("acme/engine").ok
        assert len(stored_events(factory)) == 1
    finally:
        worker.stop()
    assert len(receiver.received) == 1 and receiver.bad_signatures == 0
    event = receiver.received[0].json
    assert event["type"] == "release.prerelease"
    assert receiver.received[0].headers["webhook-id"] == event["id"]
    data = event["data"]
    assert (data["repo"], data["tag"], data["version"], data["prerelease"]) == (
        "acme/engine",
        "v1.2.0rc1",
        "1.2.0rc1",
        True,
    )
    assert data["published_at"].endswith("Z") and data["url"].endswith("/v1.2.0rc1")
    items = [item for theme in data["themes"] for item in theme["items"]]
    # #6 was merged after v1.1.0, #7 after it: both first ship in v1.2.0rc1
    assert sorted(item["number"] for item in items) == [6, 7]
    titles = {item["number"]: item["title"] for item in items}
    assert titles[7] == "[Quantization] FP8 KV cache"  # tags stripped


def test_look_back_breaking_notes_and_breaking_pull_requests(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    repo = fake_github.repo("acme/kernels")
    repo.commit("initial", committed_at=fake_github.now() - timedelta(days=10))
    added = fake_github.now()
    repo.release("v0.9.0", published_at=added - timedelta(hours=48))
    repo.release("v1.0.0", published_at=added - timedelta(hours=12))
    repo.merge_pull(3, "feat!: drop the legacy API", merged_at=added - timedelta(hours=30))
    repo.merge_pull(4, "fix: typo", merged_at=added - timedelta(hours=1))
    track_now(factory, fake_github, "acme/kernels")
    assert syncer.sync("acme/kernels").ok
    # within the 24 h look-back: v1.0.0; older, v0.9.0 and the breaking #3, are history
    assert stored_events(factory) == [("release.stable", "acme/kernels@v1.0.0", True)]

    fake_github.advance(600)
    repo.merge_pull(
        5, "[Core] remove the --legacy-cache flag", merged_at=fake_github.now(), labels=["core"]
    )
    repo.merge_pull(6, "build(deps): bump torch from 2.8 to 2.9", merged_at=fake_github.now())
    fake_github.advance(60)
    repo.release(
        "v1.1.0",
        body="### Breaking Changes\n- `--legacy-cache` has been removed\n"
        "> upstream: BREAKING everything (quoted, not ours)",
    )
    assert syncer.sync("acme/kernels").ok
    assert stored_events(factory)[1:] == [
        ("release.stable", "acme/kernels@v1.1.0", True),
        ("change.breaking", "acme/kernels@v1.1.0", True),
        ("change.breaking", "acme/kernels#5", True),
    ]
    with factory() as session:
        payloads = {e.subject: e.payload for e in session.scalars(select(Event))}
    assert payloads["acme/kernels@v1.1.0"]["data"]["breaking_changes"] == [
        "`--legacy-cache` has been removed"
    ]
    assert payloads["acme/kernels#5"]["data"]["number"] == 5
    assert syncer.sync("acme/kernels").ok
    assert len(stored_events(factory)) == 4


def test_events_of_a_pass_stopped_before_inclusion_are_released_by_the_next(
    fake_github: FakeGitHub,
    factory: sessionmaker[Session],
    syncer: ProjectSyncer,
) -> None:
    repo = fake_github.repo("acme/engine")
    repo.commit("initial", committed_at=fake_github.now() - timedelta(days=1))
    track_now(factory, fake_github, "acme/engine")
    assert syncer.sync("acme/engine").ok
    fake_github.advance(60)
    repo.merge_pull(1, "[Core] something", merged_at=fake_github.now())
    repo.release("v2.0.0rc1", prerelease=True)
    fake_github.fail_next(404, count=1)  # the next pass dies right at its first request
    assert not syncer.sync("acme/engine").ok
    assert stored_events(factory) == []
    # a pass that stored the release and was killed before inclusion: the event waits
    with factory() as session:
        project_id = session.scalar(select(Project.id))
    assert project_id is not None
    syncer._sync_releases(
        project_id, "acme/engine", _report(), from_options("acme/engine", "engine", None, None)
    )
    assert stored_events(factory) == [("release.prerelease", "acme/engine@v2.0.0rc1", False)]
    assert syncer.sync("acme/engine").ok
    assert stored_events(factory) == [("release.prerelease", "acme/engine@v2.0.0rc1", True)]
    with factory() as session:
        event = session.scalar(select(Event))
        assert event is not None and event.payload is not None
    numbers = [i["number"] for t in event.payload["data"]["themes"] for i in t["items"]]
    assert numbers == [1]


def _report() -> object:
    from service.sync.service import SyncReport

    return SyncReport(repo="acme/engine")
