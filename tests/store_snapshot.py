"""A comparable picture of everything a sync stores (no ids, no sync timestamps)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased, sessionmaker

from service.changes.models import Change
from service.database import transaction
from service.inclusion.models import Comparison, ComparisonCommit, ReleaseChange
from service.projects import service as projects
from service.projects.models import Project
from service.releases.models import Release


def track(factory: sessionmaker[Session], repo: str, name: str | None = None) -> None:
    with transaction(factory) as session:
        projects.add(session, projects.ProjectSpec(repo=repo, name=name))


def snapshot(factory: sessionmaker[Session]) -> dict[str, Any]:
    first = aliased(Release)
    stable = aliased(Release)
    with factory() as session:
        releases = sorted(
            (
                p.repo,
                r.tag,
                r.version,
                r.version_line,
                r.prerelease,
                r.published_at,
                r.name,
                r.body,
                r.tag_commit_sha,
            )
            for r, p in session.execute(
                select(Release, Project).join(Project, Project.id == Release.project_id)
            )
        )
        changes = sorted(
            (
                p.repo,
                c.number,
                c.title,
                c.merged_at,
                c.merge_commit_sha,
                tuple(c.labels),
                f.tag if f else None,
                s.tag if s else None,
            )
            for c, p, f, s in session.execute(
                select(Change, Project, first, stable)
                .join(Project, Project.id == Change.project_id)
                .outerjoin(first, first.id == Change.first_release_id)
                .outerjoin(stable, stable.id == Change.first_stable_release_id)
            )
        )
        links = sorted(
            session.execute(
                select(Release.tag, Change.number, ReleaseChange.method)
                .join(Release, Release.id == ReleaseChange.release_id)
                .join(Change, Change.id == ReleaseChange.change_id)
            )
        )
        comparisons = sorted(
            session.execute(
                select(
                    Comparison.base_tag,
                    Comparison.head_tag,
                    ComparisonCommit.position,
                    ComparisonCommit.sha,
                ).join(ComparisonCommit, ComparisonCommit.comparison_id == Comparison.id)
            )
        )
    return {"releases": releases, "changes": changes, "links": links, "comparisons": comparisons}


def first_releases(factory: sessionmaker[Session]) -> dict[int, tuple[str | None, str | None]]:
    """PR number → (first release tag, first stable release tag)."""
    return {row[1]: (row[6], row[7]) for row in snapshot(factory)["changes"]}
