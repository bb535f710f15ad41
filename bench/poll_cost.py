"""What polling the whole default catalog costs, with and without a GitHub token.

Every project of service/data/catalog.toml gets a small synthetic history in the fake
GitHub; after a backfill, prints API requests, github.com (Atom) requests and rate-limit
units for an idle cycle, an idle hour (4 cycles at the default 15-minute interval), and a
cycle in which one project publishes a release. Run: ``python -m bench.poll_cost``.
"""

from __future__ import annotations

import argparse
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from connectors.feeds import FeedClient
from service.catalog import load_catalog
from service.config import Settings
from service.database import make_engine, make_session_factory, transaction
from service.migrate import upgrade
from service.projects.catalog_import import import_catalog
from service.sync.service import ProjectSyncer
from tests.conftest import TOKEN, make_test_client
from tests.fake_github import FakeGitHub

START = datetime(2026, 9, 1, tzinfo=UTC)


def fill(fake: FakeGitHub, repos: list[str]) -> None:
    for index, name in enumerate(repos):
        repo = fake.repo(name)
        repo.commit("initial", committed_at=START)
        for number in range(1, 6):
            repo.merge_pull(
                number, f"[Core] change {number}", merged_at=START + timedelta(hours=number)
            )
        repo.release(f"v1.{index}.0", published_at=START + timedelta(hours=7))


def cost(fake: FakeGitHub) -> tuple[int, int, int]:
    api = [r for r in fake.requests if r.path.startswith("/repos/")]
    web = [r for r in fake.requests if r.path.endswith(".atom")]
    return len(api), len(web), sum(r.cost for r in fake.requests)


def measure(with_token: bool) -> None:
    catalog = load_catalog()
    repos = [p.repo for p in catalog.projects]
    with tempfile.TemporaryDirectory() as tmp, FakeGitHub(token=TOKEN) as fake:
        fake.web_url = fake.base_url
        fake.set_time(datetime(2026, 10, 1, tzinfo=UTC))
        fill(fake, repos)
        url = f"sqlite:///{Path(tmp) / 'poll.sqlite3'}"
        engine = make_engine(url)
        upgrade(engine)
        factory = make_session_factory(engine)
        with transaction(factory) as session:
            import_catalog(session, catalog)
        base = Settings(
            database_url=url,
            github_api_url=fake.base_url,
            github_web_url=fake.base_url,
            github_token=TOKEN,
            backfill_days=3650,
        )
        settings = base if with_token else base.model_copy(update={"github_token": None})
        with make_test_client(fake) as client, FeedClient() as feeds:
            backfill = ProjectSyncer(factory, base, client, clock=fake.now, feeds=feeds)
            assert all(backfill.sync(r).ok for r in repos)
        label = "with a token" if with_token else "without a token"
        token = TOKEN if with_token else None
        with make_test_client(fake, token=token) as client, FeedClient() as feeds:
            syncer = ProjectSyncer(factory, settings, client, clock=fake.now, feeds=feeds)
            fake.reset_log()
            fake.advance(900)
            assert all(syncer.sync(r).ok for r in repos)
            api, web, units = cost(fake)
            print(
                f"{label}: idle cycle over {len(repos)} projects: {api} API requests "
                f"({api / len(repos):.2f}/project), {web} Atom requests, {units} rate-limit units"
            )
            fake.reset_log()
            for _ in range(4):
                fake.advance(900)
                assert all(syncer.sync(r).ok for r in repos)
            api, web, units = cost(fake)
            print(
                f"{label}: idle hour (4 cycles): {api} API requests, {web} Atom requests, "
                f"{units} rate-limit units (budget without a token: 60/hour)"
            )
            fake.reset_log()
            fake.repo(repos[0]).release("v9.9.9", published_at=fake.now())
            fake.advance(900)
            assert all(syncer.sync(r).ok for r in repos)
            api, web, units = cost(fake)
            needed = sorted({r.path for r in fake.requests if r.path.startswith("/repos/")})
            print(
                f"{label}: cycle with one new release: {api} API requests, {web} Atom "
                f"requests, {units} rate-limit units; API paths: {needed}"
            )
        engine.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.parse_args()
    measure(with_token=True)
    measure(with_token=False)
