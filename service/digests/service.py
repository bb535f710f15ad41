"""Build the draft digest of a UTC window: its releases and its changes with their timing."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import Select, and_, or_, select
from sqlalchemy.orm import Session, aliased

from service.changes.models import Change
from service.projects.models import Project
from service.releases.models import Release
from service.windows import Timing, Window, iso_utc, timing_of

CATCH_ALL_THEME = {"key": "all", "title": "All changes"}
TIMING_ORDER = {
    Timing.MERGED_AND_RELEASED: 0,
    Timing.RELEASED_MERGED_EARLIER: 1,
    Timing.MERGED_UNRELEASED: 2,
}

FirstRelease = aliased(Release, name="first_release")
FirstStable = aliased(Release, name="first_stable_release")


def release_json(release: Release, project: Project) -> dict[str, Any]:
    return {
        "repo": project.repo,
        "project": project.name,
        "tag": release.tag,
        "version": release.version,
        "version_line": release.version_line,
        "name": release.name,
        "published_at": iso_utc(release.published_at),
        "prerelease": release.prerelease,
        "url": release.url,
        "breaking_changes": [],
    }


def release_ref(release: Release | None) -> dict[str, Any] | None:
    if release is None:
        return None
    return {
        "tag": release.tag,
        "published_at": iso_utc(release.published_at),
        "prerelease": release.prerelease,
    }


def windowed_releases(session: Session, window: Window, repo_key: str | None) -> list[Any]:
    query = (
        select(Release, Project)
        .join(Project, Project.id == Release.project_id)
        .where(Release.published_at >= window.start, Release.published_at < window.end)
        .order_by(Release.published_at, Release.id)
    )
    if repo_key is not None:
        query = query.where(Project.repo_key == repo_key)
    return list(session.execute(query))


def _change_query() -> Select[Any]:
    return (
        select(Change, Project, FirstRelease, FirstStable)
        .join(Project, Project.id == Change.project_id)
        .outerjoin(FirstRelease, FirstRelease.id == Change.first_release_id)
        .outerjoin(FirstStable, FirstStable.id == Change.first_stable_release_id)
    )


def windowed_changes(
    session: Session, window: Window, release_ids: list[int], repo_key: str | None
) -> list[Any]:
    """Changes merged in the window, and changes merged earlier but shipped in it."""
    merged_in_window = and_(Change.merged_at >= window.start, Change.merged_at < window.end)
    condition = merged_in_window
    if release_ids:
        shipped_in_window = and_(
            Change.merged_at < window.start,
            or_(
                Change.first_release_id.in_(release_ids),
                Change.first_stable_release_id.in_(release_ids),
            ),
        )
        condition = or_(merged_in_window, shipped_in_window)
    query = _change_query().where(condition)
    if repo_key is not None:
        query = query.where(Project.repo_key == repo_key)
    return list(session.execute(query))


def change_item(
    change: Change,
    project: Project,
    first: Release | None,
    first_stable: Release | None,
    timing: Timing | None,
) -> dict[str, Any]:
    return {
        "kind": "pull_request",
        "repo": project.repo,
        "project": project.name,
        "number": change.number,
        "title": change.title,
        "url": change.url,
        "author": change.author,
        "labels": list(change.labels or []),
        "merged_at": iso_utc(change.merged_at),
        "first_release": release_ref(first),
        "first_stable_release": release_ref(first_stable),
        "timing": timing.value if timing else None,
        "themes": [],
        "models": [],
        "breaking": False,
        "claims": [],
        "score": 0.0,
        "reasons": [],
        "previously_reported": None,
        "sources": [change.url] if change.url else [],
    }


def series_of(rows: list[Any]) -> dict[tuple[int, str], dict[str, Any]]:
    """Releases of one version line of one project in the window: "rc1 → rc4, latest rc4"."""
    grouped: dict[tuple[int, str], list[Release]] = defaultdict(list)
    for release, project in rows:
        grouped[(project.id, release.version_line)].append(release)
    return {
        key: {
            "line": key[1],
            "iterations": [r.tag for r in releases],
            "latest": releases[-1].tag,
            "stable": any(not r.prerelease for r in releases),
        }
        for key, releases in grouped.items()
    }


def build_draft(
    session: Session, window: Window, *, include_all: bool = False, repo_key: str | None = None
) -> dict[str, Any]:
    release_rows = windowed_releases(session, window, repo_key)
    series = series_of(release_rows)
    releases = []
    for release, project in release_rows:
        entry = release_json(release, project)
        entry["series"] = series[(project.id, release.version_line)]
        releases.append(entry)

    items = []
    for change, project, first, first_stable in windowed_changes(
        session, window, [release.id for release, _ in release_rows], repo_key
    ):
        timing = timing_of(
            window,
            change.merged_at,
            first.published_at if first else None,
            first_stable.published_at if first_stable else None,
        )
        if timing is None:
            continue
        items.append(change_item(change, project, first, first_stable, timing))
    items.sort(
        key=lambda i: (TIMING_ORDER[Timing(i["timing"])], i["repo"], i["merged_at"], i["number"])
    )

    counts: dict[str, int] = defaultdict(int)
    for item in items:
        counts[item["timing"]] += 1
    return {
        "window": window.as_json(),
        "include": "all" if include_all else "highlights",
        "counts": {
            "releases": len(releases),
            "changes": len(items),
            "by_timing": {t.value: counts.get(t.value, 0) for t in Timing},
        },
        "releases": releases,
        "themes": [{**CATCH_ALL_THEME, "items": items}] if items else [],
    }


def release_changes_by_theme(session: Session, release_id: int) -> list[dict[str, Any]]:
    """The changes a release first shipped (first release or first stable release), by theme."""
    rows = session.execute(
        _change_query().where(
            or_(Change.first_release_id == release_id, Change.first_stable_release_id == release_id)
        )
    )
    items = [change_item(c, p, f, s, None) for c, p, f, s in rows]
    items.sort(key=lambda i: (i["merged_at"], i["number"]))
    return [{**CATCH_ALL_THEME, "items": items}] if items else []
