"""Breaking changes (R7): from release-note sections and phrases, and from pull requests.

Release notes come in many styles (vLLM's "### Breaking Changes", Transformers' "🚨 Breaking
changes", TensorRT-LLM's "### API Changes" / "BREAKING CHANGE:", FlashInfer's generated
"What's Changed" lists, SGLang's highlights). Text a note or PR *quotes* — blockquotes,
``<details>`` blocks, code fences — is another project's (a dependency bump pasting the
upstream release notes) and never counts: release tooling that read such quotes as "major"
triggered wrong releases.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

MAX_LINE_CHARS = 300

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(?P<title>.+?)\s*#*\s*$")
_BOLD_HEADING = re.compile(r"^\s{0,3}(?:\*\*|__)(?P<title>[^*_]{3,80})(?:\*\*|__):?\s*$")
_BREAKING_SECTION = re.compile(
    r"breaking|backwards?[- ]incompatib|incompatible changes|deprecat|removal|removed|"
    r"upgrade (?:notes|guide)|migration (?:notes|guide)|api changes|behaviou?r changes|"
    r"破坏性|不兼容",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?P<text>.+)$")
# Phrases that mark a breaking change wherever they stand (outside quotes).
_STRONG_PHRASE = re.compile(
    r"\bBREAKING(?:[ _-]CHANGES?)?\b|\bbreaking changes?\b|🚨|\bno longer\b|"
    r"\bnow defaults? to\b|\bdefault (?:is|has been|was) changed\b|\bchanged the default\b|"
    r"\bis now required\b|\bhas been renamed\b|\bwas renamed\b|\brenamed (?:from|to)\b|"
    r"\b(?:has|have) been removed\b|\bis removed\b|\bare removed\b|"
    r"\bremov(?:e|ed|es|ing) (?:the )?(?:deprecated |legacy )?(?:support for|`--|--)|"
    r"\b(?:deprecated|deprecates|deprecation of)\b",
    re.IGNORECASE,
)
_REMOVED_FLAG = re.compile(
    r"\b(?:remove|removed|removes|drop|dropped|drops|delete|deleted)\b[^.\n]{0,60}?"
    r"(?:`?--[a-z0-9][a-z0-9-]*`?|\b(?:cli )?(?:flag|option|argument|env var)s?\b)",
    re.IGNORECASE,
)
_TITLE_MARKER = re.compile(
    r"^\s*[a-z]+(?:\([^)]*\))?!:|\[(?:breaking(?: change)?|deprecation|v0 deprecation)\]|"
    r"\bBREAKING\b|🚨|💔|🪦",
    re.IGNORECASE,
)
# A title that changes a default, renames or drops something users call.
_TITLE_CHANGE = re.compile(
    r"\bnew defaults?\b|\bchange(?:s|d)? (?:the )?default|\b(?:enable|disable|turn on|turn off)"
    r"(?:s|d|ing)?\b.{0,60}\bby default\b|\bdisabl(?:e|es|ing)\b.{0,40}\bdefault\b|"
    r"\brenam(?:e|es|ed|ing)\b"
    r"(?!.{0,40}\b(?:internal|private|variables?|tests?|examples?|docs?|files?|folders?)\b)|"
    r"\bdrop(?:s|ped)?\b.{0,30}\bsupport\b|\bremov(?:e|es|ed)\b.{0,30}\bsupport for\b",
    re.IGNORECASE,
)
_BREAKING_FOOTER = re.compile(r"^BREAKING[ -]CHANGE:", re.MULTILINE)
_DEPENDENCY_BUMP = re.compile(
    r"^\s*(?:build|chore|ci|deps?)\(deps(?:-dev)?\)|^\s*\[?deps?\]?:?\s*bump\b|^\s*bump\s+\S+\s+from\s+|"
    r"^\s*update (?:dependency|dependencies)\b|^\s*\[dependabot\]",
    re.IGNORECASE,
)
_REVERT = re.compile(r"^\s*revert\b", re.IGNORECASE)
_TEST_ONLY = re.compile(r"\b(?:tests?|unit tests?|regression tests?|examples?|benchmarks?)\b", re.I)


def own_text(text: str) -> Iterator[str]:
    """The lines of a note that are the project's own words: no quotes, details or code."""
    in_fence = False
    details_depth = 0
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.rstrip()
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        lowered = stripped.lower()
        details_depth += lowered.count("<details") + lowered.count("<blockquote")
        closing = lowered.count("</details>") + lowered.count("</blockquote>")
        if in_fence or stripped.startswith(">"):
            continue
        if details_depth > 0:
            details_depth = max(details_depth - closing, 0)
            continue
        yield line


def _clean(text: str) -> str:
    text = re.sub(r"<[^>]{0,200}>", "", text)
    text = re.sub(r"\s+", " ", text).strip(" -*:")
    return text[:MAX_LINE_CHARS]


def release_breaking_changes(body: str) -> list[str]:
    """One upgrade-check line per breaking change found in a release's notes."""
    found: list[str] = []
    section_level: int | None = None  # inside a breaking section of this heading level
    for line in own_text(body or ""):
        heading = _HEADING.match(line)
        bold = _BOLD_HEADING.match(line) if heading is None else None
        if heading or bold:
            level = len(heading.group(1)) if heading else 7
            title = (heading or bold).group("title")  # type: ignore[union-attr]
            if _BREAKING_SECTION.search(title):
                section_level = level
            elif section_level is not None and level <= section_level:
                section_level = None
            continue
        bullet = _BULLET.match(line)
        text = bullet.group("text") if bullet else line.strip()
        if not text:
            continue
        if section_level is not None:
            if bullet or len(text) > 20:
                found.append(_clean(text))
        elif (
            _STRONG_PHRASE.search(text)
            or _REMOVED_FLAG.search(text)
            or (bullet and _TITLE_MARKER.search(text))
        ):
            found.append(_clean(text))
    return list(dict.fromkeys(line for line in found if line))


def is_dependency_bump(title: str) -> bool:
    return bool(_DEPENDENCY_BUMP.search(title))


def change_is_breaking(title: str, labels: Sequence[str], body: str) -> bool:
    """Whether a merged pull request is itself a breaking change of its project."""
    if is_dependency_bump(title) or _REVERT.match(title):
        return False
    if any("breaking" in label.lower() for label in labels):
        return True
    if _TITLE_MARKER.search(title) or _TITLE_CHANGE.search(title):
        return True
    if _REMOVED_FLAG.search(title) and not _TEST_ONLY.search(title):
        return True
    own = "\n".join(own_text(body or ""))
    return bool(_BREAKING_FOOTER.search(own))
