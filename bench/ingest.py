"""Ingest rate: merged pull requests upserted per second through the real sync path.

A ProjectSyncer (connector, normalisation, upserts, events, release inclusion) syncs
projects of the local fake GitHub holding N synthetic merged pull requests (titles from
tests/data/labelled_titles.tsv) and a release every few hundred. Three passes are timed:
the first sync (backfill), a re-sync with the stored ETags and high-water marks cleared
(every page fetched and upserted again, rows unchanged), and an idle cycle (304s). The
fake GitHub runs in this process, so its page rendering is included in the wall time.

Run from the repository root: ``python -m bench.ingest [--pulls 20000] [--database both]``.
"""

from __future__ import annotations

import argparse
import csv
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, delete, func, select

from bench.stores import add_database_option, selected, server_version, store
from service.changes.models import Change
from service.config import Settings
from service.database import make_session_factory
from service.sync.models import HttpValidator, SyncState
from service.sync.service import ProjectSyncer
from tests.conftest import TOKEN, make_test_client
from tests.fake_github import FakeGitHub
from tests.store_snapshot import track

TITLES = "tests/data/labelled_titles.tsv"
NOW = datetime(2026, 10, 8, tzinfo=UTC)


def titles() -> list[str]:
    with open(TITLES, encoding="utf-8") as handle:
        return [row["title"] for row in csv.DictReader(handle, delimiter="\t")]


def fill(fake: FakeGitHub, repo: str, pulls: int, every: int, rng: random.Random) -> None:
    """``pulls`` squash-merged PRs over the year before NOW, a release every ``every``."""
    project = fake.repo(repo)
    start = NOW - timedelta(days=365)
    step = timedelta(days=360) / max(pulls, 1)
    project.commit("initial", committed_at=start)
    pool = titles()
    for number in range(1, pulls + 1):
        merged = start + step * number
        labels = ["bug"] if rng.random() < 0.2 else []
        project.merge_pull(number, rng.choice(pool), merged_at=merged, labels=labels)
        if number % every == 0:
            project.release(f"v0.{number // every}.0", published_at=merged + timedelta(minutes=5))


@dataclass
class Pass:
    seconds: float
    changes: int
    requests: int

    def line(self, name: str) -> str:
        rate = self.changes / self.seconds if self.seconds else 0.0
        return (
            f"  {name:<32} {self.seconds:7.2f} s  {self.changes:7d} changes  "
            f"{rate:9.0f} changes/s  {self.requests:5d} requests"
        )


def timed_pass(fake: FakeGitHub, syncer: ProjectSyncer, repos: list[str], changes: int) -> Pass:
    fake.reset_log()
    started = time.perf_counter()
    reports = [syncer.sync(repo) for repo in repos]
    elapsed = time.perf_counter() - started
    failed = [r.error for r in reports if not r.ok]
    if failed:
        raise SystemExit(f"sync failed: {failed}")
    return Pass(elapsed, changes, len(fake.requests))


def run(kind: str, engine: Engine, pulls: int, projects: int, every: int) -> None:
    print(f"\n=== {kind}: {server_version(engine)} ===")
    factory = make_session_factory(engine)
    rng = random.Random(3)
    with FakeGitHub(token=TOKEN) as fake:
        fake.set_time(NOW)
        fake.web_url = fake.base_url
        repos = [f"bench/ingest{index}" for index in range(projects)]
        started = time.perf_counter()
        for repo in repos:
            fill(fake, repo, pulls // projects, every, rng)
            track(factory, repo)
        print(
            f"fake GitHub filled with {pulls} merged PRs in {time.perf_counter() - started:.1f} s"
        )
        settings = Settings(
            database_url=engine.url.render_as_string(hide_password=False),
            github_api_url=fake.base_url,
            github_web_url=fake.base_url,
            github_token=TOKEN,
            backfill_days=3650,
            _env_file=None,  # type: ignore[call-arg]
        )
        with make_test_client(fake) as client:
            syncer = ProjectSyncer(factory, settings, client, clock=fake.now)
            first = timed_pass(fake, syncer, repos, pulls)
            with factory.begin() as session:
                stored = session.scalar(select(func.count()).select_from(Change))
                session.execute(delete(HttpValidator))
                session.execute(delete(SyncState))
            again = timed_pass(fake, syncer, repos, pulls)
            idle = timed_pass(fake, syncer, repos, 0)
    print(f"{projects} project(s), {stored} changes stored")
    print(first.line("first sync (backfill)"))
    print(again.line("re-sync (validators cleared)"))
    print(idle.line("idle cycle (all 304)"))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_database_option(parser)
    parser.add_argument("--pulls", type=int, default=20_000, help="merged PRs in all")
    parser.add_argument("--projects", type=int, default=4)
    parser.add_argument("--release-every", type=int, default=250, help="PRs per release")
    args = parser.parse_args()
    for kind in selected(args.database):
        with store(kind) as engine:
            run(kind, engine, args.pulls, args.projects, args.release_every)


if __name__ == "__main__":
    main()
