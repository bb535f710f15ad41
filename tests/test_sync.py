"""Sync against the fake GitHub, on SQLite and PostgreSQL: backfill, idle cycles,
release inclusion on real-shaped histories, faults and bad records."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from service.config import Settings
from service.inclusion.models import LinkMethod
from service.projects.models import Project
from service.sync.models import SyncState
from service.sync.service import ProjectSyncer
from tests.conftest import make_test_client
from tests.fake_github import FakeGitHub, FakeRepo
from tests.store_snapshot import first_releases, snapshot, track

DATA = Path(__file__).parent / "data"
T0 = datetime(2026, 9, 1, tzinfo=UTC)


def day(n: int, hour: int = 12) -> datetime:
    return T0 + timedelta(days=n, hours=hour)


def build_cherry_pick_repo(fake: FakeGitHub) -> FakeRepo:
    """main: #1, v1.0.0, #2, #4, v1.1.0rc1, #5, v1.1.0; release/1.0 carries #2 as #3 → v1.0.1."""
    repo = fake.repo("acme/engine")
    repo.commit("initial", committed_at=day(0, 1))
    repo.merge_pull(1, "[Core] first feature", merged_at=day(1))
    repo.release("v1.0.0", published_at=day(2))
    fix_sha = repo.merge_pull(2, "fix(test): repair flaky moe test", merged_at=day(3))
    repo.create_branch("release/1.0", "v1.0.0")
    backport = repo.cherry_pick(
        fix_sha,
        branch="release/1.0",
        message="fix(test): repair flaky moe test (#2) (#3)",
        committed_at=day(4),
    )
    repo.pull(
        3,
        title="[Backport] repair flaky moe test",
        merged_at=day(4),
        merge_commit_sha=backport,
        base="release/1.0",
    )
    repo.release("v1.0.1", published_at=day(5), target="release/1.0")
    repo.merge_pull(4, "[Kernel] faster attention", merged_at=day(6))
    repo.release("v1.1.0rc1", published_at=day(7), prerelease=True)
    repo.merge_pull(5, "[Bugfix] rc regression", merged_at=day(8))
    repo.release("v1.1.0", published_at=day(9))
    repo.merge_pull(6, "[Docs] after the release", merged_at=day(10))
    return repo


def test_cherry_picks_and_rc_chain_give_first_release_and_first_stable_release(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    build_cherry_pick_repo(fake_github)
    track(factory, "acme/engine")
    report = syncer.sync("acme/engine")
    assert report.ok, report.error
    assert first_releases(factory) == {
        1: ("v1.0.0", "v1.0.0"),
        # merged on main after v1.0.0; first shipped by the cherry-pick in v1.0.1
        2: ("v1.0.1", "v1.0.1"),
        3: ("v1.0.1", "v1.0.1"),
        4: ("v1.1.0rc1", "v1.1.0"),
        5: ("v1.1.0", "v1.1.0"),
        6: (None, None),
    }
    stored = snapshot(factory)
    engine = fake_github.repo("acme/engine")
    assert {r[1]: r[8] for r in stored["releases"]} == {
        tag: engine.resolve(tag) for tag in ("v1.0.0", "v1.0.1", "v1.1.0rc1", "v1.1.0")
    }
    links = set(stored["links"])
    assert ("v1.0.1", 2, LinkMethod.COMMIT_REFERENCE.value) in links
    assert ("v1.0.1", 3, LinkMethod.ANCESTRY.value) in links
    # v1.1.0rc1's range from v1.0.1 holds #2's main commit too; the earliest release wins.
    assert ("v1.1.0rc1", 2, LinkMethod.ANCESTRY.value) in links


def test_idle_cycle_is_at_most_two_requests_all_304_and_costs_no_quota(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    for index in range(3):
        repo = fake_github.repo(f"acme/p{index}")
        repo.commit("initial", committed_at=day(0))
        repo.merge_pull(10, "feat: one", merged_at=day(1))
        repo.release("v0.1.0", published_at=day(2))
        track(factory, f"acme/p{index}")
        assert syncer.sync(f"acme/p{index}").ok
    before = snapshot(factory)
    fake_github.reset_log()
    for index in range(3):
        report = syncer.sync(f"acme/p{index}")
        assert report.ok and sorted(report.not_modified) == ["pulls", "releases"]
    # per project: github.com's releases.atom (a web page, no API quota) and the pulls list
    assert len(fake_github.requests) == 6
    assert {r.status for r in fake_github.requests} == {304}
    assert sum(r.cost for r in fake_github.requests) == 0
    paths = sorted(r.path for r in fake_github.requests)
    assert paths == sorted(
        [f"/acme/p{i}/releases.atom" for i in range(3)]
        + [f"/repos/acme/p{i}/pulls" for i in range(3)]
    )
    assert snapshot(factory) == before


def test_pull_paging_stops_at_the_high_water_mark(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    repo = fake_github.repo("acme/busy")
    repo.commit("initial", committed_at=day(0))
    for number in range(1, 251):
        repo.merge_pull(number, f"change {number}", merged_at=day(1) + timedelta(minutes=number))
    track(factory, "acme/busy")
    assert syncer.sync("acme/busy").ok
    assert len(snapshot(factory)["changes"]) == 250
    fake_github.advance(7200)
    repo.merge_pull(251, "change 251", merged_at=fake_github.now())
    fake_github.reset_log()
    assert syncer.sync("acme/busy").ok
    pull_requests = [r for r in fake_github.requests if r.path.endswith("/pulls")]
    assert len(pull_requests) == 1 and pull_requests[0].status == 200
    assert pull_requests[0].query["direction"] == "desc"
    assert pull_requests[0].query["sort"] == "updated"
    assert len(snapshot(factory)["changes"]) == 251


def test_compare_longer_than_250_commits_is_paged_to_the_end(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    repo = fake_github.repo("acme/big")
    repo.commit("initial", committed_at=day(0))
    repo.release("v1.0.0", published_at=day(1))
    for number in range(1, 301):
        repo.merge_pull(number, f"change {number}", merged_at=day(2) + timedelta(minutes=number))
    repo.release("v1.1.0", published_at=day(3))
    track(factory, "acme/big")
    assert syncer.sync("acme/big").ok
    found = first_releases(factory)
    assert len(found) == 300
    assert set(found.values()) == {("v1.1.0", "v1.1.0")}
    compare_pages = [r for r in fake_github.requests if "/compare/" in r.path]
    assert len(compare_pages) == 3  # 300 commits at 100 per page; unpaged would stop at 250


def test_nightlies_interleaved_with_release_candidates(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    repo = fake_github.repo("acme/nightly")
    repo.commit("initial", committed_at=day(0, 1))
    repo.merge_pull(1, "feat: a", merged_at=day(0, 2))
    repo.release("nightly-v0.6.0-20260901", published_at=day(0, 3), prerelease=True)
    repo.merge_pull(2, "feat: b", merged_at=day(0, 4))
    repo.create_branch("release/0.6", "main")
    repo.release("v0.6.0rc1", published_at=day(0, 5), prerelease=True, target="release/0.6")
    repo.merge_pull(3, "feat: c", merged_at=day(1, 1))
    repo.release("nightly-v0.6.0-20260902", published_at=day(1, 3), prerelease=True)
    fix = repo.merge_pull(4, "fix: d", merged_at=day(1, 4))
    repo.cherry_pick(fix, branch="release/0.6", committed_at=day(1, 5))
    repo.release("v0.6.0rc2", published_at=day(1, 6), prerelease=True, target="release/0.6")
    repo.release("v0.6.0", published_at=day(2, 1), target="release/0.6")
    repo.release("nightly-v0.7.0-20260903", published_at=day(2, 3), prerelease=True)
    track(factory, "acme/nightly")
    assert syncer.sync("acme/nightly").ok
    assert first_releases(factory) == {
        1: ("nightly-v0.6.0-20260901", "v0.6.0"),
        2: ("v0.6.0rc1", "v0.6.0"),
        3: ("nightly-v0.6.0-20260902", None),
        4: ("v0.6.0rc2", "v0.6.0"),
    }


def load_history(fake: FakeGitHub) -> dict:
    """Rebuild tilelang's real history v0.1.5 → v0.1.8 (linear, as its tags are)."""
    data = json.loads((DATA / "tilelang_history.json").read_text())
    repo = fake.repo(data["repo"])
    tags = {t["tag"]: t for t in data["tags"]}
    first_tag = data["tags"][0]
    repo.commit("history before the first tag", committed_at=first_tag["committed_at"])
    repo.release(first_tag["tag"], published_at=first_tag["tagged_at"])
    fake_sha: dict[str, str] = {}
    for commit_range in data["ranges"]:
        for commit in commit_range["commits"]:
            fake_sha[commit["sha"]] = repo.commit(
                commit["subject"], committed_at=commit["committed_at"]
            )
        tag = tags[commit_range["head"]]
        repo.release(tag["tag"], published_at=tag["tagged_at"])
    for pull in data["pulls"]:
        repo.pull(
            pull["number"],
            title=pull["title"],
            merged_at=pull["merged_at"],
            merge_commit_sha=fake_sha[pull["sha"]],
            updated_at=pull["merged_at"],
        )
    return data


def test_real_tilelang_history_first_releases_match_the_compare_ranges(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    data = load_history(fake_github)
    track(factory, data["repo"])
    report = syncer.sync(data["repo"])
    assert report.ok, report.error
    range_of_sha = {
        commit["sha"]: commit_range["head"]
        for commit_range in data["ranges"]
        for commit in commit_range["commits"]
    }
    expected = {p["number"]: range_of_sha[p["sha"]] for p in data["pulls"]}
    found = first_releases(factory)
    assert len(found) == len(expected) == 1229
    assert {number: tags[0] for number, tags in found.items()} == expected
    # every tilelang tag here is stable, so the stable chain agrees
    assert all(first == stable for first, stable in found.values())


def test_ten_percent_faults_and_secondary_limits_store_the_fault_free_result(
    fake_github: FakeGitHub, factory: sessionmaker[Session], settings: Settings
) -> None:
    load_history(fake_github)
    build_cherry_pick_repo(fake_github)
    repos = ["tile-ai/tilelang", "acme/engine"]
    for repo in repos:
        track(factory, repo)
    with make_test_client(fake_github) as client:
        clean = ProjectSyncer(factory, settings, client, clock=fake_github.now)
        assert all(clean.sync(repo).ok for repo in repos)
    expected = snapshot(factory)
    clean_requests = len(fake_github.requests)

    with factory.begin() as session:
        for project in session.scalars(select(Project)):
            session.delete(project)
    for repo in repos:
        track(factory, repo)
    fake_github.reset_log()
    fake_github.fail_rate = 0.10
    fake_github.secondary_limit_every = 50
    with make_test_client(fake_github, max_attempts=8) as client:
        faulty = ProjectSyncer(factory, settings, client, clock=fake_github.now)
        reports = [faulty.sync(repo) for repo in repos]
    assert all(r.ok for r in reports), [r.error for r in reports]
    statuses = [r.status for r in fake_github.requests]
    assert statuses.count(403) >= clean_requests // 50
    assert statuses.count(502) + statuses.count(503) > 0
    assert snapshot(factory) == expected


def test_sync_twice_changes_nothing_even_without_validators(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    build_cherry_pick_repo(fake_github)
    track(factory, "acme/engine")
    assert syncer.sync("acme/engine").ok
    before = snapshot(factory)
    with factory.begin() as session:
        from service.sync.models import HttpValidator

        session.query(HttpValidator).delete()
    report = syncer.sync("acme/engine")
    assert report.ok and report.not_modified == []
    assert snapshot(factory) == before


def test_malformed_records_are_skipped_and_the_rest_kept(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    repo = fake_github.repo("acme/messy")
    repo.commit("initial", committed_at=day(0))
    repo.merge_pull(1, "fine", merged_at=day(1))
    repo.pull(2, title="bad date", merged_at="2026-02-30T10:00:00Z", merge_commit_sha=None)
    repo.release("v1.0.0", published_at=day(2))
    repo.release("v1.0.1", published_at="not a date")
    track(factory, "acme/messy")
    report = syncer.sync("acme/messy")
    assert report.ok and report.skipped_records == 2
    stored = snapshot(factory)
    assert [r[1] for r in stored["releases"]] == ["v1.0.0"]
    assert [c[1] for c in stored["changes"]] == [1]


def test_unknown_repository_is_recorded_on_the_project_not_raised(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    track(factory, "acme/missing")
    report = syncer.sync("acme/missing")
    assert not report.ok and "not found" in (report.error or "")
    with factory() as session:
        state = session.scalars(select(SyncState).where(SyncState.resource == "cycle")).one()
        assert state.error_count == 1 and "not found" in (state.last_error or "")
    syncer.sync("acme/missing")
    with factory() as session:
        state = session.scalars(select(SyncState).where(SyncState.resource == "cycle")).one()
        assert state.error_count == 2


def test_spent_rate_limit_waits_for_reset_or_records_when_too_far(
    fake_github: FakeGitHub, factory: sessionmaker[Session], settings: Settings
) -> None:
    build_cherry_pick_repo(fake_github)
    track(factory, "acme/engine")
    fake_github.rate_limit = 3
    with make_test_client(fake_github, max_rate_limit_wait=10) as client:
        report = ProjectSyncer(factory, settings, client, clock=fake_github.now).sync("acme/engine")
    assert not report.ok and "rate limit" in (report.error or "")
    assert report.retry_at is not None and report.retry_at > fake_github.now()
    with make_test_client(fake_github, max_rate_limit_wait=7200) as client:
        report = ProjectSyncer(factory, settings, client, clock=fake_github.now).sync("acme/engine")
    assert report.ok, report.error
    assert first_releases(factory)[4] == ("v1.1.0rc1", "v1.1.0")
