"""The HTTP API over a synced store, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from service.app import create_app
from service.sync.service import ProjectSyncer
from tests.conftest import bearer
from tests.fake_github import FakeGitHub
from tests.test_sync import build_cherry_pick_repo

WEEK = {"start": "2026-09-05", "end": "2026-09-11"}


@pytest.fixture
def queued() -> list[str]:
    return []


@pytest.fixture
def api(factory: sessionmaker[Session], queued: list[str]) -> Iterator[TestClient]:
    app = create_app(factory, sync_trigger=queued.append)
    with TestClient(app, raise_server_exceptions=False, headers=bearer(factory)) as client:
        yield client


@pytest.fixture
def synced(api: TestClient, fake_github: FakeGitHub, syncer: ProjectSyncer) -> TestClient:
    build_cherry_pick_repo(fake_github)
    assert (
        api.post("/v1/projects", json={"repo": "acme/engine", "name": "Engine"}).status_code == 201
    )
    assert syncer.sync("acme/engine").ok
    return api


def test_draft_gives_each_change_its_merge_date_first_releases_and_timing(
    synced: TestClient, fake_github: FakeGitHub
) -> None:
    response = synced.get("/v1/digests/draft", params={**WEEK, "include": "all"})
    assert response.status_code == 200
    draft = response.json()
    assert draft["window"] == {"start": "2026-09-05T00:00:00Z", "end": "2026-09-12T00:00:00Z"}
    assert [(r["tag"], r["prerelease"]) for r in draft["releases"]] == [
        ("v1.0.1", False),
        ("v1.1.0rc1", True),
        ("v1.1.0", False),
    ]
    assert draft["releases"][2]["series"] == {
        "line": "1.1.0",
        "iterations": ["v1.1.0rc1", "v1.1.0"],
        "latest": "v1.1.0",
        "stable": True,
        "status": "stable",
        "earlier_prereleases": [],
        "text": "1.1.0rc1 → 1.1.0",
    }
    items = {i["number"]: i for theme in draft["themes"] for i in theme["items"]}
    assert set(items) == {2, 3, 4, 5, 6}
    assert items[2]["timing"] == "released_merged_earlier"
    assert items[2]["merged_at"] == "2026-09-04T12:00:00Z"
    assert items[2]["first_release"]["tag"] == "v1.0.1"
    assert items[4]["timing"] == "merged_and_released"
    assert items[4]["first_release"] == {
        "tag": "v1.1.0rc1",
        "version": "1.1.0rc1",
        "published_at": "2026-09-08T12:00:00Z",
        "prerelease": True,
        "url": f"{fake_github.web_url}/acme/engine/releases/tag/v1.1.0rc1",
    }
    assert items[4]["first_stable_release"]["tag"] == "v1.1.0"
    assert items[6]["timing"] == "merged_unreleased"
    assert items[6]["first_release"] is None and items[6]["first_stable_release"] is None
    for field in ("kind", "repo", "url", "themes", "models", "breaking", "claims", "score"):
        assert field in items[4]
    assert items[4]["kind"] == "pull_request" and items[4]["repo"] == "acme/engine"
    # #2 and its backport #3 only repair a flaky test; #6 is docs
    assert (items[2]["noise"], items[3]["noise"], items[6]["noise"]) == ("tests", "tests", "docs")


def test_default_draft_keeps_noise_out_of_highlights(synced: TestClient) -> None:
    draft = synced.get("/v1/digests/draft", params=WEEK).json()
    shown = {i["number"] for theme in draft["themes"] for i in theme["items"]}
    assert shown == {4, 5}
    assert draft["counts"]["noise_hidden"] == 3


def test_timing_is_judged_as_of_the_window_end(synced: TestClient) -> None:
    # #4 merged 9/7; its first release v1.1.0rc1 is 9/8: a window ending 9/7 has it unreleased
    window = {"start": "2026-09-06", "end": "2026-09-07", "include": "all"}
    draft = synced.get("/v1/digests/draft", params=window)
    items = {i["number"]: i for theme in draft.json()["themes"] for i in theme["items"]}
    assert items[4]["timing"] == "merged_unreleased"
    assert items[4]["first_release"]["tag"] == "v1.1.0rc1"


def test_draft_markdown_numbers_its_sources(synced: TestClient, fake_github: FakeGitHub) -> None:
    response = synced.get("/v1/digests/draft", params={**WEEK, "format": "md", "include": "all"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/markdown")
    text = response.text
    assert f"[1] {fake_github.web_url}/acme/engine/releases/tag/v1.0.1" in text
    assert "9 月 4 日已合并，本期由 1.0.1（正式版，9 月 6 日）收录" in text


def test_release_with_an_offset_timestamp_lands_in_the_utc_week(
    api: TestClient, fake_github: FakeGitHub, syncer: ProjectSyncer
) -> None:
    repo = fake_github.repo("acme/tz")
    repo.commit("initial", committed_at=datetime(2026, 8, 1, tzinfo=UTC))
    repo.release("v1.0.0", published_at="2026-08-10T23:30:00-07:00")
    repo.release("v0.9.0", published_at="2026-08-04T07:30:00+08:00")
    repo.release("v0.9.5", published_at="2026-08-10T23:59:59Z")
    api.post("/v1/projects", json={"repo": "acme/tz"})
    assert syncer.sync("acme/tz").ok
    week = api.get("/v1/digests/draft", params={"start": "2026-08-04", "end": "2026-08-10"})
    assert [r["tag"] for r in week.json()["releases"]] == ["v0.9.5"]
    after = api.get("/v1/digests/draft", params={"start": "2026-08-11", "end": "2026-08-17"})
    assert [(r["tag"], r["published_at"]) for r in after.json()["releases"]] == [
        ("v1.0.0", "2026-08-11T06:30:00Z")
    ]
    before = api.get("/v1/digests/draft", params={"start": "2026-07-28", "end": "2026-08-03"})
    assert [(r["tag"], r["published_at"]) for r in before.json()["releases"]] == [
        ("v0.9.0", "2026-08-03T23:30:00Z")
    ]


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({"start": "2026-13-01", "end": "2026-09-11"}, 400, "YYYY-MM-DD"),
        ({"start": "tomorrow", "end": "2026-09-11"}, 400, "YYYY-MM-DD"),
        ({"start": "2026-09-11", "end": "2026-09-05"}, 422, "before start"),
        ({"start": "2026-01-01", "end": "2026-06-01"}, 422, "longer than 62"),
        ({"start": "2026-09-05"}, 422, "end"),
        ({**WEEK, "repo": "acme/unknown"}, 404, "not tracked"),
        ({**WEEK, "repo": "not a slug"}, 400, "owner/name"),
        ({**WEEK, "format": "pdf"}, 422, "format"),
    ],
)
def test_bad_draft_requests_get_clear_json_errors(
    api: TestClient, params: dict[str, str], status: int, message: str
) -> None:
    response = api.get("/v1/digests/draft", params=params)
    assert response.status_code == status
    body = response.json()
    assert message in body["message"] and body["error"]


def test_projects_lifecycle_and_errors(api: TestClient, queued: list[str]) -> None:
    created = api.post("/v1/projects", json={"repo": "vllm-project/vllm", "name": "vLLM"})
    assert created.status_code == 201 and created.json()["name"] == "vLLM"
    assert api.post("/v1/projects", json={"repo": "VLLM-project/vllm"}).status_code == 409
    for bad in ["vllm", "a/b/c", "-x/y", "owner/..", "", "owner/name.git"]:
        response = api.post("/v1/projects", json={"repo": bad})
        assert response.status_code == 400, bad
        assert "owner/name" in response.json()["message"]
    assert api.post("/v1/projects", json={}).status_code == 422
    assert (
        api.post(
            "/v1/projects", content=b"{not json", headers={"content-type": "application/json"}
        ).status_code
        == 422
    )
    assert [p["repo"] for p in api.get("/v1/projects").json()] == ["vllm-project/vllm"]
    assert api.get("/v1/projects/vllm-project/vllm").json()["sync"] is None
    assert api.get("/v1/projects/vllm-project/nope").status_code == 404
    assert api.post("/v1/sync", json={"repo": "vllm-project/vllm"}).json() == {
        "queued": ["vllm-project/vllm"]
    }
    assert api.post("/v1/sync", json={"repo": "x/unknown"}).status_code == 404
    assert api.post("/v1/sync").status_code == 202
    assert queued == ["vllm-project/vllm", "vllm-project/vllm"]
    assert api.delete("/v1/projects/vllm-project/vllm").status_code == 204
    assert api.delete("/v1/projects/vllm-project/vllm").status_code == 404
    assert api.get("/v1/projects").json() == []


def test_sync_without_a_poller_in_the_process_is_queued_for_the_workers(
    factory: sessionmaker[Session],
) -> None:
    from service.sync import requests as sync_requests

    with TestClient(create_app(factory), headers=bearer(factory, "editor")) as client:
        assert client.post("/v1/projects", json={"repo": "acme/queued"}).status_code == 201
        response = client.post("/v1/sync", json={"repo": "acme/queued"})
    assert response.status_code == 202 and response.json() == {"queued": ["acme/queued"]}
    assert sync_requests.take(factory) == ["acme/queued"]
    assert sync_requests.take(factory) == []  # handed to one worker only


def test_sync_state_shows_last_error_and_error_count(
    api: TestClient, syncer: ProjectSyncer
) -> None:
    api.post("/v1/projects", json={"repo": "acme/gone"})
    syncer.sync("acme/gone")
    project = api.get("/v1/projects/acme/gone").json()
    assert project["sync"]["error_count"] == 1
    assert "not found" in project["sync"]["last_error"]
    states = api.get("/v1/projects/acme/gone/sync").json()
    assert [s["resource"] for s in states] == ["cycle", "releases"]
    assert all(s["error_count"] == 1 for s in states)


def test_releases_and_changes_endpoints_filter(synced: TestClient) -> None:
    releases = synced.get("/v1/releases", params={"repo": "acme/engine", "prerelease": "false"})
    assert [r["tag"] for r in releases.json()] == ["v1.1.0", "v1.0.1", "v1.0.0"]
    assert synced.get("/v1/releases", params={"start": "2026-09-01"}).status_code == 400
    changes = synced.get("/v1/changes", params={**WEEK, "timing": "merged_unreleased"}).json()
    assert [i["number"] for i in changes["items"]] == [6]  # /v1/changes lists noise too
    bad = synced.get("/v1/changes", params={**WEEK, "timing": "soon"})
    assert bad.status_code == 400 and "merged_unreleased" in bad.json()["message"]
