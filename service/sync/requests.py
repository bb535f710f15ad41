"""Sync passes asked for through the API, kept in the store so that a separate worker
process (``digest worker``) runs them: the API itself never talks to GitHub."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from service.database import transaction, utcnow
from service.projects.models import Project
from service.sync.models import SyncState

REQUESTED = "requested"


def request(factory: sessionmaker[Session], repo: str) -> None:
    with transaction(factory) as session:
        project = session.scalar(select(Project).where(Project.repo_key == repo.lower()))
        if project is None:
            return
        state = session.get(SyncState, (project.id, REQUESTED))
        if state is None:
            session.add(
                SyncState(
                    project_id=project.id, resource=REQUESTED, error_count=0, next_run_at=utcnow()
                )
            )


def take(factory: sessionmaker[Session]) -> list[str]:
    """The repositories asked for, each handed to exactly one caller."""
    with transaction(factory) as session:
        rows = list(
            session.execute(
                select(Project.repo, SyncState.project_id)
                .join(Project, Project.id == SyncState.project_id)
                .where(SyncState.resource == REQUESTED)
            )
        )
        taken: list[str] = []
        for repo, project_id in rows:
            gone = session.execute(
                delete(SyncState).where(
                    SyncState.project_id == project_id, SyncState.resource == REQUESTED
                )
            )
            if gone.rowcount == 1:  # type: ignore[attr-defined]
                taken.append(repo)
        return taken
