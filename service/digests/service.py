"""Build the draft digest of a UTC window.

Releases of the window (with their breaking changes and RC series), the version table, and
the window's changes — merged in it, or merged earlier and shipped in it — each classified
(themes, model families, noise), scored, and grouped by primary theme.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, and_, or_, select
from sqlalchemy.orm import Session, aliased, defer

from service.breaking import change_is_breaking, release_breaking_changes
from service.changes.models import Change
from service.claims import change_claims, claims_in
from service.curation import service as curation
from service.digests.models import PublishedDigest, PublishedItem
from service.posts import service as posts
from service.posts.models import Feed, Post
from service.projects.models import Project
from service.releases.models import PackageAvailability, Release
from service.significance import score_change
from service.themes import OTHER, Taxonomy, classify, default_taxonomy
from service.windows import Timing, Window, iso_utc, timing_of

FirstRelease = aliased(Release, name="first_release")
FirstStable = aliased(Release, name="first_stable_release")


@dataclass(frozen=True)
class DraftOptions:
    include_all: bool = False
    repo_key: str | None = None
    model: str | None = None


def release_ref(release: Release | None) -> dict[str, Any] | None:
    if release is None:
        return None
    return {
        "tag": release.tag,
        "version": release.version,
        "published_at": iso_utc(release.published_at),
        "prerelease": release.prerelease,
        "url": release.url,
    }


def release_json(release: Release, project: Project) -> dict[str, Any]:
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
        "breaking_changes": release_breaking_changes(release.body),
        "claims": [c.as_json() for c in claims_in(release.body, "release_notes")],
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
    # a change row needs its first releases' tags and dates, never their (large) notes
    return (
        select(Change, Project, FirstRelease, FirstStable)
        .join(Project, Project.id == Change.project_id)
        .outerjoin(FirstRelease, FirstRelease.id == Change.first_release_id)
        .outerjoin(FirstStable, FirstStable.id == Change.first_stable_release_id)
        .options(defer(FirstRelease.body), defer(FirstStable.body))
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
    taxonomy: Taxonomy,
) -> dict[str, Any]:
    labels = list(change.labels or [])
    breaking = change_is_breaking(change.title, labels, change.body)
    classification = classify(
        change.title, labels, project.category, breaking=breaking, taxonomy=taxonomy
    )
    claims = change_claims(change.title, change.body)
    score, reasons = score_change(
        classification,
        timing=timing,
        breaking=breaking,
        claims=claims,
        labels=labels,
        body=change.body,
        shipped_stable=first_stable is not None,
        taxonomy=taxonomy,
    )
    return {
        "kind": "pull_request",
        "key": curation.pull_request_key(project.repo, change.number),
        "repo": project.repo,
        "project": project.name,
        "number": change.number,
        "title": change.title,
        "url": change.url,
        "author": change.author,
        "labels": labels,
        "merged_at": iso_utc(change.merged_at),
        "first_release": release_ref(first),
        "first_stable_release": release_ref(first_stable),
        "timing": timing.value if timing else None,
        "themes": list(classification.themes),
        "primary_theme": classification.primary,
        "models": list(classification.models),
        "noise": classification.noise,
        "breaking": breaking,
        "claims": [c.as_json() for c in claims],
        "score": score,
        "reasons": reasons,
        "previously_reported": None,
        "sources": [change.url] if change.url else [],
    }


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


def version_table(
    session: Session, release_rows: list[Any], window: Window
) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
    """One row per project and version line; RC iterations in the window collapse into one."""
    grouped: dict[tuple[int, str], list[tuple[Release, Project]]] = defaultdict(list)
    for release, project in release_rows:
        grouped[(project.id, release.version_line)].append((release, project))
    rows: list[dict[str, Any]] = []
    series_by_release: dict[int, dict[str, Any]] = {}
    for (project_id, line), members in grouped.items():
        releases = [r for r, _ in members]
        project = members[0][1]
        first, latest = releases[0], releases[-1]
        earlier_prereleases = list(
            session.scalars(
                select(Release.tag)
                .where(
                    Release.project_id == project_id,
                    Release.version_line == line,
                    Release.prerelease.is_(True),
                    Release.published_at < window.start,
                )
                .order_by(Release.published_at)
            )
        )
        if latest.prerelease:
            status = "prerelease"
        elif earlier_prereleases:
            status = "rc_to_stable"
        else:
            status = "stable"
        series = {
            "line": line,
            "iterations": [r.tag for r in releases],
            "latest": latest.tag,
            "stable": not latest.prerelease,
            "status": status,
            "earlier_prereleases": earlier_prereleases,
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
                "earlier_prereleases": earlier_prereleases,
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
    for release in releases:
        shipped = [
            i
            for i in items
            if i["repo"] == release["repo"]
            and release["tag"]
            in {(i["first_release"] or {}).get("tag"), (i["first_stable_release"] or {}).get("tag")}
        ]
        reported = [i["number"] for i in shipped if i["previously_reported"]]
        release["ships_changes"] = len(shipped)
        release["ships_previously_reported"] = reported
        release["only_previously_reported"] = bool(shipped) and len(reported) == len(shipped)


def build_draft(
    session: Session,
    window: Window,
    *,
    include_all: bool = False,
    repo_key: str | None = None,
    model: str | None = None,
    taxonomy: Taxonomy | None = None,
    curated: bool = True,
) -> dict[str, Any]:
    """The draft of a window; ``curated`` applies the editors' curation of that window."""
    taxonomy = taxonomy or default_taxonomy()
    release_rows = windowed_releases(session, window, repo_key)
    versions, series = version_table(session, release_rows, window)
    availability = pypi_status(session, release_rows)
    releases = []
    for release, project in release_rows:
        entry = release_json(release, project)
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

    all_items = []
    for change, project, first, first_stable in windowed_changes(
        session, window, [release.id for release, _ in release_rows], repo_key
    ):
        timing = timing_of(
            window,
            change.merged_at,
            first.published_at if first else None,
            first_stable.published_at if first_stable else None,
        )
        if timing is not None:
            all_items.append(change_item(change, project, first, first_stable, timing, taxonomy))
    for post, feed in posts.window_posts(session, window):
        if repo_key is None or repo_key in {p.lower() for p in feed.projects or []}:
            all_items.append(post_item(post, feed, taxonomy))
    reported = previously_reported(session, [i["key"] for i in all_items], window)
    for item in all_items:
        item["previously_reported"] = reported.get(item["key"])
    _frame_releases(releases, all_items)
    excluded: list[dict[str, Any]] = []
    state = curation.load(session, window) if curated else curation.CurationState()
    all_items, excluded = curation.apply(all_items, state)
    if model:
        all_items = [i for i in all_items if model.lower() in i["models"]]
    touched = {key for key, s in state.items.items() if s.pinned or s.theme or s.title}
    shown = [i for i in all_items if include_all or not i["noise"] or i["key"] in touched]
    shown.sort(key=lambda i: (-i["score"], i["repo"] or "", i["merged_at"] or "", i["number"] or 0))

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
        "window": window.as_json(),
        "include": "all" if include_all else "highlights",
        "model": model,
        "counts": {
            "releases": len(releases),
            "changes": len(shown),
            "noise_hidden": 0 if include_all else len(all_items) - len(shown),
            "by_timing": {t.value: by_timing.get(t.value, 0) for t in Timing},
        },
        "versions": versions,
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
    rows = session.execute(
        _change_query().where(
            or_(Change.first_release_id == release_id, Change.first_stable_release_id == release_id)
        )
    )
    items = [change_item(c, p, f, s, None, taxonomy) for c, p, f, s in rows]
    items.sort(key=lambda i: (-i["score"], i["merged_at"], i["number"]))
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        grouped[item["primary_theme"]].append(item)
    return [
        {"key": key, "title": taxonomy.title(key, "en"), "items": grouped[key]}
        for key in [t.key for t in taxonomy.themes] + [OTHER]
        if grouped.get(key)
    ]
