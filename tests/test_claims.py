"""Project-reported numbers (R6) with their context."""

from service.claims import change_claims, claims_in


def values(title: str, body: str = "") -> list[str]:
    return [c.value for c in change_claims(title, body)]


def test_claim_forms_from_the_seed_digests() -> None:
    assert values("GLM5.3 Flash: default FP8 KV cache, +9.8% E2E throughput") == ["+9.8%"]
    assert values("Kimi K3 decode via CuTeDSL on GB300 (1.5-2x speedup)") == ["1.5-2x"]
    assert values("Stream MiniMax M2 tool args", "A 16KB call drops from 5.9s → 26ms.") == [
        "from 5.9s → 26ms"
    ]
    assert values("Reuse buffers", "Peak memory goes from 29.44 to 32.06 GiB on H200.") == [
        "from 29.44 to 32.06 GiB"
    ]
    assert values("Fuse gather into one Triton kernel (7→1, 6x speedup)") == ["6x"]


def test_claims_keep_context_and_say_who_reported_them() -> None:
    claim = change_claims("x", "On 8×H200 the prefill throughput increases 20.6% at 8K input.")[0]
    assert claim.value == "20.6%"
    assert "prefill throughput" in claim.context
    assert claim.as_json()["reported_by"] == "project"


def test_numbers_that_are_not_performance_claims_are_left_alone() -> None:
    assert values("Bump version to 1.2.0", "All tests pass 100%.") == []
    assert values("Support 2 GPUs", "Coverage is 95%.") == []
    body = "| model | before | after |\n|---|---|---|\n| a | 10 ms | 5 ms 2x faster |"
    assert claims_in(body, "body") == []


def test_quoted_text_is_not_the_projects_claim() -> None:
    body = "> Upstream: 3x faster decode\n\nNo change in speed here."
    assert values("Bump dep", body) == []
