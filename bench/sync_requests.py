"""Requests a sync costs against the fake GitHub: backfill, idle cycle, and a faulty run.

Prints figures (DESIGN §8): backfill requests against 1.1 × ceil(items / 100) + compares,
requests and rate-limit units per repository in an idle cycle, and whether a sync with 10%
502/503 responses and a secondary limit every 50 requests stores exactly the fault-free
result. Run from the repository root: ``python -m bench.sync_requests [--projects N]``.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from service.config import Settings
from service.database import make_engine, make_session_factory
from service.migrate import upgrade
from service.sync.service import ProjectSyncer
from tests.conftest import TOKEN, make_test_client
from tests.fake_github import FakeGitHub
from tests.store_snapshot import snapshot, track
from tests.test_sync import load_history


def synthetic_project(fake: FakeGitHub, repo: str, pulls: int, releases: int) -> None:
    project = fake.repo(repo)
    start = datetime(2026, 6, 1, tzinfo=UTC)
    project.commit("initial", committed_at=start)
    per_release = max(pulls // max(releases, 1), 1)
    for number in range(1, pulls + 1):
        project.merge_pull(
            number, f"[Core] change {number}", merged_at=start + timedelta(hours=number)
        )
        if number % per_release == 0 and number // per_release <= releases:
            project.release(
                f"v0.{number // per_release}.0",
                published_at=start + timedelta(hours=number, minutes=30),
            )


def run(projects: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeGitHub(token=TOKEN) as fake:
        fake.set_time(datetime(2026, 10, 8, tzinfo=UTC))
        data = load_history(fake)
        repos = [data["repo"]]
        for index in range(projects - 1):
            repo = f"bench/project{index}"
            synthetic_project(fake, repo, pulls=150 + 37 * index, releases=3 + index % 4)
            repos.append(repo)
        url = f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        engine = make_engine(url)
        upgrade(engine)
        factory = make_session_factory(engine)
        settings = Settings(
            database_url=url, github_api_url=fake.base_url, github_token=TOKEN, backfill_days=3650
        )
        for repo in repos:
            track(factory, repo)

        with make_test_client(fake) as client:
            syncer = ProjectSyncer(factory, settings, client, clock=fake.now)
            reports = [syncer.sync(repo) for repo in repos]
        assert all(r.ok for r in reports), [r.error for r in reports]
        backfill_requests = len(fake.requests)
        pages_needed = sum(
            math.ceil(max(r.changes_seen, 1) / 100) + math.ceil(max(r.releases_seen, 1) / 100)
            for r in reports
        )
        compares = sum(r.compares_fetched for r in reports)
        compare_requests = sum(
            1 for r in fake.requests if "/compare/" in r.path or "/commits" in r.path
        )
        list_requests = backfill_requests - compare_requests
        items = sum(r.changes_seen + r.releases_seen for r in reports)
        print(f"projects: {len(repos)}  items (merged PRs + releases): {items}")
        print(
            f"backfill: {backfill_requests} requests = {list_requests} list pages + "
            f"{compare_requests} compare/commit pages for {compares} compares"
        )
        print(
            f"backfill list pages / ceil(items/100) per resource: {list_requests}/{pages_needed}"
            f" = {list_requests / pages_needed:.2f} (target <= 1.1)"
        )
        expected = snapshot(factory)

        fake.reset_log()
        remaining_before = fake.rate_remaining()
        with make_test_client(fake) as client:
            syncer = ProjectSyncer(factory, settings, client, clock=fake.now)
            assert all(syncer.sync(repo).ok for repo in repos)
        idle = fake.requests
        not_modified = sum(1 for r in idle if r.status == 304)
        print(
            f"idle cycle: {len(idle)} requests for {len(repos)} projects = "
            f"{len(idle) / len(repos):.2f} per project, {not_modified} answered 304, "
            f"{remaining_before - fake.rate_remaining()} rate-limit units (target <= 2, 0)"
        )

        with engine.begin() as connection:
            from service.models import Base

            for table in reversed(Base.metadata.sorted_tables):
                connection.execute(table.delete())
        for repo in repos:
            track(factory, repo)
        fake.reset_log()
        fake.fail_rate = 0.10
        fake.secondary_limit_every = 50
        with make_test_client(fake, max_attempts=8) as client:
            syncer = ProjectSyncer(factory, settings, client, clock=fake.now)
            faulty = [syncer.sync(repo) for repo in repos]
            retries = client.stats.retries
        statuses = [r.status for r in fake.requests]
        same = snapshot(factory) == expected
        print(
            f"faulty backfill: {len(statuses)} requests, "
            f"{statuses.count(502) + statuses.count(503)}"
            f" answered 502/503, {statuses.count(403)} secondary limits, {retries} retries; "
            f"all passes ok: {all(r.ok for r in faulty)}; stored result equals fault-free: {same}"
        )
        engine.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--projects", type=int, default=10)
    run(parser.parse_args().projects)
