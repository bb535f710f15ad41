"""The editor's desk over the API: tokens and roles on every route, curation that survives
re-syncs and taxonomy changes, publishing, previously-reported flags, safe HTML and feeds."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any

import feedparser
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from service.app import create_app
from service.auth.rules import RULES, Access
from service.config import Settings
from service.events.models import Event
from service.sync.models import HttpValidator, SyncState
from service.sync.service import ProjectSyncer
from service.themes import load_taxonomy
from tests.conftest import bearer
from tests.fake_github import FakeGitHub
from tests.test_digest import IN_WEEK, WEEK, at
from tests.test_digest import store as store

NEXT_WEEK = {"start": "2026-10-07", "end": "2026-10-13"}
HOSTILE_NOTES = """## Highlights
* Faster decode <script>alert('x')</script>
* [click me](javascript:alert(1)) and <a href="javascript:alert(2)">this</a>
* <img src="https://example.invalid/x.png" onerror="alert(3)"> <b onclick="alert(4)">bold</b>
<iframe src="https://evil.invalid"></iframe>
"""


@pytest.fixture
def desk_api(factory: sessionmaker[Session], store: None) -> Iterator[TestClient]:
    with TestClient(create_app(factory), raise_server_exceptions=False) as api:
        yield api


@pytest.fixture
def editor(factory: sessionmaker[Session]) -> dict[str, str]:
    return bearer(factory, "editor", "alice")


def curate(
    desk_api: TestClient,
    headers: dict[str, str],
    action: str,
    item: str | None = None,
    value: dict[str, Any] | None = None,
    window: dict[str, str] = WEEK,
) -> dict[str, Any]:
    response = desk_api.post(
        "/v1/curation",
        json={**window, "action": action, "item": item, "value": value},
        headers=headers,
    )
    assert response.status_code == 201, response.text
    return response.json()


def draft(desk_api: TestClient, window: dict[str, str] = WEEK, **params: str) -> dict[str, Any]:
    response = desk_api.get("/v1/digests/draft", params={**window, **params})
    assert response.status_code == 200, response.text
    return response.json()


def items(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {i["key"]: i for theme in result["themes"] for i in theme["items"]}


KIMI = "pr:vllm-project/vllm#101"
GLM = "pr:vllm-project/vllm#102"
KERNEL = "pr:vllm-project/vllm#106"


def route_table(app: Any) -> list[tuple[str, str]]:
    paths = app.openapi()["paths"]
    return sorted((method.upper(), path) for path, ops in paths.items() for method in ops)


def test_every_route_has_an_access_rule_and_each_role_gets_exactly_its_rights(
    factory: sessionmaker[Session],
) -> None:
    app = create_app(factory)
    routes = route_table(app)
    missing = [r for r in routes if r not in RULES]
    assert missing == [], f"routes without an access rule: {missing}"
    tokens = {role: bearer(factory, role, role) for role in ("reader", "editor", "admin")}
    with TestClient(app, raise_server_exceptions=False) as api:
        for method, path in routes:
            access = RULES[(method, path)]
            if access in (Access.PUBLIC, Access.READ):
                continue
            # ids that exist nowhere: each call is judged on its token and changes no data
            url = re.sub(
                r"\{[^}]+\}",
                lambda m: "999999" if "id" in m.group(0) or "number" in m.group(0) else "x",
                path,
            )
            expected_ok = {"reader": False, "editor": access is Access.EDITOR, "admin": True}
            anonymous = api.request(method, url, json={})
            assert anonymous.status_code == 401, (method, path)
            assert "token" in anonymous.json()["message"]
            wrong = api.request(method, url, json={}, headers={"Authorization": "Bearer dgt_nope"})
            assert wrong.status_code == 401, (method, path)
            for role, headers in tokens.items():
                status = api.request(method, url, json={}, headers=headers).status_code
                if expected_ok[role]:
                    assert status not in (401, 403), (method, path, role, status)
                else:
                    assert status == 403, (method, path, role, status)


def test_reads_can_require_a_reader_token(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    strict = settings.model_copy(update={"reads_need_token": True})
    with TestClient(create_app(factory, settings=strict)) as api:
        assert api.get("/v1/projects").status_code == 401
        assert api.get("/healthz").status_code == 200
        assert api.get("/v1/projects", headers=bearer(factory, "reader")).status_code == 200
    with TestClient(create_app(factory, settings=settings)) as api:
        assert api.get("/v1/projects").status_code == 200


def test_failed_attempts_are_logged_without_the_token(
    factory: sessionmaker[Session], caplog: pytest.LogCaptureFixture
) -> None:
    secret = "dgt_this-is-not-a-real-token-but-must-not-be-logged"
    with TestClient(create_app(factory)) as api, caplog.at_level(logging.WARNING):
        api.post(
            "/v1/projects", json={"repo": "a/b"}, headers={"Authorization": f"Bearer {secret}"}
        )
        reader = bearer(factory, "reader", "rita")
        api.post("/v1/projects", json={"repo": "a/b"}, headers=reader)
    text = caplog.text
    assert "unknown or revoked token" in text and "'rita' (reader) may not POST" in text
    assert secret not in text and reader["Authorization"].split()[1] not in text


def test_revoked_token_stops_working(factory: sessionmaker[Session]) -> None:
    admin = bearer(factory, "admin", "root")
    with TestClient(create_app(factory)) as api:
        created = api.post(
            "/v1/tokens", json={"name": "bob", "role": "editor"}, headers=admin
        ).json()
        assert created["token"].startswith("dgt_") and created["role"] == "editor"
        listed = api.get("/v1/tokens", headers=admin).json()
        assert all("token" not in t for t in listed)
        bob = {"Authorization": f"Bearer {created['token']}"}
        assert api.post("/v1/sync", json={}, headers=bob).status_code == 202
        assert api.delete(f"/v1/tokens/{created['id']}", headers=admin).status_code == 204
        assert api.post("/v1/sync", json={}, headers=bob).status_code == 401


def test_curation_shapes_the_draft_and_keeps_its_history(
    desk_api: TestClient, editor: dict[str, str]
) -> None:
    curate(desk_api, editor, "exclude", GLM)
    curate(desk_api, editor, "pin", KERNEL)
    curate(desk_api, editor, "move", KIMI, {"theme": "hardware"})
    curate(desk_api, editor, "retitle", KIMI, {"title": "vLLM 支持 Kimi K3"})
    curate(desk_api, editor, "note", KIMI, {"text": "与 SGLang 同周支持"})
    manual = curate(
        desk_api,
        editor,
        "add",
        None,
        {"title": "FlashMLA paper", "url": "https://arxiv.org/abs/1", "theme": "attention_kernels"},
    )
    result = draft(desk_api)
    shown = items(result)
    assert GLM not in shown and [i["key"] for i in result["excluded"]] == [GLM]
    assert (
        result["themes"][0]["key"] == "pinned" and result["themes"][0]["items"][0]["key"] == KERNEL
    )
    kimi = shown[KIMI]
    assert kimi["primary_theme"] == "hardware" and kimi["title"] == "vLLM 支持 Kimi K3"
    assert (
        kimi["original_title"] == "[Model] Support Kimi K3"
        and kimi["editor_note"] == "与 SGLang 同周支持"
    )
    assert shown[manual["item"]]["kind"] == "manual"
    markdown = desk_api.get("/v1/digests/draft", params={**WEEK, "format": "md"}).text
    assert (
        "## 置顶" in markdown
        and "编辑注：与 SGLang 同周支持" in markdown
        and "FlashMLA paper" in markdown
    )
    curate(desk_api, editor, "restore", GLM)
    assert GLM in items(draft(desk_api))
    history = desk_api.get("/v1/curation", params=WEEK).json()["actions"]
    assert [a["action"] for a in history] == [
        "exclude",
        "pin",
        "move",
        "retitle",
        "note",
        "add",
        "restore",
    ]
    assert {a["actor"] for a in history} == {"alice"} and all(
        a["at"].endswith("Z") for a in history
    )


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"action": "move", "item": GLM, "value": {"theme": "nonesuch"}}, 422, "not a theme"),
        ({"action": "exclude"}, 400, "item"),
        ({"action": "exclude", "item": "drop table"}, 400, "not an item key"),
        ({"action": "add", "value": {"title": "x", "url": "javascript:alert(1)"}}, 422, "http"),
        ({"action": "remove", "item": "manual:doesnotexist"}, 404, "does not exist"),
        ({"action": "explode", "item": GLM}, 422, "action"),
    ],
)
def test_bad_curation_is_refused_clearly(
    desk_api: TestClient, editor: dict[str, str], body: dict[str, Any], status: int, message: str
) -> None:
    response = desk_api.post("/v1/curation", json={**WEEK, **body}, headers=editor)
    assert response.status_code == status and message in response.json()["message"]


def test_curation_survives_a_full_resync_and_a_taxonomy_change(
    desk_api: TestClient,
    editor: dict[str, str],
    factory: sessionmaker[Session],
    settings: Settings,
    fake_github: FakeGitHub,
    syncer: ProjectSyncer,
) -> None:
    curate(desk_api, editor, "exclude", GLM)
    curate(desk_api, editor, "move", KIMI, {"theme": "hardware"})
    with factory.begin() as session:  # forget every validator and mark: a full re-sync
        session.execute(delete(HttpValidator))
        session.execute(delete(SyncState))
    for repo in ("vllm-project/vllm", "vllm-project/vllm-omni", "flashinfer-ai/flashinfer"):
        report = syncer.sync(repo)
        assert report.ok and report.not_modified == []
    after = draft(desk_api)
    assert GLM not in items(after) and items(after)[KIMI]["primary_theme"] == "hardware"
    themes = '[[themes]]\nkey = "serving"\ntitle_en = "Serving"\ntitle_zh = "服务"\nkeywords = ["kernel"]\n'
    retaxed = create_app(
        factory, settings=settings, taxonomy=load_taxonomy(themes, "", "editor.toml")
    )
    with TestClient(retaxed) as api:
        result = api.get("/v1/digests/draft", params=WEEK).json()
    assert [i["key"] for i in result["excluded"]] == [GLM]
    moved = {i["key"]: theme["key"] for theme in result["themes"] for i in theme["items"]}
    assert moved[KIMI] == "hardware" and moved[KERNEL] == "serving"


def test_publish_freezes_the_issue_and_later_drafts_flag_what_it_carried(
    desk_api: TestClient,
    editor: dict[str, str],
    factory: sessionmaker[Session],
    fake_github: FakeGitHub,
    syncer: ProjectSyncer,
) -> None:
    curate(desk_api, editor, "exclude", GLM)
    published = desk_api.post("/v1/digests", json={**WEEK, "title": "第 1 期"}, headers=editor)
    assert published.status_code == 201, published.text
    number = published.json()["number"]
    assert published.json()["published_by"] == "alice"
    assert desk_api.post("/v1/digests", json=WEEK, headers=editor).status_code == 409
    frozen = desk_api.get(f"/v1/digests/{number}").json()
    curate(desk_api, editor, "restore", GLM)  # later curation does not change what was published
    assert desk_api.get(f"/v1/digests/{number}").json() == frozen
    assert GLM not in items(frozen["content"])
    assert desk_api.get(f"/v1/digests/{number}", params={"format": "md"}).text.startswith(
        "本期覆盖"
    )
    assert "<article>" in desk_api.get(f"/v1/digests/{number}", params={"format": "html"}).text
    assert [d["number"] for d in desk_api.get("/v1/digests").json()] == [number]
    assert desk_api.get("/v1/digests/999").status_code == 404
    with factory() as session:
        kinds = list(session.scalars(select(Event.type).where(Event.type == "digest.published")))
    assert kinds == ["digest.published"]

    # next week: the kernel PR merged this week ships in v0.31.1 and was already reported
    vllm = fake_github.repo("vllm-project/vllm")
    vllm.release("v0.31.1", published_at=at(IN_WEEK, 24 * 7 + 5))
    fake_github.advance(3600)
    assert syncer.sync("vllm-project/vllm").ok
    later = draft(desk_api, NEXT_WEEK)
    kernel = items(later)[KERNEL]
    assert kernel["timing"] == "released_merged_earlier"
    assert kernel["previously_reported"]["issue"] == number
    release = next(r for r in later["releases"] if r["tag"] == "v0.31.1")
    assert release["only_previously_reported"] and release["ships_previously_reported"] == [106]
    markdown = desk_api.get("/v1/digests/draft", params={**NEXT_WEEK, "format": "md"}).text
    assert f"（第 {number} 期已报道）" in markdown and "此前均已报道" in markdown


def test_desk_page_renders_release_notes_without_anything_executable(
    factory: sessionmaker[Session],
    fake_github: FakeGitHub,
    syncer: ProjectSyncer,
    desk_api: TestClient,
) -> None:
    repo = fake_github.repo("vllm-project/vllm")
    repo.release("v0.31.2", published_at=at(IN_WEEK, 60), body=HOSTILE_NOTES)
    fake_github.advance(3600)
    assert syncer.sync("vllm-project/vllm").ok
    page = desk_api.get("/desk", params=WEEK)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    notes = next(part for part in html.split("<details") if "v0.31.2 发布说明" in part)
    notes = notes.split("</details>")[0]
    assert "Faster decode" in notes and "<b>bold</b>" in notes
    lowered = notes.lower()
    for forbidden in ("<script", "onerror", "onclick", "<iframe", "alert('x')"):
        assert forbidden not in lowered, forbidden
    # a javascript: URL may stay visible as inert text, never as a link or a source
    assert re.search(r"""(?:href|src)\s*=\s*["']?\s*javascript:""", lowered) is None
    assert "<a rel=" in notes  # the javascript: anchor kept its text and lost its href
    assert 'data-key="pr:vllm-project/vllm#101"' in html
    assert "项目方报告 +9.8%" in html and "破坏性变更" in html


def test_atom_feeds_parse_back(desk_api: TestClient, editor: dict[str, str]) -> None:
    number = desk_api.post("/v1/digests", json=WEEK, headers=editor).json()["number"]
    assert number == 1  # issues are numbered from 1 without gaps, on every database
    digests = feedparser.parse(desk_api.get("/v1/digests.atom").content)
    assert not digests.bozo and digests.version == "atom10"
    assert len(digests.entries) == 1 and digests.entries[0].title.startswith("#1 ")
    response = desk_api.get("/v1/releases.atom", params={"prerelease": "true"})
    assert response.headers["content-type"].startswith("application/atom+xml")
    rcs = feedparser.parse(response.content)
    assert not rcs.bozo and rcs.version == "atom10"
    titles = [e.title for e in rcs.entries]
    assert titles and all("(pre-release)" in t for t in titles)
    assert "FlashInfer 0.7.1rc4 (pre-release)" in titles
    one = feedparser.parse(
        desk_api.get("/v1/releases.atom", params={"repo": "vllm-project/vllm"}).content
    )
    assert {e.title for e in one.entries} == {
        "vLLM 0.31.0",
        "vLLM 0.31.0rc1 (pre-release)",
        "vLLM 0.30.0",
    }
    assert desk_api.get("/v1/releases.atom", params={"repo": "x/unknown"}).status_code == 404


def test_openapi_documents_every_route_with_error_schemas(factory: sessionmaker[Session]) -> None:
    app = create_app(factory)
    spec = app.openapi()
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            assert "200" in operation["responses"] or any(
                code.startswith("2") for code in operation["responses"]
            ), (method, path)
            if path.startswith("/v1/"):
                assert "404" in operation["responses"] or "422" in operation["responses"], (
                    method,
                    path,
                )
    with TestClient(app) as api:
        assert api.get("/docs").status_code == 200
