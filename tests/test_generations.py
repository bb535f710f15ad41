"""Store generations and the draft cache they guard, on SQLite and PostgreSQL: every write
to what a draft reads moves the data generation (whoever writes it), curation moves only its
own, idle polls move neither, and a draft served from the cache is never older than the
store."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text, update
from sqlalchemy.orm import Session, sessionmaker

from service.app import create_app
from service.digests.cache import DraftCache, MaterialKey
from service.generations import service as generations
from service.posts.models import Feed
from service.sync.service import ProjectSyncer
from service.windows import window_for
from tests.conftest import bearer
from tests.fake_github import FakeGitHub
from tests.test_observability import samples

WEEK = {"start": "2026-09-30", "end": "2026-10-06"}
IN_WEEK = datetime(2026, 10, 1, tzinfo=UTC)
REPO = "vllm-project/vllm"


def current(factory: sessionmaker[Session]) -> generations.Generations:
    with factory() as session:
        return generations.current(session)


@pytest.fixture
def api(factory: sessionmaker[Session]) -> Iterator[TestClient]:
    with TestClient(create_app(factory), headers=bearer(factory, "editor", "alice")) as client:
        yield client


@pytest.fixture
def synced(api: TestClient, fake_github: FakeGitHub, syncer: ProjectSyncer) -> TestClient:
    vllm = fake_github.repo(REPO)
    vllm.commit("initial", committed_at=IN_WEEK - timedelta(days=30))
    vllm.release("v0.30.0", published_at=IN_WEEK - timedelta(days=20))
    vllm.merge_pull(101, "[Model] Support Kimi K3", merged_at=IN_WEEK + timedelta(hours=2))
    vllm.release("v0.31.0", published_at=IN_WEEK + timedelta(hours=30))
    assert api.post("/v1/projects", json={"repo": REPO, "name": "vLLM"}).status_code == 201
    assert syncer.sync(REPO).ok
    return api


def numbers_in(draft: dict) -> set[int]:
    return {i["number"] for theme in draft["themes"] for i in theme["items"]}


def test_every_watched_table_has_its_triggers(engine: object) -> None:
    """A migration that rebuilds a table on SQLite drops its triggers; this catches it."""
    with engine.connect() as connection:  # type: ignore[attr-defined]
        if connection.dialect.name == "postgresql":
            rows = connection.execute(
                text("SELECT DISTINCT event_object_table FROM information_schema.triggers")
            )
        else:
            rows = connection.execute(
                text("SELECT DISTINCT tbl_name FROM sqlite_master WHERE type = 'trigger'")
            )
        with_triggers = {row[0] for row in rows}
    watched = {table for tables in generations.KINDS.values() for table in tables}
    assert watched <= with_triggers


def test_sync_moves_the_data_generation_and_an_idle_sync_moves_nothing(
    synced: TestClient, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    after_first_sync = current(factory)
    assert after_first_sync.data != generations.UNSET
    assert syncer.sync(REPO).ok  # everything answered 304
    assert current(factory) == after_first_sync


def test_curation_moves_only_its_own_generation_and_publishing_moves_the_data(
    synced: TestClient, factory: sessionmaker[Session]
) -> None:
    before = current(factory)
    response = synced.post(
        "/v1/curation",
        json={**WEEK, "action": "pin", "item": f"pr:{REPO}#101", "value": None},
    )
    assert response.status_code == 201, response.text
    curated = current(factory)
    assert curated.data == before.data
    assert curated.curation != before.curation

    assert synced.post("/v1/digests", json=WEEK).status_code == 201
    published = current(factory)
    assert published.data != curated.data
    assert published.curation == curated.curation


def test_poll_bookkeeping_on_a_feed_moves_nothing_but_a_catalog_edit_does(
    factory: sessionmaker[Session],
) -> None:
    with factory.begin() as session:
        session.add(Feed(key="blog", name="Blog", url="https://example.org/feed", projects=[]))
    added = current(factory)
    with factory.begin() as session:
        session.execute(
            update(Feed).values(
                etag='"abc"', last_checked_at=datetime.now(UTC), error_count=Feed.error_count + 1
            )
        )
    assert current(factory) == added
    with factory.begin() as session:
        session.execute(update(Feed).values(projects=[REPO]))
    assert current(factory) != added


def test_a_write_from_outside_the_service_retires_the_cached_draft(
    synced: TestClient, factory: sessionmaker[Session]
) -> None:
    first = synced.get("/v1/digests/draft", params=WEEK)
    assert first.status_code == 200
    with factory.begin() as session:
        session.execute(text("UPDATE changes SET title = 'Support Kimi K3.5' WHERE number = 101"))
    again = synced.get(
        "/v1/digests/draft", params=WEEK, headers={"If-None-Match": first.headers["etag"]}
    )
    assert again.status_code == 200
    assert again.headers["etag"] != first.headers["etag"]
    titles = {i["title"] for theme in again.json()["themes"] for i in theme["items"]}
    assert "Support Kimi K3.5" in titles


def test_draft_etag_answers_304_until_curation_or_a_sync_changes_the_draft(
    synced: TestClient, fake_github: FakeGitHub, syncer: ProjectSyncer
) -> None:
    first = synced.get("/v1/digests/draft", params=WEEK)
    assert first.status_code == 200
    etag = first.headers["etag"]
    assert first.json() == synced.get("/v1/digests/draft", params=WEEK).json()

    unchanged = synced.get("/v1/digests/draft", params=WEEK, headers={"If-None-Match": etag})
    assert unchanged.status_code == 304
    assert unchanged.content == b""
    assert unchanged.headers["etag"] == etag
    weak = synced.get("/v1/digests/draft", params=WEEK, headers={"If-None-Match": f"W/{etag}"})
    assert weak.status_code == 304
    other_format = synced.get(
        "/v1/digests/draft", params={**WEEK, "format": "md"}, headers={"If-None-Match": etag}
    )
    assert other_format.status_code == 200
    assert other_format.headers["etag"] != etag

    synced.post("/v1/curation", json={**WEEK, "action": "pin", "item": f"pr:{REPO}#101"})
    pinned = synced.get("/v1/digests/draft", params=WEEK, headers={"If-None-Match": etag})
    assert pinned.status_code == 200
    assert pinned.json()["themes"][0]["key"] == "pinned"
    assert pinned.headers["etag"] != etag

    fake_github.repo(REPO).merge_pull(
        102, "[Perf] FP8 KV cache by default", merged_at=IN_WEEK + timedelta(hours=40)
    )
    assert syncer.sync(REPO).ok
    synced_again = synced.get(
        "/v1/digests/draft", params=WEEK, headers={"If-None-Match": pinned.headers["etag"]}
    )
    assert synced_again.status_code == 200
    assert numbers_in(synced_again.json()) == {101, 102}


def test_curation_reassembles_the_cached_material_without_reading_the_store_again(
    synced: TestClient,
) -> None:
    def lookups() -> dict[tuple[str, str], float]:
        return {
            (labels[0][1], labels[1][1]): value
            for (name, labels), value in samples(synced.get("/metrics").text).items()
            if name == "digest_draft_cache_lookups_total"
        }

    synced.get("/v1/digests/draft", params=WEEK)
    synced.get("/v1/digests/draft", params=WEEK)
    assert lookups() == {("body", "miss"): 1, ("material", "miss"): 1, ("body", "hit"): 1}
    synced.post("/v1/curation", json={**WEEK, "action": "pin", "item": f"pr:{REPO}#101"})
    synced.get("/v1/digests/draft", params=WEEK)
    assert lookups() == {
        ("body", "miss"): 2,
        ("material", "miss"): 1,
        ("material", "hit"): 1,
        ("body", "hit"): 1,
    }


def key(n: int) -> MaterialKey:
    return MaterialKey(generations.Generation("e", n), window_for(**WEEK), None, "t")


def test_the_cache_keeps_the_most_recently_used_entries_within_its_bounds() -> None:
    cache = DraftCache(max_materials=2, max_body_bytes=10)
    built: list[int] = []

    def material(n: int) -> object:
        return cache.material(key(n), lambda: built.append(n) or f"material {n}")  # type: ignore[arg-type,return-value]

    for n in (1, 2, 1, 3, 1, 2):
        material(n)
    assert built == [1, 2, 3, 2]  # 2 was the least recently used when 3 came in

    body_key = object()
    assert cache.body(body_key, lambda: b"x" * 11) == b"x" * 11  # too big to keep
    assert cache.body(body_key, lambda: b"y") == b"y"


def test_concurrent_requests_for_one_entry_build_it_once() -> None:
    cache = DraftCache()
    builds = 0
    lock = threading.Lock()

    def build() -> bytes:
        nonlocal builds
        with lock:
            builds += 1
        time.sleep(0.2)
        return b"draft"

    results: list[bytes] = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.body("week", build))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert results == [b"draft"] * 8
    assert builds == 1
