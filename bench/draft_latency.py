"""Draft latency over a large store (DESIGN §8: p95 ≤ 50 ms over 1,000,000 changes).

Generates a store of synthetic but realistic history — by default 1,000,000 merged pull
requests and 20,000 releases over 200 projects and 5 years, bulk-inserted through
SQLAlchemy Core (COPY on PostgreSQL) — then builds the week draft of random 7-day windows
and prints p50/p95 of the JSON draft (build_draft + json.dumps) and of the Markdown digest
(build_draft + render_markdown), the time spent in SQL, and the ratio to a bare indexed
SELECT of the same rows. Then it times ``GET /v1/digests/draft`` through the app with its
draft cache: the first request of a window, the same request again, and one after an
editor's curation. It prints the query plan of every query of one draft (EXPLAIN QUERY
PLAN on SQLite, EXPLAIN ANALYZE on PostgreSQL).

Run from the repository root: ``python -m bench.draft_latency [--database both]``.
"""

from __future__ import annotations

import argparse
import bisect
import csv
import json
import random
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from fastapi.testclient import TestClient
from sqlalchemy import Connection, Engine, and_, delete, event, func, or_, select, update
from sqlalchemy.orm import Session

from bench.stores import add_database_option, percentile, selected, server_version, store
from service.analysis import analysis_columns, refresh_stale, release_analysis_columns
from service.app import create_app
from service.auth import service as tokens
from service.auth.models import ApiToken
from service.changes.models import Change
from service.config import Settings
from service.curation.models import CurationAction
from service.database import make_session_factory, transaction
from service.digests.render import render_markdown
from service.digests.service import (
    build_draft,
    version_table,
    windowed_changes,
    windowed_releases,
)
from service.projects.models import Project
from service.releases.models import Release
from service.themes import Taxonomy, default_taxonomy
from service.versions import is_prerelease, parse_tag
from service.windows import Window

TITLES_FILE = Path(__file__).resolve().parent.parent / "tests" / "data" / "labelled_titles.tsv"
START = datetime(2021, 10, 1, tzinfo=UTC)
BATCH = 10_000
CATEGORIES = ("inference", "kernels", "model-library", "training", "workflows")
LABELS = (
    ("bug",),
    ("documentation",),
    ("ready",),
    ("ci/build",),
    ("performance",),
    ("breaking-change",),
)
CLAIMS = (
    "This improves E2E throughput by 9.8% on H100.",
    "TTFT goes from 5.9s to 26ms with prefix caching.",
    "Decode is 1.5-2x faster for long contexts.",
)


@dataclass
class Shape:
    projects: int
    changes: int
    releases: int
    years: int
    seed: int


def load_titles() -> list[str]:
    with TITLES_FILE.open(encoding="utf-8") as handle:
        return [row["title"] for row in csv.DictReader(handle, delimiter="\t")]


# --- generation ----------------------------------------------------------------------


def release_tags(count: int, rng: random.Random) -> list[str]:
    """Tags of one project's history, oldest first: minor lines, some with RCs, patches."""
    tags: list[str] = []
    major, minor = 0, 0
    while len(tags) < count:
        minor += 1
        if minor > 30:
            major, minor = major + 1, 0
        line = f"{major}.{minor}"
        if rng.random() < 0.4:
            tags.extend(f"v{line}.0rc{n}" for n in range(1, rng.randint(1, 3) + 1))
        tags.append(f"v{line}.0")
        tags.extend(f"v{line}.{patch}" for patch in range(1, rng.randint(0, 2) + 1))
    return tags[:count]


def release_body(titles: list[str], rng: random.Random, first_number: int) -> str:
    lines = ["## What's Changed"]
    lines += [
        f"* {rng.choice(titles)} by @dev in https://github.com/x/y/pull/{first_number + i}"
        for i in range(rng.randint(5, 20))
    ]
    if rng.random() < 0.1:
        lines += ["", "## Breaking Changes", "* `--legacy-scheduler` was removed"]
    if rng.random() < 0.2:
        lines += ["", rng.choice(CLAIMS)]
    return "\n".join(lines)


def spread(count: int, span: timedelta, rng: random.Random) -> list[datetime]:
    seconds = span.total_seconds()
    return sorted(START + timedelta(seconds=rng.random() * seconds) for _ in range(count))


def project_weights(count: int, rng: random.Random) -> list[float]:
    """Uneven activity: a few busy projects and a long tail, as in the real catalog."""
    raw = [1.0 / (rank + 1) ** 0.6 for rank in range(count)]
    rng.shuffle(raw)
    total = sum(raw)
    return [w / total for w in raw]


def split(total: int, weights: list[float]) -> list[int]:
    counts = [int(total * w) for w in weights]
    for index in range(total - sum(counts)):
        counts[index % len(counts)] += 1
    return counts


@dataclass
class Generated:
    seconds: float = 0.0
    changes: int = 0
    releases: int = 0
    linked: int = 0


@cache
def analysed(title: str, labels: tuple[str, ...], body: str, category: str) -> dict[str, Any]:
    row = {"title": title, "labels": list(labels), "body": body}
    return analysis_columns(row, category, default_taxonomy())


def generate(engine: Engine, shape: Shape) -> Generated:
    rng = random.Random(shape.seed)
    titles = load_titles()
    span = timedelta(days=365 * shape.years)
    started = time.perf_counter()
    stats = Generated()
    weights = project_weights(shape.projects, rng)
    change_counts = split(shape.changes, weights)
    release_counts = split(shape.releases, [1 / shape.projects] * shape.projects)
    writer = CopyWriter(engine) if engine.dialect.name == "postgresql" else CoreWriter(engine)
    with writer:
        projects = [
            {
                "id": index + 1,
                "repo": f"bench-org{index % 20}/project-{index}",
                "repo_key": f"bench-org{index % 20}/project-{index}",
                "name": f"Project {index}",
                "category": CATEGORIES[index % len(CATEGORIES)],
                "default_branch": "main",
                "enabled": True,
                "added_at": START,
            }
            for index in range(shape.projects)
        ]
        writer.write(Project, projects)
        release_id = change_id = 0
        for project in projects:
            pid = project["id"]
            web = f"https://github.com/{project['repo']}"
            tags = release_tags(release_counts[pid - 1], rng)
            published = spread(len(tags), span, rng)
            releases = []
            for tag, moment in zip(tags, published, strict=True):
                release_id += 1
                parsed = parse_tag(tag)
                releases.append(
                    {
                        "id": release_id,
                        "project_id": pid,
                        "github_id": pid * 1_000_000 + release_id,
                        "tag": tag,
                        "version": parsed.version,
                        "version_line": parsed.line,
                        "name": tag,
                        "published_at": moment,
                        "created_at": moment - timedelta(hours=1),
                        "prerelease": is_prerelease(tag, "rc" in tag),
                        "github_prerelease": "rc" in tag,
                        "url": f"{web}/releases/tag/{tag}",
                        "body": release_body(titles, rng, release_id * 10),
                        "tag_commit_sha": f"{rng.getrandbits(160):040x}",
                        "target_commitish": "main",
                    }
                )
            for release in releases:
                release.update(release_analysis_columns(release, default_taxonomy()))
            writer.write(Release, releases)
            stats.releases += len(releases)
            any_times = [r["published_at"] for r in releases]
            stable = [r for r in releases if not r["prerelease"]]
            stable_times = [r["published_at"] for r in stable]
            rows: list[dict[str, Any]] = []
            for number, merged in enumerate(spread(change_counts[pid - 1], span, rng), 1):
                change_id += 1
                first = first_stable = None
                if rng.random() < 0.15:
                    at = bisect.bisect_right(any_times, merged)
                    first = releases[at]["id"] if at < len(releases) else None
                    at = bisect.bisect_right(stable_times, merged)
                    first_stable = stable[at]["id"] if at < len(stable) else None
                    stats.linked += first is not None
                title = rng.choice(titles)
                row = {
                    "id": change_id,
                    "project_id": pid,
                    "github_id": pid * 10_000_000 + number,
                    "number": number,
                    "title": title,
                    "body": rng.choice(CLAIMS) if rng.random() < 0.05 else "",
                    "author": f"dev{rng.randint(1, 400)}",
                    "labels": list(rng.choice(LABELS)) if rng.random() < 0.3 else [],
                    "merged_at": merged,
                    "merge_commit_sha": f"{rng.getrandbits(160):040x}",
                    "base_branch": "main",
                    "url": f"{web}/pull/{number}",
                    "github_updated_at": merged,
                    "first_release_id": first,
                    "first_stable_release_id": first_stable,
                }
                # what the sync stores with each change (service.analysis), memoised here
                # only because the generated titles, bodies and labels repeat
                row.update(analysed(title, tuple(row["labels"]), row["body"], project["category"]))
                rows.append(row)
                if len(rows) >= BATCH:
                    writer.write(Change, rows)
                    stats.changes += len(rows)
                    rows = []
            writer.write(Change, rows)
            stats.changes += len(rows)
        writer.finish()
    stats.seconds = time.perf_counter() - started
    return stats


class CoreWriter:
    """executemany through SQLAlchemy Core, one transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.connection: Connection | None = None

    def __enter__(self) -> CoreWriter:
        self.connection = self.engine.connect()
        self.connection.begin()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.connection is not None
        if exc[0] is None:
            self.connection.commit()
        self.connection.close()

    def write(self, model: type[Any], rows: list[dict[str, Any]]) -> None:
        if rows:
            assert self.connection is not None
            self.connection.execute(model.__table__.insert(), rows)

    def finish(self) -> None:
        assert self.connection is not None
        self.connection.exec_driver_sql("ANALYZE")


class CopyWriter(CoreWriter):
    """COPY ... FROM STDIN through psycopg: several times faster than INSERTs."""

    def write(self, model: type[Any], rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        assert self.connection is not None
        table = model.__table__
        columns = list(rows[0])
        cursor = self.connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
        statement = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN"
        with cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row([json.dumps(v) if isinstance(v, list) else v for v in row.values()])

    def finish(self) -> None:
        assert self.connection is not None
        for table in ("projects", "releases", "changes"):
            self.connection.exec_driver_sql(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT max(id) FROM {table}))"
            )
        self.connection.commit()
        self.connection.begin()
        self.connection.exec_driver_sql("ANALYZE")


# --- measuring -----------------------------------------------------------------------


@dataclass
class SqlTimer:
    """Cursor time and statements of the queries run on an engine while recording."""

    seconds: float = 0.0
    statements: list[tuple[str, Any]] = field(default_factory=list)
    record_statements: bool = False
    _started: float = 0.0

    def before(self, _conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        self._started = time.perf_counter()
        if self.record_statements:
            self.statements.append((statement, params))

    def after(self, *_: Any) -> None:
        self.seconds += time.perf_counter() - self._started


@contextmanager
def timed_sql(engine: Engine) -> Iterator[SqlTimer]:
    timer = SqlTimer()
    event.listen(engine, "before_cursor_execute", timer.before)
    event.listen(engine, "after_cursor_execute", timer.after)
    try:
        yield timer
    finally:
        event.remove(engine, "before_cursor_execute", timer.before)
        event.remove(engine, "after_cursor_execute", timer.after)


def random_weeks(engine: Engine, count: int, rng: random.Random) -> list[Window]:
    with engine.connect() as connection:
        first, last = connection.execute(
            select(func.min(Change.merged_at), func.max(Change.merged_at))
        ).one()
    first = Change.__table__.c.merged_at.type.process_result_value(first, engine.dialect)
    last = Change.__table__.c.merged_at.type.process_result_value(last, engine.dialect)
    days = (last - first).days - 7
    weeks = []
    for _ in range(count):
        day = (first + timedelta(days=rng.randint(0, days))).replace(
            hour=0, minute=0, second=0, microsecond=0
        )
        weeks.append(Window(day, day + timedelta(days=7)))
    return weeks


def bare_select(connection: Connection, window: Window) -> int:
    """The draft's rows without the ORM and the digest logic: releases of the window, then
    the changes merged in it or first shipped by one of those releases."""
    releases = Release.__table__
    changes = Change.__table__
    release_ids = list(
        connection.execute(
            select(releases.c.id).where(
                releases.c.published_at >= window.start, releases.c.published_at < window.end
            )
        ).scalars()
    )
    condition = and_(changes.c.merged_at >= window.start, changes.c.merged_at < window.end)
    if release_ids:
        condition = or_(
            condition,
            and_(
                changes.c.merged_at < window.start,
                or_(
                    changes.c.first_release_id.in_(release_ids),
                    changes.c.first_stable_release_id.in_(release_ids),
                ),
            ),
        )
    rows = connection.execute(
        select(
            changes.c.id,
            changes.c.project_id,
            changes.c.number,
            changes.c.title,
            changes.c.merged_at,
            changes.c.first_release_id,
            changes.c.first_stable_release_id,
        ).where(condition)
    ).all()
    return len(rows) + len(release_ids)


def orm_load(session: Session, window: Window) -> int:
    """The draft's own queries (releases, version table, changes) through the ORM, without
    the digest logic (classification, scores, curation, grouping)."""
    releases = windowed_releases(session, window, None)
    version_table(session, releases, window)
    changes = windowed_changes(session, window, [r.id for r, _ in releases], None)
    return len(releases) + len(changes)


def draft_json(session: Session, window: Window, taxonomy: Taxonomy) -> dict[str, Any]:
    result = build_draft(session, window, taxonomy=taxonomy)
    orjson.dumps(result)  # as the draft endpoint serialises it
    return result


def draft_markdown(session: Session, window: Window, taxonomy: Taxonomy) -> str:
    return render_markdown(build_draft(session, window, taxonomy=taxonomy), "zh", taxonomy)


def explain(engine: Engine, window: Window, taxonomy: Taxonomy) -> None:
    """Print the plan of each distinct query of one draft (the first of repeated ones)."""
    factory = make_session_factory(engine)
    with timed_sql(engine) as timer, factory() as session:
        timer.record_statements = True
        build_draft(session, window, taxonomy=taxonomy)
    seen: dict[str, int] = {}
    firsts: list[tuple[str, Any]] = []
    for statement, params in timer.statements:
        if statement not in seen:
            firsts.append((statement, params))
        seen[statement] = seen.get(statement, 0) + 1
    postgres = engine.dialect.name == "postgresql"
    prefix = "EXPLAIN (ANALYZE, BUFFERS)" if postgres else "EXPLAIN QUERY PLAN"
    with engine.connect() as connection:
        for statement, params in firsts:
            print(f"\n-- query run {seen[statement]}x per draft:")
            print("   " + " ".join(statement.split())[:400])
            for row in connection.exec_driver_sql(f"{prefix} {statement}", params):
                print("   " + " | ".join(str(value) for value in row if value is not None))


def measure(engine: Engine, weeks: list[Window], taxonomy: Taxonomy) -> dict[str, float]:
    factory = make_session_factory(engine)
    with factory() as session:  # warm caches and the taxonomy's compiled patterns
        draft_json(session, weeks[0], taxonomy)
    json_ms: list[float] = []
    md_ms: list[float] = []
    select_ms: list[float] = []
    load_ms: list[float] = []
    items: list[int] = []
    for window in weeks:
        with factory() as session:
            started = time.perf_counter()
            result = draft_json(session, window, taxonomy)
            json_ms.append((time.perf_counter() - started) * 1000)
        items.append(result["counts"]["changes"] + result["counts"]["noise_hidden"])
        with factory() as session:
            started = time.perf_counter()
            draft_markdown(session, window, taxonomy)
            md_ms.append((time.perf_counter() - started) * 1000)
        with engine.connect() as connection:
            started = time.perf_counter()
            bare_select(connection, window)
            select_ms.append((time.perf_counter() - started) * 1000)
        with factory() as session:
            started = time.perf_counter()
            orm_load(session, window)
            load_ms.append((time.perf_counter() - started) * 1000)
    return {
        "json_p50": percentile(json_ms, 0.5),
        "json_p95": percentile(json_ms, 0.95),
        "md_p50": percentile(md_ms, 0.5),
        "md_p95": percentile(md_ms, 0.95),
        "select_p50": percentile(select_ms, 0.5),
        "select_p95": percentile(select_ms, 0.95),
        "load_p50": percentile(load_ms, 0.5),
        "load_p95": percentile(load_ms, 0.95),
        "items": statistics.mean(items),
    }


def measure_endpoint(engine: Engine, weeks: list[Window], taxonomy: Taxonomy) -> dict[str, float]:
    """``GET /v1/digests/draft`` through the app (in-process client, its draft cache on), per
    window: the first request (nothing cached), the same request again (the cached body,
    behind one read of the store generations), and a request after an editor pins an item
    (the window's cached material assembled with the new curation)."""
    url = engine.url.render_as_string(hide_password=False)
    settings = Settings(database_url=url, _env_file=None)  # type: ignore[call-arg]
    factory = make_session_factory(engine)
    with transaction(factory) as session:
        token, plain = tokens.create(session, "bench editor", tokens.Role.parse("editor"))
    app = create_app(factory, taxonomy=taxonomy, settings=settings)
    first_ms: list[float] = []
    cached_ms: list[float] = []
    curated_ms: list[float] = []
    try:
        with TestClient(app, headers={"Authorization": f"Bearer {plain}"}) as client:

            def timed_get(params: dict[str, str]) -> tuple[float, dict[str, Any]]:
                started = time.perf_counter()
                response = client.get("/v1/digests/draft", params=params)
                elapsed = (time.perf_counter() - started) * 1000
                if response.status_code != 200:
                    raise SystemExit(f"draft: {response.status_code} {response.text[:300]}")
                return elapsed, orjson.loads(response.content)

            timed_get(window_params(weeks[0]))  # warm the process
            for window in weeks[1:]:
                params = window_params(window)
                elapsed, draft = timed_get(params)
                first_ms.append(elapsed)
                cached_ms.append(timed_get(params)[0])
                item = next(i for theme in draft["themes"] for i in theme["items"])
                pinned = client.post(
                    "/v1/curation", json={**params, "action": "pin", "item": item["key"]}
                )
                if pinned.status_code != 201:
                    raise SystemExit(f"curation: {pinned.status_code} {pinned.text[:300]}")
                curated_ms.append(timed_get(params)[0])
    finally:
        with transaction(factory) as session:  # leave a kept store as it was
            session.execute(delete(CurationAction))
            session.execute(delete(ApiToken).where(ApiToken.id == token.id))
    return {
        "first_p50": percentile(first_ms, 0.5),
        "first_p95": percentile(first_ms, 0.95),
        "cached_p50": percentile(cached_ms, 0.5),
        "cached_p95": percentile(cached_ms, 0.95),
        "curated_p50": percentile(curated_ms, 0.5),
        "curated_p95": percentile(curated_ms, 0.95),
    }


def window_params(window: Window) -> dict[str, str]:
    return {
        "start": window.first_day.isoformat(),
        "end": window.last_day.isoformat(),
    }


def reanalysis_rate(engine: Engine, taxonomy: Taxonomy, count: int = 10_000) -> float:
    """Changes re-analysed per second after a taxonomy change (``refresh_stale`` in the
    worker's batches), over ``count`` changes made stale for it."""
    factory = make_session_factory(engine)
    with transaction(factory) as session:
        session.execute(update(Change).where(Change.id <= count).values(analysis_version=None))
    started = time.perf_counter()
    done = 0
    while True:
        with transaction(factory) as session:
            batch = refresh_stale(session, taxonomy, 500)
        done += batch
        if batch == 0:
            break
    return done / (time.perf_counter() - started)


def counts(engine: Engine) -> tuple[int, int]:
    with engine.connect() as connection:
        changes = connection.execute(select(func.count()).select_from(Change)).scalar_one()
        releases = connection.execute(select(func.count()).select_from(Release)).scalar_one()
    return changes, releases


def run(kind: str, engine: Engine, shape: Shape, week_count: int, plans: bool) -> None:
    print(f"\n=== {kind}: {server_version(engine)} ===")
    stored = counts(engine)
    if stored[0] == 0:
        generated = generate(engine, shape)
        print(
            f"generated {generated.changes:,} changes ({generated.linked:,} linked to a first "
            f"release) and {generated.releases:,} releases over {shape.projects} projects and "
            f"{shape.years} years in {generated.seconds:.0f} s"
        )
    else:
        print(f"reusing the store: {stored[0]:,} changes, {stored[1]:,} releases")
    taxonomy = default_taxonomy()
    weeks = random_weeks(engine, week_count, random.Random(shape.seed + 1))
    if plans:
        explain(engine, weeks[0], taxonomy)
    figures = measure(engine, weeks, taxonomy)
    print(
        f"\n{kind}: {week_count} random weeks, {figures['items']:.0f} changes per draft on "
        "average (before the noise filter)"
    )
    print(
        f"  draft JSON     p50 {figures['json_p50']:8.1f} ms  p95 {figures['json_p95']:8.1f} ms"
        f"  (target p95 <= 50 ms: {'met' if figures['json_p95'] <= 50 else 'NOT met'})"
    )
    print(
        f"  draft Markdown p50 {figures['md_p50']:8.1f} ms  p95 {figures['md_p95']:8.1f} ms"
        f"  (target p95 <= 50 ms: {'met' if figures['md_p95'] <= 50 else 'NOT met'})"
    )
    print(
        f"  bare SELECT    p50 {figures['select_p50']:8.1f} ms  p95 {figures['select_p95']:8.1f} ms"
    )
    print(
        f"  draft queries  p50 {figures['load_p50']:8.1f} ms  p95 {figures['load_p95']:8.1f} ms"
        "  (the draft's queries through the ORM, no digest logic)"
    )
    endpoint = measure_endpoint(engine, weeks, taxonomy)
    print("  GET /v1/digests/draft (in-process client, draft cache on):")
    for name, label in (
        ("first", "first request"),
        ("curated", "after a curation"),
        ("cached", "cached"),
    ):
        p95 = endpoint[f"{name}_p95"]
        print(
            f"    {label:<17} p50 {endpoint[f'{name}_p50']:8.1f} ms  p95 {p95:8.1f} ms"
            f"  (target p95 <= 50 ms: {'met' if p95 <= 50 else 'NOT met'})"
        )
    rate = reanalysis_rate(engine, taxonomy)
    print(
        f"  re-analysis after a taxonomy change: {rate:,.0f} changes/s "
        f"({1_000_000 / rate / 60:.0f} min for 1,000,000 changes, in the worker's batches)"
    )
    per_item = (figures["json_p50"] - figures["load_p50"]) / max(figures["items"], 1) * 1000
    print(
        f"  ratio draft JSON / bare SELECT (p50): "
        f"{figures['json_p50'] / max(figures['select_p50'], 1e-6):.1f}x; "
        f"digest logic after loading: ~{per_item:.0f} µs per change"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_database_option(parser)
    parser.add_argument("--changes", type=int, default=1_000_000)
    parser.add_argument("--releases", type=int, default=20_000)
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--years", type=int, default=5)
    parser.add_argument("--weeks", type=int, default=50, help="random 7-day windows to time")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-plans", action="store_true", help="skip the EXPLAIN output")
    parser.add_argument(
        "--sqlite-file",
        type=Path,
        default=None,
        help="keep (or reuse, if already filled) the SQLite store in this file",
    )
    parser.add_argument(
        "--keep-postgres", action="store_true", help="do not drop the PostgreSQL database"
    )
    parser.add_argument(
        "--postgres-database", default=None, help="reuse this (kept) PostgreSQL database"
    )
    args = parser.parse_args()
    shape = Shape(args.projects, args.changes, args.releases, args.years, args.seed)
    for kind in selected(args.database):
        if kind == "sqlite" and args.sqlite_file is not None:
            from bench.stores import sqlite_store

            with sqlite_store(args.sqlite_file) as engine:
                run(kind, engine, shape, args.weeks, not args.no_plans)
            continue
        if kind == "postgresql" and (args.keep_postgres or args.postgres_database):
            from bench.stores import postgres_store

            with postgres_store(args.keep_postgres, args.postgres_database) as engine:
                run(kind, engine, shape, args.weeks, not args.no_plans)
            continue
        with store(kind) as engine:
            run(kind, engine, shape, args.weeks, not args.no_plans)


if __name__ == "__main__":
    main()
