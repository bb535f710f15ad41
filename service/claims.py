"""Project-reported numbers (R6): performance claims in titles, bodies and release notes.

Each claim keeps a short context so an editor can see what was measured; the digest labels
them as reported by the project, never as our measurement. Quoted text (blockquotes,
``<details>``, code) is not the project's own claim and is skipped.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from service.breaking import own_text

MAX_CLAIMS = 3
CONTEXT_CHARS = 160

_NUMBER = r"\d+(?:[.,]\d+)?"
_UNIT = (
    r"(?:\s?(?:ms|us|µs|ns|s|sec|seconds|min|minutes|h|GiB|GB|MiB|MB|KiB|KB|TB|TFLOPS|"
    r"tok/s|tokens/s|token/s|it/s|req/s|QPS|%))"
)
_MULTIPLIER = re.compile(
    rf"(?<![\w.])(?:~|≈|up to\s+)?{_NUMBER}(?:\s?[-–~]\s?{_NUMBER})?\s?(?:x|×|倍)(?![\w])",
    re.IGNORECASE,
)
_PERCENT = re.compile(rf"(?<![\w.])[+\-−]?{_NUMBER}\s?%")
_CHANGE = re.compile(
    rf"(?:from\s+)?(?<![\w.]){_NUMBER}{_UNIT}?\s?(?:→|->|=>|⇒|to)\s?{_NUMBER}{_UNIT}",
    re.IGNORECASE,
)
_PERF_CONTEXT = re.compile(
    r"speed|faster|slower|throughput|latency|ttft|tpot|itl|e2e|end-to-end|qps|tok/s|tokens/s|"
    r"memory|vram|hbm|footprint|reduc|improv|boost|gain|accelerat|perf|overhead|time|drop|cut|"
    r"吞吐|提速|加速|降低|减少|提升|延迟|显存",
    re.IGNORECASE,
)
_NOT_A_CLAIM = re.compile(r"coverage|pass(?:ed|ing)? rate|tests? pass|accuracy drop|\bdone\b")
_SENTENCE = re.compile(r"(?<=[.!?。；;])\s+|\n")


@dataclass(frozen=True)
class Claim:
    value: str  # the number as written: "1.5-2x", "+9.8%", "5.9s → 26ms"
    context: str  # the sentence around it, shortened
    source: str  # "title", "body" or "release_notes"

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "reported_by": "project"}


def _shorten(sentence: str, start: int, end: int) -> str:
    sentence = re.sub(r"\s+", " ", sentence).strip(" -*|#")
    if len(sentence) <= CONTEXT_CHARS:
        return sentence
    half = (CONTEXT_CHARS - (end - start)) // 2
    left = max(start - half, 0)
    snippet = sentence[left : left + CONTEXT_CHARS]
    return ("…" if left else "") + snippet + ("…" if left + CONTEXT_CHARS < len(sentence) else "")


def claims_in(text: str, source: str, limit: int = MAX_CLAIMS) -> list[Claim]:
    found: list[Claim] = []
    seen: set[str] = set()
    lines = own_text(text) if source != "title" else [text]
    for line in lines:
        if line.lstrip().startswith("|") and line.count("|") > 3:
            continue  # benchmark tables: too many numbers without a sentence to hold them
        for sentence in _SENTENCE.split(line):
            if not _PERF_CONTEXT.search(sentence) or _NOT_A_CLAIM.search(sentence.lower()):
                continue
            spans: list[tuple[int, int]] = []
            for pattern in (_CHANGE, _MULTIPLIER, _PERCENT):
                for match in pattern.finditer(sentence):
                    if not any(s <= match.start() < e for s, e in spans):
                        spans.append(match.span())
            for start, end in sorted(spans):
                value = sentence[start:end].strip()
                if value in seen:
                    continue
                seen.add(value)
                found.append(Claim(value, _shorten(sentence, start, end), source))
                if len(found) >= limit:
                    return found
    return found


def change_claims(title: str, body: str) -> list[Claim]:
    claims = claims_in(title, "title")
    return (
        claims + claims_in(body, "body", MAX_CLAIMS - len(claims))
        if len(claims) < MAX_CLAIMS
        else claims
    )
