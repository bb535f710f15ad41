"""Turn connector records into store rows: clean text, parsed versions, PR references."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from connectors.github import PullRecord, ReleaseRecord
from service.versions import is_prerelease, parse_tag

MAX_BODY_CHARS = 200_000
MAX_TITLE_CHARS = 1000
# NUL is refused by PostgreSQL text; other C0 controls only break rendering.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_PULL_REFERENCE = re.compile(r"\(#(\d{1,9})\)|\bMerge pull request #(\d{1,9})\b")


def clean_text(value: str | None, limit: int) -> str:
    if not value:
        return ""
    return _CONTROL_CHARS.sub("", value)[:limit]


def release_row(record: ReleaseRecord) -> dict[str, Any] | None:
    """Column values of a release, or None for drafts and unpublished releases."""
    if record.draft or record.published_at is None:
        return None
    tag = clean_text(record.tag, 300)
    parsed = parse_tag(tag)
    return {
        "github_id": record.github_id,
        "tag": tag,
        "version": parsed.version[:300],
        "version_line": parsed.line[:300],
        "name": clean_text(record.name, 500) or None,
        "published_at": record.published_at,
        "created_at": record.created_at,
        "prerelease": is_prerelease(tag, record.prerelease),
        "github_prerelease": record.prerelease,
        "url": record.html_url[:1000],
        "body": clean_text(record.body, MAX_BODY_CHARS),
        "target_commitish": clean_text(record.target_commitish, 300) or None,
    }


def tag_release_row(
    tag: str, sha: str, committed_at: datetime, repo_web_url: str
) -> dict[str, Any]:
    """Column values of a version a project tagged without a GitHub release."""
    tag = clean_text(tag, 300)
    parsed = parse_tag(tag)
    return {
        "github_id": None,
        "tag": tag,
        "version": parsed.version[:300],
        "version_line": parsed.line[:300],
        "name": tag,
        "published_at": committed_at,
        "created_at": committed_at,
        "prerelease": parsed.prerelease,
        "github_prerelease": False,
        "url": f"{repo_web_url}/tree/{tag}"[:1000],
        "body": "",
        "target_commitish": None,
        "tag_commit_sha": sha,
        "tag_only": True,
    }


def change_row(record: PullRecord) -> dict[str, Any] | None:
    """Column values of a merged pull request, or None if it was closed unmerged."""
    if record.merged_at is None:
        return None
    return {
        "github_id": record.github_id,
        "number": record.number,
        "title": clean_text(record.title, MAX_TITLE_CHARS),
        "body": clean_text(record.body, MAX_BODY_CHARS),
        "author": clean_text(record.author, 200) or None,
        "labels": sorted({clean_text(label, 200) for label in record.labels}),
        "merged_at": record.merged_at,
        "merge_commit_sha": record.merge_commit_sha,
        "base_branch": clean_text(record.base_branch, 300) or None,
        "url": record.html_url[:1000],
        "github_updated_at": record.updated_at,
    }


def referenced_pull_numbers(subject: str) -> set[int]:
    """PR numbers a commit subject names: squash merges and cherry-picks ``... (#4395) (#4408)``
    and merge commits ``Merge pull request #12 from ...``."""
    return {int(a or b) for a, b in _PULL_REFERENCE.findall(subject)}


def release_note_pull_numbers(body: str, web_url: str, repo: str) -> set[int]:
    """PR numbers of this repository linked from release notes."""
    pattern = re.compile(
        re.escape(f"{web_url.rstrip('/')}/{repo}/pull/") + r"(\d{1,9})\b", re.IGNORECASE
    )
    return {int(number) for number in pattern.findall(body)}
