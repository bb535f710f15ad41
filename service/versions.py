"""Version strings of release tags and release status (R2).

Tags are parsed with PEP 440 (``packaging``) after the project's prefix is split off
(``v0.31.0``, ``fa4-v4.0.0.beta25``, ``nightly-v0.6.18-20260819``); tags PEP 440 cannot read
fall back to a semver-like reading. ``.postN`` is stable; ``rc``, ``a``, ``b``, ``alpha``,
``beta``, ``dev``, ``nightly`` (and ``preview``) are pre-releases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

_VERSION_START = re.compile(r"(?:^|(?<=[^A-Za-z0-9]))[vV]?(?P<rest>\d+(?:\.\d+)+.*)$")
_PRERELEASE_WORDS = re.compile(
    r"(?:^|[^a-z])(?:rc|alpha|beta|dev|nightly|preview|pre)(?:[^a-z]|$)|\d(?:a|b|rc)\d",
)
_NIGHTLY = re.compile(r"nightly", re.IGNORECASE)
_GENERIC_PREFIX = re.compile(r"^(?:release|version|ver|rel)$", re.IGNORECASE)


@dataclass(frozen=True)
class TagVersion:
    tag: str
    version: str  # normalised (PEP 440 where possible), e.g. "0.7.1rc4"
    line: str  # the version line several pre-releases belong to, e.g. "0.7.1", "fa4-4.0.0"
    prerelease: bool
    nightly: bool
    pep440: bool


def parse_tag(tag: str) -> TagVersion:
    tag = tag.strip()
    nightly = bool(_NIGHTLY.search(tag))
    match = _VERSION_START.search(tag)
    if match is None:
        return TagVersion(tag, tag, tag, prerelease=nightly, nightly=nightly, pep440=False)
    prefix = tag[: match.start("rest")].rstrip("vV").rstrip("-_/. ")
    prefix = _GENERIC_PREFIX.sub("", _NIGHTLY.sub("", prefix)).strip("-_/. ")
    rest = match.group("rest")
    line_prefix = f"{prefix}-" if prefix else ""
    try:
        version = Version(rest)
    except InvalidVersion:
        base = re.match(r"\d+(?:\.\d+)+", rest)
        assert base is not None  # guaranteed by _VERSION_START
        prerelease = nightly or bool(_PRERELEASE_WORDS.search(rest.lower()))
        return TagVersion(
            tag, rest, f"{line_prefix}{base.group(0)}", prerelease, nightly, pep440=False
        )
    if nightly:
        # "nightly-v0.6.18-20260819": PEP 440 reads the date as a post-release; it is a build.
        return TagVersion(
            tag, str(version), f"{line_prefix}{version.base_version}", True, True, True
        )
    return TagVersion(
        tag,
        str(version),
        f"{line_prefix}{version.base_version}",
        prerelease=version.is_prerelease,
        nightly=False,
        pep440=True,
    )


def is_prerelease(tag: str, github_prerelease: bool) -> bool:
    """Pre-release if GitHub says so or the version string says so."""
    return github_prerelease or parse_tag(tag).prerelease
