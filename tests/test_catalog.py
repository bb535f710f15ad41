"""The default catalog (DESIGN §7) and the validation of editors' copies of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from connectors.pypi import normalize_version
from service.catalog import (
    CATEGORIES,
    DEFAULT_CATALOG,
    CatalogError,
    load_catalog,
    parse_catalog,
)
from service.projects.service import load_projects_file

DESIGN_PROJECTS = {
    "vllm-project/vllm": ("vLLM", "inference"),
    "sgl-project/sglang": ("SGLang", "inference"),
    "vllm-project/vllm-omni": ("vLLM-Omni", "multimodal"),
    "NVIDIA/TensorRT-LLM": ("TensorRT-LLM", "inference"),
    "ModelTC/LightLLM": ("LightLLM", "inference"),
    "lightseekorg/tokenspeed": ("TokenSpeed", "inference"),
    "smg-project/smg": ("SMG", "inference"),
    "vllm-project/vllm-ascend": ("vLLM-Ascend", "inference"),
    "flashinfer-ai/flashinfer": ("FlashInfer", "kernels"),
    "Dao-AILab/flash-attention": ("FlashAttention", "kernels"),
    "NVIDIA/cutlass": ("CUTLASS", "kernels"),
    "triton-lang/triton": ("Triton", "kernels"),
    "triton-lang/triton-ascend": ("Triton-Ascend", "kernels"),
    "tile-ai/tilelang": ("TileLang", "kernels"),
    "pytorch/helion": ("Helion", "kernels"),
    "sgl-project/sgl-kernel-npu": ("SGL-Kernel-NPU", "kernels"),
    "deepseek-ai/DeepGEMM": ("DeepGEMM", "kernels"),
    "deepseek-ai/FlashMLA": ("FlashMLA", "kernels"),
    "kvcache-ai/Mooncake": ("Mooncake", "kernels"),
    "huggingface/transformers": ("Transformers", "model-library"),
    "NVIDIA/TransformerEngine": ("TransformerEngine", "model-library"),
    "verl-project/verl": ("verl", "training"),
    "NVIDIA/Megatron-LM": ("Megatron-LM", "training"),
    "NVIDIA/NeMo-RL": ("NeMo-RL", "training"),
    "huggingface/trl": ("TRL", "training"),
    "THUDM/slime": ("slime", "training"),
    "ByteDance-Seed/VeOmni": ("VeOmni", "training"),
    "comfyanonymous/ComfyUI": ("ComfyUI", "image-video"),
}

MINIMAL = """
[[projects]]
repo = "acme/lib"
name = "Lib"
category = "inference"
"""


def test_default_catalog_lists_every_design_project_as_editors_write_it() -> None:
    catalog = load_catalog()
    assert {p.repo: (p.name, p.category) for p in catalog.projects} == DESIGN_PROJECTS
    assert all(p.category in CATEGORIES for p in catalog.projects)


def test_default_catalog_has_the_three_blogs_as_https_feeds() -> None:
    catalog = load_catalog()
    assert [b.key for b in catalog.blogs] == ["vllm-blog", "lmsys-blog", "pytorch-blog"]
    assert all(b.url.startswith("https://") for b in catalog.blogs)
    vllm_blog = catalog.blog("vllm-blog")
    assert vllm_blog is not None and "vllm-project/vllm" in vllm_blog.projects


def test_pypi_names_are_pep_503_normal() -> None:
    catalog = load_catalog()
    vllm = catalog.project("VLLM-PROJECT/VLLM")
    assert vllm is not None and vllm.pypi == ("vllm",)
    flashinfer = catalog.project("flashinfer-ai/flashinfer")
    assert flashinfer is not None and flashinfer.pypi == ("flashinfer-python",)
    assert all(
        name == name.lower() and "_" not in name for p in catalog.projects for name in p.pypi
    )


def test_flash_attention_tags_split_into_two_version_lines() -> None:
    project = load_catalog().project("Dao-AILab/flash-attention")
    assert project is not None
    fa4 = project.line_for("fa4-v4.0.0.beta25")
    fa2 = project.line_for("v2.8.3")
    assert fa4 is not None and fa4.name == "FlashAttention-4" and fa4.pypi == ("flash-attn-4",)
    assert fa2 is not None and fa2.name == "FlashAttention-2" and fa2.pypi == ("flash-attn",)
    assert normalize_version("fa4-v4.0.0.beta25", fa4.tag_prefix) == "4.0.0b25"
    assert project.line_for("v1.0.9") is None
    assert project.pypi == ("flash-attn", "flash-attn-4")


def test_megatron_core_tags_map_to_megatron_core_wheels() -> None:
    project = load_catalog().project("NVIDIA/Megatron-LM")
    assert project is not None
    line = project.line_for("core_v0.19.2")
    assert line is not None and line.pypi == ("megatron-core",)
    assert normalize_version("core_v0.19.2", line.tag_prefix) == "0.19.2"


def test_flashinfer_nightlies_are_not_releases() -> None:
    project = load_catalog().project("flashinfer-ai/flashinfer")
    assert project is not None and not project.nightly_releases
    assert project.line_for("nightly-v0.6.18-20260816") is None
    assert project.line_for("v0.6.17") is not None


def test_projects_without_lines_take_every_tag() -> None:
    project = load_catalog().project("huggingface/transformers")
    assert project is not None and project.line_for("v5.23.0") is not None
    assert project.default_branch is None and not project.tags_only


def test_comfyui_default_branch_is_master() -> None:
    project = load_catalog().project("comfyanonymous/ComfyUI")
    assert project is not None and project.default_branch == "master"


def test_catalog_doubles_as_a_projects_file() -> None:
    specs = load_projects_file(DEFAULT_CATALOG)
    assert specs == load_catalog().project_specs()
    assert len(specs) == len(DESIGN_PROJECTS)


def test_minimal_catalog_gets_defaults() -> None:
    catalog = parse_catalog(MINIMAL)
    (project,) = catalog.projects
    assert project.pypi == () and not project.nightly_releases and not project.tags_only
    assert catalog.blogs == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[projects]]\nrepo = 'not a slug'\nname = 'X'\ncategory = 'kernels'", "not a slug"),
        (MINIMAL.replace('"inference"', '"gpu"'), r"acme/lib.*category 'gpu'"),
        (MINIMAL + "tag_patern = 'v*'\n", r"acme/lib.*unknown keys \['tag_patern'\]"),
        (MINIMAL + "pypi = 'vllm'\n", r"acme/lib.*'pypi' must be a list"),
        (MINIMAL + "tags_only = 'yes'\n", r"acme/lib.*'tags_only' must be true or false"),
        (MINIMAL + MINIMAL.replace("acme/lib", "ACME/Lib"), r"project 2 \(ACME/Lib\).*twice"),
        (MINIMAL.replace('name = "Lib"', 'name = ""'), r"acme/lib.*'name'"),
        (
            MINIMAL + "pypi = ['x']\n[[projects.lines]]\nname = 'A'\ntag_pattern = 'a*'\n",
            r"acme/lib.*per line",
        ),
        (
            MINIMAL + "[[projects.lines]]\nname = 'A'\n",
            r"acme/lib\) line 1.*'tag_pattern'",
        ),
        (
            MINIMAL + "[[blogs]]\nkey = 'b'\nname = 'B'\nurl = 'file:///etc/passwd'\n",
            r"blog 1 \(b\).*http\(s\) URL",
        ),
        (
            MINIMAL + "[[blogs]]\nkey = 'b'\nname = 'B'\nurl = 'https://b/'\nprojects = ['x/y']\n",
            r"blog 1 \(b\).*'x/y' is not in the catalog",
        ),
        ("[[projects]]\nrepo = ", "not valid TOML"),
        ("[other]\n", "unknown top-level keys"),
        ("", r"non-empty \[\[projects\]\]"),
    ],
)
def test_invalid_catalogs_are_refused_naming_the_entry(text: str, message: str) -> None:
    with pytest.raises(CatalogError, match=message):
        parse_catalog(text, "editor.toml")


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="cannot read catalog"):
        load_catalog(tmp_path / "absent.toml")


def test_an_editors_copy_is_loaded_from_its_path(tmp_path: Path) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(DEFAULT_CATALOG.read_text() + MINIMAL, encoding="utf-8")
    assert load_catalog(path).project("acme/lib") is not None
