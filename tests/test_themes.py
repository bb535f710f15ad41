"""Themes, model families and noise of real pull-request titles."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from service.breaking import change_is_breaking
from service.themes import classify, default_taxonomy, load_taxonomy, split_title

DATA = Path(__file__).parent / "data"
# project categories as the catalog gives them
CATEGORIES = {
    "THUDM/slime": "training",
    "huggingface/trl": "training",
    "tile-ai/tilelang": "kernels",
    "flashinfer-ai/flashinfer": "kernels",
    "vllm-project/vllm": "inference",
    "sgl-project/sglang": "inference",
    "vllm-project/vllm-omni": "multimodal",
}
# The figures reached on tests/data/labelled_titles.tsv; a change to the taxonomy or the
# classifier must not fall below them.
PRIMARY_ACCURACY_FLOOR = 0.87
NOISE_PRECISION_FLOOR = 0.98
NOISE_RECALL_FLOOR = 0.95


def classify_row(row: dict[str, str]):  # type: ignore[no-untyped-def]
    title = row["title"]
    return classify(title, [], CATEGORIES[row["repo"]], breaking=change_is_breaking(title, [], ""))


def test_labelled_set_is_real_sized_and_varied() -> None:
    rows = list(csv.DictReader((DATA / "labelled_titles.tsv").open(), delimiter="\t"))
    assert len(rows) >= 200
    assert len({r["repo"] for r in rows}) >= 5
    keys = {t.key for t in default_taxonomy().themes} | {"other"}
    assert {r["primary_theme"] for r in rows} <= keys


def test_classifier_accuracy_on_the_labelled_titles() -> None:
    rows = list(csv.DictReader((DATA / "labelled_titles.tsv").open(), delimiter="\t"))
    correct = total = true_noise = false_noise = missed_noise = 0
    for row in rows:
        found = classify_row(row)
        if found.noise and row["noise"]:
            true_noise += 1
        elif found.noise:
            false_noise += 1
        elif row["noise"]:
            missed_noise += 1
        if not row["noise"]:
            total += 1
            correct += found.primary == row["primary_theme"]
    accuracy = correct / total
    precision = true_noise / (true_noise + false_noise)
    recall = true_noise / (true_noise + missed_noise)
    print(
        f"primary theme accuracy {accuracy:.3f}, noise precision {precision:.3f}, recall {recall:.3f}"
    )
    assert accuracy >= PRIMARY_ACCURACY_FLOOR
    assert precision >= NOISE_PRECISION_FLOOR
    assert recall >= NOISE_RECALL_FLOOR


@pytest.mark.parametrize(
    ("title", "primary", "themes"),
    [
        (
            "[Bugfix][ROCm] Fix fp8 moe scale on MI300",
            "bugfix",
            {"quantization", "moe", "hardware"},
        ),
        ("feat(moe): add EPLB rebalancing", "moe", set()),
        ("[CuTe,Sm100] Add MLA decode kernel", "hardware", {"attention_kernels"}),
        ("[Model] Support Kimi K3", "model_support", set()),
        ("Add DeepSeek-V4.1-Flash support", "model_support", set()),
        ("[Spec Decode] EAGLE3 for Qwen3-Next", "speculative_decoding", set()),
        ("[PD] Mooncake transfer engine for KV", "disaggregated_serving", set()),
        ("[Frontend] Add tool parser for MiniMax M2", "api_frontend", set()),
        ("Add FP8 KV cache for GLM5.3 Flash", "quantization", {"kv_cache"}),
        ("[Kernel] Optimize Qwen3 MoE routing", "moe", {"attention_kernels"}),
        ("[Perf] Speed up the sampler", "performance", set()),
        ("feat!: remove the legacy engine", "breaking", set()),
        ("Support routed_experts_start_len", "moe", set()),
        ("[Diffusion] Fuse Wan VAE conv bias epilogue", "multimodal", {"attention_kernels"}),
    ],
)
def test_real_title_forms_pin_to_their_themes(title: str, primary: str, themes: set[str]) -> None:
    found = classify(title, [], "inference", breaking=change_is_breaking(title, [], ""))
    assert found.primary == primary
    assert themes <= set(found.themes)


@pytest.mark.parametrize(
    ("title", "noise"),
    [
        ("[CI] Fix ROCm nightly build", "ci"),
        ("[Docs] Update README", "docs"),
        ("fix(test): repair flaky moe test (#4395)", "tests"),
        ("Fix typo in attention backend", "typo"),
        ("Bump torch from 2.8.0 to 2.9.0", "dependency"),
        ("chore(deps): update dependency vllm to >=0.19.0", "dependency"),
        ('Revert "[Kernel] Faster MLA decode"', "revert"),
        ("⬆️ Bump dev version", "version_bump"),
        ("[Kernel] Add FP8 MoE kernel and tests", None),
        ("[Misc] Add override for allreduce fusion thresholds", None),
    ],
)
def test_noise_is_recognised_without_catching_real_work(title: str, noise: str | None) -> None:
    assert classify(title).noise == noise


def test_model_families_are_tagged() -> None:
    assert classify("[Model] Kimi K3 AttnRes on gfx1250").models == ("kimi",)
    found = classify("DeepSeek-V4 and Qwen3.8 FP8 KV on GLM-5.3")
    assert set(found.models) == {"deepseek", "qwen", "glm"}
    assert classify("Add MiniMax-M3 dense layers").models == ("minimax",)
    assert classify("Improve the scheduler").models == ()


def test_title_tags_in_their_real_forms() -> None:
    assert split_title("[Bugfix][ROCm] Fix x").tags == ("bugfix", "rocm")
    assert split_title("[CuTe,Sm100] x").tags == ("cute,sm100", "cute", "sm100")
    parts = split_title("feat(moe)!: x")
    assert parts.tags == ("feat", "moe") and parts.bang and parts.rest == "x"
    assert split_title("Docs: fix link").tags == ("docs",)


def test_an_editors_taxonomy_changes_the_themes() -> None:
    themes = """
[[themes]]
key = "agents"
title_en = "Agents"
title_zh = "智能体"
keywords = ["agent", "agentic"]
"""
    taxonomy = load_taxonomy(themes, "", "editor.toml")
    assert classify("Agentic rollout harness", taxonomy=taxonomy).primary == "agents"
    assert classify("Faster MoE", taxonomy=taxonomy).primary == "other"
