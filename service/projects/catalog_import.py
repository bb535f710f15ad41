"""Loading a catalog (projects and blogs) into the store: ``digest projects import``."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from service import analysis
from service.catalog import Catalog, options_of
from service.posts import service as posts
from service.projects.service import ProjectSpec, add, find


@dataclass(frozen=True)
class ImportResult:
    added: list[str]
    updated: list[str]
    feeds: list[str]


def import_catalog(session: Session, catalog: Catalog) -> ImportResult:
    """Track every project and blog of a catalog; running it again changes nothing."""
    added: list[str] = []
    updated: list[str] = []
    for entry in catalog.projects:
        options = options_of(entry)
        project = find(session, entry.repo)
        if project is None:
            project = add(session, ProjectSpec(entry.repo, entry.name, entry.category))
            project.options = options
            added.append(project.repo)
        elif (project.name, project.category, project.options) != (
            entry.name,
            entry.category,
            options,
        ):
            if project.category != entry.category:
                analysis.mark_project_stale(session, project.id)
            project.name, project.category, project.options = entry.name, entry.category, options
            updated.append(project.repo)
    feeds = [posts.upsert_feed(session, blog).key for blog in catalog.blogs]
    session.flush()
    return ImportResult(added, updated, feeds)
