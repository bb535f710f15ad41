"""Significance of a change (R9): a score with the human-readable reasons behind it."""

from __future__ import annotations

from collections.abc import Sequence

from service.claims import Claim
from service.themes import Classification, Taxonomy
from service.windows import Timing

NOISE_PENALTY = -5.0
SIGNAL_LABELS = frozenset({"highlight", "feature", "new feature", "performance", "enhancement"})


def score_change(
    classification: Classification,
    *,
    breaking: bool,
    claims: Sequence[Claim],
    labels: Sequence[str],
    body: str,
    taxonomy: Taxonomy,
) -> tuple[float, list[str]]:
    """The part of a change's score that depends on the change alone, not on a window;
    ``with_timing`` adds what the window says of it."""
    score = 1.0
    reasons: list[str] = []
    if classification.noise:
        score += NOISE_PENALTY
        reasons.append(f"noise: {classification.noise.replace('_', ' ')}")
    if breaking:
        score += 3
        reasons.append("breaking change")
    if "model_support" in classification.themes:
        score += 2
        reasons.append("new model support")
    if claims:
        score += 1.5
        reasons.append(f"reports performance numbers ({claims[0].value})")
    if classification.models:
        names = [f.name for key in classification.models if (f := taxonomy.family(key))]
        score += 0.5
        reasons.append("touches " + ", ".join(names))
    topical = [t for t in classification.themes if t not in ("bugfix", "other")]
    if topical:
        score += 0.5
        reasons.append(f"theme: {taxonomy.title(topical[0], 'en')}")
    signal = sorted(SIGNAL_LABELS & {label.lower() for label in labels})
    if signal:
        score += 0.5 * len(signal)
        reasons.append("labelled " + ", ".join(signal))
    if len(body) > 1500:
        score += 0.5
        reasons.append("detailed description")
    if classification.themes[0] == "bugfix" and not breaking:
        score -= 0.5
        reasons.append("bug fix")
    return round(score, 2), reasons


def with_timing(
    score: float, reasons: Sequence[str], timing: Timing | None, shipped_stable: bool
) -> tuple[float, list[str]]:
    """A change's score in a window: shipping in it counts, more so in a stable release."""
    if timing not in (Timing.MERGED_AND_RELEASED, Timing.RELEASED_MERGED_EARLIER):
        return score, list(reasons)
    points, reason = (
        (1.5, "shipped in a stable release")
        if shipped_stable
        else (1.0, "shipped in a pre-release")
    )
    return round(score + points, 2), [*reasons, reason]
