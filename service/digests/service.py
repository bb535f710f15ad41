"""Build the draft digest of a UTC window.

Releases of the window (with their breaking changes and RC series), the version table, and
the window's changes — merged in it, or merged earlier and shipped in it — each classified
(themes, model families, noise), scored, and grouped by primary theme.
"""

from __future__ import annotations

import gc
import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from sqlalchemy import Row, and_, or_, select, tuple_
from sqlalchemy.orm import Session, defer

from service.analysis import (
    ChangeAnalysis,
    analyze_change,
    is_stale,
    release_analysis,
)
from service.changes.models import Change
from service.claims import change_claims
from service.curation import service as curation
from service.digests.models import PublishedDigest, PublishedItem
from service.posts import service as posts
from service.posts.models import Feed, Post
from service.projects.models import Project
from service.releases.models import PackageAvailability, Release
from service.significance import with_timing
from service.themes import OTHER, Taxonomy, classify, default_taxonomy
from service.windows import Timing, Window, iso_utc, timing_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DraftOptions:
    include_all: bool = False
    repo_key: str | None = None
    model: str | None = None


def release_json(release: Release, project: Project, taxonomy: Taxonomy) -> dict[str, Any]:
    analysis = release_analysis(release, taxonomy)
    return {
        "key": curation.release_key(project.repo, release.tag),
        "repo": project.repo,
        "project": project.name,
        "tag": release.tag,
        "version": release.version,
        "version_line": release.version_line,
        "name": release.name,
        "published_at": iso_utc(release.published_at),
        "prerelease": release.prerelease,
        "url": release.url,
        "breaking_changes": list(analysis.breaking_changes),
        "claims": [dict(c) for c in analysis.claims],
    }


def windowed_releases(session: Session, window: Window, repo_key: str | None) -> list[Any]:
    query = (
        select(Release, Project)
        .join(Project, Project.id == Release.project_id)
        .options(defer(Release.body))  # read only if its stored analysis is out of date
        .where(Release.published_at >= window.start, Release.published_at < window.end)
        .order_by(Release.published_at, Release.id)
    )
    if repo_key is not None:
        query = query.where(Project.repo_key == repo_key)
    return list(session.execute(query))


CHANGE_COLUMNS = (
    Change.id,
    Change.project_id,
    Change.number,
    Change.title,
    Change.url,
    Change.author,
    Change.labels,
    Change.merged_at,
    Change.first_release_id,
    Change.first_stable_release_id,
    Change.analysis,
    Change.analysis_version,
    Change.noise,
    Change.breaking,
)


@dataclass(frozen=True)
class ProjectRef:
    repo: str
    name: str
    category: str | None


@dataclass(frozen=True)
class ReleaseRef:
    tag: str
    version: str
    published_at: datetime
    prerelease: bool
    url: str

    @cached_property
    def json(self) -> dict[str, Any]:
        """Shared by every item the release shipped: treat it as read-only."""
        return {
            "tag": self.tag,
            "version": self.version,
            "published_at": iso_utc(self.published_at),
            "prerelease": self.prerelease,
            "url": self.url,
        }


def release_ref(release: Release) -> ReleaseRef:
    return ReleaseRef(
        release.tag, release.version, release.published_at, release.prerelease, release.url
    )


def windowed_changes(
    session: Session, window: Window, release_ids: list[int], project_id: int | None
) -> list[Row[Any]]:
    """Changes merged in the window, and changes merged earlier but shipped in it: the
    columns a draft shows, never bodies."""
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
    query = select(*CHANGE_COLUMNS).where(condition)
    if project_id is not None:
        query = query.where(Change.project_id == project_id)
    # plain rows: through the connection, without the ORM's result machinery
    return list(session.connection().execute(query))


def project_refs(session: Session, ids: Iterable[int]) -> dict[int, ProjectRef]:
    wanted = set(ids)
    if not wanted:
        return {}
    rows = session.execute(
        select(Project.id, Project.repo, Project.name, Project.category).where(
            Project.id.in_(wanted)
        )
    )
    return {row.id: ProjectRef(row.repo, row.name, row.category) for row in rows}


def release_refs(
    session: Session, ids: Iterable[int | None], known: dict[int, ReleaseRef]
) -> dict[int, ReleaseRef]:
    """Release id → its reference, reading only the releases not already ``known``."""
    refs = dict(known)
    missing = {i for i in ids if i is not None and i not in refs}
    if missing:
        for row in session.execute(
            select(
                Release.id,
                Release.tag,
                Release.version,
                Release.published_at,
                Release.prerelease,
                Release.url,
            ).where(Release.id.in_(missing))
        ):
            refs[row.id] = ReleaseRef(
                row.tag, row.version, row.published_at, row.prerelease, row.url
            )
    return refs


def change_analyses(
    session: Session, rows: Sequence[Row[Any]], projects: dict[int, ProjectRef], taxonomy: Taxonomy
) -> dict[int, ChangeAnalysis]:
    """Change id → its analysis: the stored one, or, for a change stored under another
    taxonomy version (until the worker re-analyses it), one made now."""
    found: dict[int, ChangeAnalysis] = {}
    stale: list[int] = []
    for row in rows:
        if row.analysis is not None and not is_stale(row.analysis_version, taxonomy):
            found[row.id] = ChangeAnalysis.from_columns(row.analysis, row.noise, row.breaking)
        else:
            stale.append(row.id)
    if stale:
        log.info(
            "%d change(s) stored under another analysis version; analysing them now",
            len(stale),
            extra={"changes": len(stale)},
        )
        for start in range(0, len(stale), 500):
            for row in session.execute(
                select(
                    Change.id, Change.project_id, Change.title, Change.labels, Change.body
                ).where(Change.id.in_(stale[start : start + 500]))
            ):
                project = projects.get(row.project_id)
                found[row.id] = analyze_change(
                    row.title,
                    row.labels or [],
                    row.body,
                    project.category if project else None,
                    taxonomy,
                )
    return found


def change_item(
    row: Row[Any],
    project: ProjectRef,
    analysis: ChangeAnalysis,
    first: ReleaseRef | None,
    first_stable: ReleaseRef | None,
    timing: Timing | None,
) -> dict[str, Any]:
    score, reasons = with_timing(
        analysis.score, analysis.reasons, timing, shipped_stable=first_stable is not None
    )
    return {
        "kind": "pull_request",
        "key": curation.pull_request_key(project.repo, row.number),
        "repo": project.repo,
        "project": project.name,
        "number": row.number,
        "title": row.title,
        "url": row.url,
        "author": row.author,
        "labels": list(row.labels or []),
        "merged_at": iso_utc(row.merged_at),
        "first_release": first.json if first else None,
        "first_stable_release": first_stable.json if first_stable else None,
        "timing": timing.value if timing else None,
        "themes": list(analysis.themes),
        "primary_theme": analysis.primary,
        "models": list(analysis.models),
        "noise": analysis.noise,
        "breaking": analysis.breaking,
        "claims": [dict(c) for c in analysis.claims],
        "score": score,
        "reasons": reasons,
        "previously_reported": None,
        "sources": [row.url] if row.url else [],
        "pinned": False,
        "editor_note": None,
    }


def change_items(
    session: Session,
    rows: Sequence[Row[Any]],
    window: Window | None,
    taxonomy: Taxonomy,
    known_releases: dict[int, ReleaseRef],
) -> list[dict[str, Any]]:
    """Draft items of change rows; with a window, only those it says something of (R3)."""
    projects = project_refs(session, (row.project_id for row in rows))
    releases = release_refs(
        session,
        (i for row in rows for i in (row.first_release_id, row.first_stable_release_id)),
        known_releases,
    )
    analyses = change_analyses(session, rows, projects, taxonomy)
    items = []
    for row in rows:
        first = releases.get(row.first_release_id) if row.first_release_id else None
        first_stable = (
            releases.get(row.first_stable_release_id) if row.first_stable_release_id else None
        )
        timing = None
        if window is not None:
            timing = timing_of(
                window,
                row.merged_at,
                first.published_at if first else None,
                first_stable.published_at if first_stable else None,
            )
            if timing is None:
                continue
        items.append(
            change_item(
                row, projects[row.project_id], analyses[row.id], first, first_stable, timing
            )
        )
    return items


def post_item(post: Post, feed: Feed, taxonomy: Taxonomy) -> dict[str, Any]:
    classification = classify(post.title, list(post.tags or []), taxonomy=taxonomy)
    claims = change_claims(post.title, post.summary)
    return {
        "kind": "post",
        "key": f"post:{feed.key}:{post.id}",
        "repo": None,
        "project": feed.name,
        "number": None,
        "title": post.title,
        "url": post.link,
        "author": ", ".join(post.authors or []) or None,
        "labels": list(post.tags or []),
        "merged_at": None,
        "published_at": iso_utc(post.published_at),
        "undated": post.undated,
        "first_release": None,
        "first_stable_release": None,
        "timing": None,
        "themes": list(classification.themes),
        "primary_theme": classification.primary,
        "models": list(classification.models),
        "noise": None,
        "breaking": False,
        "claims": [c.as_json() for c in claims],
        "score": 2.5 + (1.0 if claims else 0.0),
        "reasons": ["official blog post"] + (["reports performance numbers"] if claims else []),
        "previously_reported": None,
        "sources": [post.link] if post.link else [],
        "pinned": False,
        "editor_note": None,
    }


def pypi_status(session: Session, release_rows: list[Any]) -> dict[int, list[dict[str, Any]]]:
    """Release id → what PyPI offers of it (only for releases of projects with PyPI names)."""
    ids = [release.id for release, _ in release_rows]
    found: dict[int, list[dict[str, Any]]] = defaultdict(list)
    if ids:
        for row in session.scalars(
            select(PackageAvailability).where(PackageAvailability.release_id.in_(ids))
        ):
            found[row.release_id].append(
                {
                    "package": row.package,
                    "version": row.version,
                    "status": row.status,
                    "first_wheel_upload": iso_utc(row.first_wheel_upload)
                    if row.first_wheel_upload
                    else None,
                    "checked_at": iso_utc(row.checked_at),
                }
            )
    return found


def _short_series(first: Release, latest: Release) -> str:
    """ "0.7.1rc1 → rc4": the later version without the part both share."""
    if first.id == latest.id:
        return first.version
    tail = latest.version
    if tail.startswith(latest.version_line) and first.version.startswith(latest.version_line):
        tail = tail[len(latest.version_line) :].lstrip(".-") or latest.version
    return f"{first.version} → {tail}"


def earlier_prereleases(
    session: Session, lines: list[tuple[int, str]], window: Window
) -> dict[tuple[int, str], list[str]]:
    """(project id, version line) → tags of its pre-releases published before the window."""
    found: dict[tuple[int, str], list[str]] = defaultdict(list)
    for start in range(0, len(lines), 200):
        rows = session.execute(
            select(Release.project_id, Release.version_line, Release.tag)
            .where(
                tuple_(Release.project_id, Release.version_line).in_(lines[start : start + 200]),
                Release.prerelease.is_(True),
                Release.published_at < window.start,
            )
            .order_by(Release.published_at, Release.id)
        )
        for project_id, line, tag in rows:
            found[(project_id, line)].append(tag)
    return found


def version_table(
    session: Session, release_rows: list[Any], window: Window
) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
    """One row per project and version line; RC iterations in the window collapse into one."""
    grouped: dict[tuple[int, str], list[tuple[Release, Project]]] = defaultdict(list)
    for release, project in release_rows:
        grouped[(project.id, release.version_line)].append((release, project))
    rows: list[dict[str, Any]] = []
    series_by_release: dict[int, dict[str, Any]] = {}
    earlier = earlier_prereleases(session, list(grouped), window)
    for (project_id, line), members in grouped.items():
        releases = [r for r, _ in members]
        project = members[0][1]
        first, latest = releases[0], releases[-1]
        earlier_prereleases_of_line = earlier.get((project_id, line), [])
        if latest.prerelease:
            status = "prerelease"
        elif earlier_prereleases_of_line:
            status = "rc_to_stable"
        else:
            status = "stable"
        series = {
            "line": line,
            "iterations": [r.tag for r in releases],
            "latest": latest.tag,
            "stable": not latest.prerelease,
            "status": status,
            "earlier_prereleases": earlier_prereleases_of_line,
            "text": _short_series(first, latest),
        }
        for release in releases:
            series_by_release[release.id] = series
        rows.append(
            {
                "repo": project.repo,
                "project": project.name,
                "version_line": line,
                "versions": series["text"],
                "latest_tag": latest.tag,
                "latest_version": latest.version,
                "published_at": iso_utc(latest.published_at),
                "status": status,
                "iterations": len(releases),
                "earlier_prereleases": earlier_prereleases_of_line,
                "url": latest.url,
            }
        )
    rows.sort(key=lambda r: (r["project"].lower(), r["published_at"]))
    return rows, series_by_release


def upgrade_checks(
    releases: list[dict[str, Any]], items: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    checks = [
        {
            "repo": r["repo"],
            "project": r["project"],
            "release": r["tag"],
            "number": None,
            "text": line,
            "url": r["url"],
        }
        for r in releases
        for line in r["breaking_changes"]
    ]
    checks.extend(
        {
            "repo": i["repo"],
            "project": i["project"],
            "release": (i["first_release"] or {}).get("tag"),
            "number": i["number"],
            "text": i["title"],
            "url": i["url"],
        }
        for i in items
        if i["breaking"]
    )
    return checks


def previously_reported(
    session: Session, keys: list[str], window: Window
) -> dict[str, dict[str, Any]]:
    """Item key → the first published issue (of another window) that carried it (R4)."""
    if not keys:
        return {}
    rows = session.execute(
        select(PublishedItem.item_key, PublishedDigest.number, PublishedDigest.published_at)
        .join(PublishedDigest, PublishedDigest.number == PublishedItem.digest_number)
        .where(
            PublishedItem.item_key.in_(keys),
            or_(
                PublishedDigest.window_start != window.first_day,
                PublishedDigest.window_end != window.last_day,
            ),
        )
        .order_by(PublishedDigest.number)
    )
    found: dict[str, dict[str, Any]] = {}
    for key, number, published_at in rows:
        found.setdefault(key, {"issue": number, "published_at": iso_utc(published_at)})
    return found


def _frame_releases(releases: list[dict[str, Any]], items: list[dict[str, Any]]) -> None:
    """Say of each release which of the changes it ships were already reported (R4)."""
    shipped_by: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        tags = {
            (ref or {}).get("tag") for ref in (item["first_release"], item["first_stable_release"])
        }
        for tag in tags - {None}:
            shipped_by[(item["repo"], tag)].append(item)
    for release in releases:
        shipped = shipped_by.get((release["repo"], release["tag"]), [])
        reported = [i["number"] for i in shipped if i["previously_reported"]]
        release["ships_changes"] = len(shipped)
        release["ships_previously_reported"] = reported
        release["only_previously_reported"] = bool(shipped) and len(reported) == len(shipped)


@dataclass(frozen=True)
class WindowMaterial:
    """What a window's draft is made of before curation, read from the store: its version
    table, releases and items (in draft order). Nothing changes it afterwards (curation
    copies the items it changes), so one material serves every draft of the window until the
    store changes."""

    window: Window
    repo_key: str | None
    versions: list[dict[str, Any]]
    releases: list[dict[str, Any]]
    items: list[dict[str, Any]]


def build_draft(
    session: Session,
    window: Window,
    *,
    include_all: bool = False,
    repo_key: str | None = None,
    model: str | None = None,
    taxonomy: Taxonomy | None = None,
    curated: bool = True,
    material: WindowMaterial | None = None,
) -> dict[str, Any]:
    """The draft of a window; ``curated`` applies the editors' curation of that window.
    ``material`` is the window's, when the caller already has it."""
    taxonomy = taxonomy or default_taxonomy()
    with collector_paused():
        if material is None:
            material = window_material(session, window, repo_key=repo_key, taxonomy=taxonomy)
        state = curation.load(session, window) if curated else curation.CurationState()
        return assemble_draft(
            material, state, include_all=include_all, model=model, taxonomy=taxonomy
        )


@contextmanager
def collector_paused() -> Iterator[None]:
    # A draft allocates thousands of acyclic dicts in one burst; the cyclic collector would
    # run many times over the whole heap meanwhile (a quarter of the build time), for no
    # garbage. It runs again as soon as the draft is built.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def window_material(
    session: Session,
    window: Window,
    *,
    repo_key: str | None = None,
    taxonomy: Taxonomy | None = None,
) -> WindowMaterial:
    taxonomy = taxonomy or default_taxonomy()
    release_rows = windowed_releases(session, window, repo_key)
    versions, series = version_table(session, release_rows, window)
    availability = pypi_status(session, release_rows)
    releases = []
    for release, project in release_rows:
        entry = release_json(release, project, taxonomy)
        entry["series"] = series[release.id]
        entry["pypi"] = availability.get(release.id, [])
        # "released on GitHub, not yet installable from PyPI" (seed 000)
        entry["not_on_pypi_yet"] = (
            bool(entry["pypi"])
            and not release.prerelease
            and not any(p["status"] == "wheel" for p in entry["pypi"])
        )
        releases.append(entry)
    for row in versions:
        latest = next(
            r for r in releases if r["tag"] == row["latest_tag"] and r["repo"] == row["repo"]
        )
        row["not_on_pypi_yet"] = latest["not_on_pypi_yet"]

    project_id = (
        session.scalar(select(Project.id).where(Project.repo_key == repo_key)) if repo_key else None
    )
    change_rows = windowed_changes(
        session, window, [release.id for release, _ in release_rows], project_id
    )
    items = change_items(
        session,
        change_rows,
        window,
        taxonomy,
        {release.id: release_ref(release) for release, _ in release_rows},
    )
    for post, feed in posts.window_posts(session, window):
        if repo_key is None or repo_key in {p.lower() for p in feed.projects or []}:
            items.append(post_item(post, feed, taxonomy))
    reported = previously_reported(session, [i["key"] for i in items], window)
    for item in items:
        item["previously_reported"] = reported.get(item["key"])
    _frame_releases(releases, items)
    items.sort(key=draft_order)
    return WindowMaterial(window, repo_key, versions, releases, items)


def draft_order(item: dict[str, Any]) -> tuple[float, str, str, int]:
    """Highest score first; curation never changes what this reads."""
    return (-item["score"], item["repo"] or "", item["merged_at"] or "", item["number"] or 0)


def assemble_draft(
    material: WindowMaterial,
    state: curation.CurationState,
    *,
    include_all: bool,
    model: str | None,
    taxonomy: Taxonomy,
) -> dict[str, Any]:
    """A draft from a window's material and its curation; reads nothing, changes nothing."""
    releases = material.releases
    all_items, excluded = curation.apply(material.items, state)
    if model:
        all_items = [i for i in all_items if model.lower() in i["models"]]
    touched = {key for key, s in state.items.items() if s.pinned or s.theme or s.title}
    shown = [i for i in all_items if include_all or not i["noise"] or i["key"] in touched]
    if state.manual:  # the material's own items come in draft order already
        shown.sort(key=draft_order)

    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in shown:
        grouped["pinned" if item["pinned"] else item["primary_theme"]].append(item)
    theme_order = ["pinned"] + [t.key for t in taxonomy.themes] + [OTHER]
    known_keys = set(theme_order)
    theme_order += sorted(k for k in grouped if k not in known_keys)  # moved to a retired key
    themes = [
        {
            "key": key,
            "title": curation.PINNED_THEME["title"]
            if key == "pinned"
            else taxonomy.title(key, "en"),
            "title_zh": curation.PINNED_THEME["title_zh"]
            if key == "pinned"
            else taxonomy.title(key, "zh"),
            "items": grouped[key],
        }
        for key in theme_order
        if grouped.get(key)
    ]
    by_timing: dict[str, int] = defaultdict(int)
    for item in shown:
        if item["timing"]:
            by_timing[item["timing"]] += 1
    return {
        "window": material.window.as_json(),
        "include": "all" if include_all else "highlights",
        "model": model,
        "counts": {
            "releases": len(releases),
            "changes": len(shown),
            "noise_hidden": 0 if include_all else len(all_items) - len(shown),
            "by_timing": {t.value: by_timing.get(t.value, 0) for t in Timing},
        },
        "versions": material.versions,
        "releases": releases,
        "themes": themes,
        "excluded": excluded,
        "upgrade_checks": upgrade_checks(releases, shown),
    }


def release_changes_by_theme(
    session: Session, release_id: int, taxonomy: Taxonomy | None = None
) -> list[dict[str, Any]]:
    """The changes a release first shipped (first release or first stable release), by theme."""
    taxonomy = taxonomy or default_taxonomy()
    rows = list(
        session.execute(
            select(*CHANGE_COLUMNS).where(
                or_(
                    Change.first_release_id == release_id,
                    Change.first_stable_release_id == release_id,
                )
            )
        )
    )
    items = change_items(session, rows, None, taxonomy, {})
    items.sort(key=lambda i: (-i["score"], i["merged_at"], i["number"]))
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        grouped[item["primary_theme"]].append(item)
    return [
        {"key": key, "title": taxonomy.title(key, "en"), "items": grouped[key]}
        for key in [t.key for t in taxonomy.themes] + [OTHER]
        if grouped.get(key)
    ]
