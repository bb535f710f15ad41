"""Editor-ready drafts: version table and RC series, themes, models, breaking changes,
reported numbers and the Markdown digest, over a synced store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from service.app import create_app
from service.sync.service import ProjectSyncer
from tests.fake_github import FakeGitHub
from tests.store_snapshot import track

WEEK = {"start": "2026-09-30", "end": "2026-10-06"}
BEFORE = datetime(2026, 9, 20, tzinfo=UTC)
IN_WEEK = datetime(2026, 10, 1, tzinfo=UTC)

VLLM_NOTES = """## Highlights
* Kimi K3 decode path via CuTeDSL on GB300, 1.5-2x faster decode.

### Breaking Changes
* Request-level `mm_processor_kwargs` are rejected by default; pass `--trust-request-mm-kwargs` to allow them.
"""


def at(moment: datetime, hours: float) -> datetime:
    return moment + timedelta(hours=hours)


@pytest.fixture
def store(fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer) -> None:
    vllm = fake_github.repo("vllm-project/vllm")
    vllm.commit("initial", committed_at=at(BEFORE, -240))
    vllm.release("v0.30.0", published_at=at(BEFORE, -200))
    vllm.merge_pull(101, "[Model] Support Kimi K3", merged_at=at(BEFORE, 1))
    vllm.release("v0.31.0rc1", published_at=at(BEFORE, 5), prerelease=True)
    vllm.merge_pull(
        102,
        "[Perf] GLM5.3 Flash: default FP8 KV cache, +9.8% E2E throughput",
        merged_at=at(IN_WEEK, 2),
    )
    vllm.merge_pull(
        103, "[Frontend] Remove the --disable-log-requests flag", merged_at=at(IN_WEEK, 3)
    )
    vllm.merge_pull(104, "[CI] Fix ROCm nightly build", merged_at=at(IN_WEEK, 4))
    vllm.merge_pull(105, "[Docs] Update README", merged_at=at(IN_WEEK, 5))
    vllm.release("v0.31.0", published_at=at(IN_WEEK, 30), body=VLLM_NOTES)
    vllm.merge_pull(106, "[Kernel] Kimi K3 MLA decode kernel for SM100", merged_at=at(IN_WEEK, 40))

    omni = fake_github.repo("vllm-project/vllm-omni")
    omni.commit("initial", committed_at=at(BEFORE, -100))
    omni.merge_pull(7, "[Diffusion] Add latent upscaler for H3", merged_at=at(IN_WEEK, 10))
    omni.release("v0.31.0rc1", published_at=at(IN_WEEK, 20), prerelease=True)

    flashinfer = fake_github.repo("flashinfer-ai/flashinfer")
    flashinfer.commit("initial", committed_at=at(BEFORE, -100))
    flashinfer.release("v0.7.0", published_at=at(BEFORE, -50))
    for rc in range(1, 5):
        flashinfer.merge_pull(
            200 + rc, f"feat: NVFP4 GEMM step {rc} for SM100", merged_at=at(IN_WEEK, 24 * rc)
        )
        flashinfer.release(f"v0.7.1rc{rc}", published_at=at(IN_WEEK, 24 * rc + 1), prerelease=True)

    for repo, name in (
        ("vllm-project/vllm", "vLLM"),
        ("vllm-project/vllm-omni", "vLLM-Omni"),
        ("flashinfer-ai/flashinfer", "FlashInfer"),
    ):
        track(factory, repo, name)
        assert syncer.sync(repo).ok


@pytest.fixture
def api(factory: sessionmaker[Session], store: None) -> Iterator[TestClient]:
    with TestClient(create_app(factory)) as client:
        yield client


def draft(api: TestClient, **params: str) -> dict:
    response = api.get("/v1/digests/draft", params={**WEEK, **params})
    assert response.status_code == 200, response.text
    return response.json()


def items_of(result: dict) -> dict[int, dict]:
    return {i["number"]: i for theme in result["themes"] for i in theme["items"]}


def test_version_table_collapses_rc_series_and_keeps_projects_apart(api: TestClient) -> None:
    rows = {(r["project"], r["version_line"]): r for r in draft(api)["versions"]}
    assert set(rows) == {
        ("vLLM", "0.31.0"),
        ("vLLM-Omni", "0.31.0"),
        ("FlashInfer", "0.7.1"),
    }
    flashinfer = rows[("FlashInfer", "0.7.1")]
    assert flashinfer["versions"] == "0.7.1rc1 → rc4"
    assert flashinfer["status"] == "prerelease" and flashinfer["iterations"] == 4
    assert flashinfer["latest_tag"] == "v0.7.1rc4"
    vllm = rows[("vLLM", "0.31.0")]
    assert vllm["status"] == "rc_to_stable" and vllm["earlier_prereleases"] == ["v0.31.0rc1"]
    assert rows[("vLLM-Omni", "0.31.0")]["status"] == "prerelease"


def test_items_carry_themes_models_claims_breaking_and_ranked_reasons(api: TestClient) -> None:
    result = draft(api)
    items = items_of(result)
    assert 104 not in items and 105 not in items  # CI and docs are out of the default draft
    assert result["counts"]["noise_hidden"] == 2
    kimi = items[101]
    assert kimi["timing"] == "released_merged_earlier"
    assert kimi["primary_theme"] == "model_support" and kimi["models"] == ["kimi"]
    assert kimi["first_release"]["tag"] == "v0.31.0rc1"
    assert kimi["first_stable_release"]["tag"] == "v0.31.0"
    assert "new model support" in kimi["reasons"]
    glm = items[102]
    assert glm["claims"][0]["value"] == "+9.8%" and glm["claims"][0]["reported_by"] == "project"
    assert {"quantization", "kv_cache"} <= set(glm["themes"])
    assert items[103]["breaking"] and items[103]["primary_theme"] == "breaking"
    assert items[106]["timing"] == "merged_unreleased"
    for theme in result["themes"]:
        scores = [i["score"] for i in theme["items"]]
        assert scores == sorted(scores, reverse=True)
    every = items_of(draft(api, include="all"))
    assert every[104]["noise"] == "ci" and every[105]["noise"] == "docs"


def test_breaking_changes_reach_releases_and_the_upgrade_checks(api: TestClient) -> None:
    result = draft(api)
    vllm = next(r for r in result["releases"] if r["tag"] == "v0.31.0")
    assert len(vllm["breaking_changes"]) == 1
    assert "--trust-request-mm-kwargs" in vllm["breaking_changes"][0]
    assert vllm["claims"][0]["value"] == "1.5-2x"
    checks = {(c["project"], c["release"], c["number"]) for c in result["upgrade_checks"]}
    assert ("vLLM", "v0.31.0", None) in checks
    assert ("vLLM", "v0.31.0", 103) in checks


def test_model_filter(api: TestClient) -> None:
    assert set(items_of(draft(api, model="kimi"))) == {101, 106}
    response = api.get("/v1/digests/draft", params={**WEEK, "model": "nonesuch"})
    assert response.status_code == 400 and "deepseek" in response.json()["message"]


def test_markdown_digest_in_chinese_and_english(api: TestClient) -> None:
    zh = api.get("/v1/digests/draft", params={**WEEK, "format": "md"}).text
    assert zh.startswith("本期覆盖 2026/9/30—10/6（UTC）")
    assert "FlashInfer 0.7.1rc1 → rc4 本期 RC 迭代，10 月 5 日" in zh
    assert "vLLM 0.31.0 从 RC 转为正式版" in zh
    assert "## 模型支持" in zh
    assert "9 月 20 日已合并，0.31.0rc1 预发布已含，本期进入 0.31.0（正式版，10 月 2 日）" in zh
    assert "项目方报告：+9.8%" in zh
    assert "## 本周升级检查" in zh and "--trust-request-mm-kwargs" in zh
    assert "尚未进入发布版本（仅在主分支）" in zh
    assert "\n[1] http://127.0.0.1:" in zh  # the fake GitHub's pages
    numbers = [line.split("]")[0] for line in zh.splitlines() if line.startswith("[")]
    assert numbers == [f"[{n}" for n in range(1, len(numbers) + 1)]
    en = api.get("/v1/digests/draft", params={**WEEK, "format": "md", "lang": "en"}).text
    assert en.startswith("This issue covers 2026-09-30 to 2026-10-06 (UTC)")
    assert "Reported by the project: +9.8%" in en
    assert "## Upgrade checks this week" in en
    bad = api.get("/v1/digests/draft", params={**WEEK, "format": "md", "lang": "fr"})
    assert bad.status_code == 422


def test_one_window_material_serves_differently_curated_drafts_unchanged(
    factory: sessionmaker[Session], store: None
) -> None:
    import copy

    from service.curation.service import CurationState
    from service.digests.service import assemble_draft, build_draft, window_material
    from service.themes import default_taxonomy
    from service.windows import window_for

    taxonomy = default_taxonomy()
    window = window_for(WEEK["start"], WEEK["end"])
    with factory() as session:
        material = window_material(session, window, taxonomy=taxonomy)
        plain = build_draft(session, window, taxonomy=taxonomy, curated=False)
    untouched = copy.deepcopy(material)
    key = "pr:vllm-project/vllm#102"
    assert any(item["key"] == key for item in material.items)
    curated = CurationState()
    curated.of(key).title = "GLM-5.3 Flash: FP8 KV cache by default"
    curated.of(key).pinned = True
    curated.of("pr:vllm-project/vllm#103").excluded = True

    edited = assemble_draft(material, curated, include_all=False, model=None, taxonomy=taxonomy)
    pinned = next(theme for theme in edited["themes"] if theme["key"] == "pinned")
    assert [(i["key"], i["title"]) for i in pinned["items"]] == [
        (key, "GLM-5.3 Flash: FP8 KV cache by default")
    ]
    assert [i["key"] for i in edited["excluded"]] == ["pr:vllm-project/vllm#103"]
    # the material is as it was, and an uncurated draft from it equals one built afresh
    assert material == untouched
    again = assemble_draft(
        material, CurationState(), include_all=False, model=None, taxonomy=taxonomy
    )
    assert again == plain
