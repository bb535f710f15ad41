"""Peak memory of a worker syncing the whole default catalog.

The default catalog (service/data/catalog.toml, read with service.catalog) is tracked in a
fresh store; the local fake GitHub, in this process, holds a synthetic history for every
repository of it (N merged pull requests with titles from tests/data/labelled_titles.tsv and
a release every few hundred). A child process — the worker, measured alone, without the
fake — syncs every project once (backfill, then an idle cycle) and reports its peak RSS
(``getrusage`` ``ru_maxrss``) before and after.

Run from the repository root: ``python -m bench.memory [--pulls 5000] [--database both]``.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time

from sqlalchemy import Engine

from bench.ingest import NOW, fill
from bench.stores import add_database_option, selected, server_version, store
from service.catalog import load_catalog
from tests.conftest import TOKEN
from tests.fake_github import FakeGitHub


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def worker(database_url: str, api_url: str) -> None:
    """Child process: track the catalog, sync every project twice, print figures as JSON."""
    from service.config import Settings
    from service.database import make_engine, make_session_factory, transaction
    from service.projects import service as projects
    from service.scheduler import make_client
    from service.sync.service import ProjectSyncer

    settings = Settings(
        database_url=database_url,
        github_api_url=api_url,
        github_web_url=api_url,
        github_token=TOKEN,
        backfill_days=3650,
        _env_file=None,  # type: ignore[call-arg]
    )
    factory = make_session_factory(make_engine(database_url))
    specs = load_catalog().project_specs()
    with transaction(factory) as session:
        for spec in specs:
            projects.add(session, spec, exist_ok=True)
    baseline = peak_rss_mib()
    started = time.perf_counter()
    with make_client(settings) as client:
        syncer = ProjectSyncer(factory, settings, client)
        reports = [syncer.sync(spec.repo) for spec in specs]
        after_backfill = peak_rss_mib()
        backfill_seconds = time.perf_counter() - started
        idle = [syncer.sync(spec.repo) for spec in specs]
        requests = client.stats.requests
    print(
        json.dumps(
            {
                "projects": len(specs),
                "failed": [r.error for r in reports + idle if not r.ok],
                "changes": sum(r.changes_seen for r in reports),
                "releases": sum(r.releases_seen for r in reports),
                "requests": requests,
                "baseline_mib": baseline,
                "after_backfill_mib": after_backfill,
                "peak_mib": peak_rss_mib(),
                "backfill_seconds": backfill_seconds,
            }
        )
    )


def run(kind: str, engine: Engine, pulls: int, every: int) -> None:
    print(f"\n=== {kind}: {server_version(engine)} ===")
    repos = [project.repo for project in load_catalog().projects]
    rng = random.Random(9)
    with FakeGitHub(token=TOKEN) as fake:
        fake.set_time(NOW)
        fake.web_url = fake.base_url
        started = time.perf_counter()
        for repo in repos:
            fill(fake, repo, pulls, every, rng)
        print(
            f"fake GitHub: {len(repos)} catalog repositories x {pulls} merged PRs "
            f"(a release every {every}), filled in {time.perf_counter() - started:.0f} s"
        )
        url = engine.url.render_as_string(hide_password=False)
        child = subprocess.run(
            [sys.executable, "-m", "bench.memory", "--worker", url, "--api", fake.base_url],
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
    if child.returncode != 0:
        raise SystemExit(f"the worker failed:\n{child.stderr[-3000:]}")
    figures = json.loads(child.stdout.strip().splitlines()[-1])
    print(
        f"worker: {figures['projects']} projects, {figures['changes']:,} changes and "
        f"{figures['releases']:,} releases backfilled in {figures['backfill_seconds']:.0f} s "
        f"({figures['requests']} requests, failures: {len(figures['failed'])})"
    )
    print(
        f"  peak RSS: {figures['baseline_mib']:.0f} MiB after start-up, "
        f"{figures['after_backfill_mib']:.0f} MiB after the backfill, "
        f"{figures['peak_mib']:.0f} MiB after an idle cycle"
    )
    if figures["failed"]:
        print("  failures: " + "; ".join(figures["failed"][:5]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_database_option(parser)
    parser.add_argument("--pulls", type=int, default=5_000, help="merged PRs per repository")
    parser.add_argument("--release-every", type=int, default=200, help="PRs per release")
    parser.add_argument("--worker", metavar="DATABASE_URL", help=argparse.SUPPRESS)
    parser.add_argument("--api", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.api)
        return
    for kind in selected(args.database):
        with store(kind) as engine:
            run(kind, engine, args.pulls, args.release_every)


if __name__ == "__main__":
    main()
