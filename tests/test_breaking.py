"""Breaking changes (R7) in the release-note styles of the tracked projects, and in PRs."""

from service.breaking import change_is_breaking, release_breaking_changes

VLLM = """## Highlights
This release features 538 commits from 207 contributors (65 new contributors)!
* This release completes the removal of V0 engine. V0 engine code including AsyncLLMEngine, LLMEngine and MQLLMEngine has been removed.
* CUDA graph mode now defaults to FULL_AND_PIECEWISE, which should give better out of the box performance for fine-grained MoEs.

### Model Support
* New architectures: DeepSeek-V3.2-Exp (#25896), Qwen3-VL series (#24727).

### Breaking Changes
* Request-level `mm_processor_kwargs` are rejected by default; pass `--trust-request-mm-kwargs` to allow them (#31002).
* `quantization="fp8"` for online quantization is now an alias of `fp8_per_tensor` (#30871).

### Deprecations
* The `--disable-log-requests` flag is deprecated; use `--enable-log-requests` (#30011).

## What's Changed
* [Bugfix] Fix crash in sampler by @a in https://github.com/vllm-project/vllm/pull/30001
* [Kernel] Faster MLA decode by @b in https://github.com/vllm-project/vllm/pull/30002
"""

TRANSFORMERS = """# Release v5.19.0

## New model additions
### EmbeddingGemma2
EmbeddingGemma2 is a text embedding model.

## Breaking changes
* 🚨🚨 MoE models return router logits through their output classes when `output_router_logits=True` (#41234)
* 🚨 Remove the deprecated `use_auth_token` argument (#41111)

## Bugfixes and improvements
* Fix typo in Llama docs by @c in #41000
* 🚨 [`Attention`] Refactor attention interface for Bart-based models by @vasqu in #38108
"""

SGLANG = """## Highlights
- Prefix cache uses the Rust core by default
- Kimi K3 PP prefill + DCP decode: +20.6% prefill throughput on 8K inputs
- New models: DeepSeek-V4.1 Flash, MiMo-V2.6

## What's Changed
* [Feature] PD role switch by @d in https://github.com/sgl-project/sglang/pull/9001
* [Fix] Radix cache eviction race by @e in https://github.com/sgl-project/sglang/pull/9002
"""

FLASHINFER = """## What's Changed
* feat: NVFP4 SVDQuant GEMM for SM100/SM103 by @f in https://github.com/flashinfer-ai/flashinfer/pull/4401
* refactor!: rename `plan()` argument `kv_layout` to `layout` by @g in https://github.com/flashinfer-ai/flashinfer/pull/4402
* fix(test): repair flaky moe test (#4395) (#4408)
* perf: copy-engine PCIe IPC all-reduce by @h in https://github.com/flashinfer-ai/flashinfer/pull/4410

**Full Changelog**: https://github.com/flashinfer-ai/flashinfer/compare/v0.7.0...v0.7.1rc1
"""

TENSORRT_LLM = """## Announcements
* TensorRT LLM 1.4.0rc0 is a pre-release.

## Key Features and Enhancements
* Model Support
  * Added GLM-5.3-Flash and K-EXAONE-2
* Features
  * Enabled KV cache manager V2 and the Python transceiver by default

## API Changes
* [BREAKING CHANGE] KV cache manager V2 is enabled by default; set `kv_cache_config.use_v2=False` to keep V1
* Removed the `--weight_only_precision` option of `trtllm-build`

## Fixed Issues
* Fixed a crash in SM120 DSA KV append

## Infrastructure Changes
* The base Docker image is updated to `nvcr.io/nvidia/pytorch:26.09-py3`
"""


def test_vllm_sections_and_phrases() -> None:
    lines = release_breaking_changes(VLLM)
    assert lines[0].startswith("This release completes the removal of V0 engine")
    assert any(line.startswith("CUDA graph mode now defaults to") for line in lines)
    assert any("--trust-request-mm-kwargs" in line for line in lines)
    assert any("fp8_per_tensor" in line for line in lines)
    assert any("--disable-log-requests" in line for line in lines)
    assert not any("Fix crash in sampler" in line for line in lines)
    assert not any("New architectures" in line for line in lines)


def test_transformers_breaking_section_and_siren_titles() -> None:
    lines = release_breaking_changes(TRANSFORMERS)
    assert any("router logits" in line for line in lines)
    assert any("use_auth_token" in line for line in lines)
    assert any("Refactor attention interface" in line for line in lines)
    assert not any("typo" in line.lower() for line in lines)
    assert not any("EmbeddingGemma2 is a text embedding model" in line for line in lines)


def test_sglang_highlights_without_breaking_changes_give_none() -> None:
    assert release_breaking_changes(SGLANG) == []


def test_flashinfer_conventional_bang_in_generated_changelog() -> None:
    lines = release_breaking_changes(FLASHINFER)
    assert len(lines) == 1 and "rename `plan()` argument" in lines[0]


def test_tensorrt_llm_api_changes_section() -> None:
    lines = release_breaking_changes(TENSORRT_LLM)
    assert any(line.startswith("[BREAKING CHANGE] KV cache manager V2") for line in lines)
    assert any("--weight_only_precision" in line for line in lines)
    assert not any("Docker image" in line for line in lines)
    assert not any("SM120" in line for line in lines)


def test_quoted_upstream_release_notes_are_not_this_projects_breaking_changes() -> None:
    renovate_body = """This PR contains the following updates: vllm `>=0.18.0` -> `>=0.19.0`

<details>
<summary>vllm-project/vllm (vllm)</summary>

### [`v0.19.0`](https://github.com/vllm-project/vllm/releases/tag/v0.19.0)

#### Breaking Changes
- **BREAKING**: V0 support was removed
- `--distributed-executor-backend` no longer defaults to ray
</details>

> ### Breaking Changes
> * the `--foo` flag has been removed

```
BREAKING CHANGE: quoted in a code block
```
"""
    assert release_breaking_changes(renovate_body) == []
    assert not change_is_breaking(
        "chore(deps): update dependency vllm to >=0.19.0", ["dependencies"], renovate_body
    )
    assert not change_is_breaking("Bump torch from 2.8.0 to 2.9.0", [], "BREAKING CHANGE: x")


def test_pull_request_markers() -> None:
    assert change_is_breaking("feat(api)!: drop the v1 completions route", [], "")
    assert change_is_breaking("[BREAKING] Rename max_num_tokens", [], "")
    assert change_is_breaking("🚨 Remove deprecated use_auth_token", [], "")
    assert change_is_breaking("[V0 Deprecation] Remove V0 MLA backends", [], "")
    assert change_is_breaking("Remove the --disable-log-stats flag", [], "")
    assert change_is_breaking("Refactor scheduler", ["breaking-change"], "")
    assert change_is_breaking(
        "Refactor KV config", [], "Details.\n\nBREAKING CHANGE: `kv_dtype` moved"
    )
    assert not change_is_breaking("[Bugfix] Fix crash when the flag is unset", [], "")
    assert not change_is_breaking('Revert "[BREAKING] Rename max_num_tokens"', [], "")
    assert not change_is_breaking("[Kernel] Add FP8 MoE kernel", [], "")
