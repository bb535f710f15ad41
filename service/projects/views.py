from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from service.api import ERROR_RESPONSES, SessionDep
from service.projects import service
from service.projects.models import Project
from service.sync.models import SyncState
from service.sync.service import CYCLE

router = APIRouter(prefix="/v1/projects", tags=["projects"], responses=ERROR_RESPONSES)


class ProjectIn(BaseModel):
    repo: str = Field(examples=["vllm-project/vllm"], max_length=200)
    name: str | None = Field(default=None, max_length=200, examples=["vLLM"])
    category: str | None = Field(default=None, max_length=100, examples=["inference"])


class SyncStateOut(BaseModel):
    resource: str
    last_success_at: datetime | None
    last_attempt_at: datetime | None
    last_error: str | None
    last_error_at: datetime | None
    error_count: int
    next_run_at: datetime | None
    high_water_mark: datetime | None


class ProjectOut(BaseModel):
    repo: str
    name: str
    category: str | None
    default_branch: str | None
    added_at: datetime
    sync: SyncStateOut | None


def state_out(state: SyncState) -> SyncStateOut:
    return SyncStateOut(
        resource=state.resource,
        last_success_at=state.last_success_at,
        last_attempt_at=state.last_attempt_at,
        last_error=state.last_error,
        last_error_at=state.last_error_at,
        error_count=state.error_count or 0,
        next_run_at=state.next_run_at,
        high_water_mark=state.high_water_mark,
    )


def project_out(project: Project, state: SyncState | None) -> ProjectOut:
    return ProjectOut(
        repo=project.repo,
        name=project.name,
        category=project.category,
        default_branch=project.default_branch,
        added_at=project.added_at,
        sync=state_out(state) if state else None,
    )


@router.get("", response_model=list[ProjectOut])
def list_projects(session: SessionDep) -> list[ProjectOut]:
    return [
        project_out(p, session.get(SyncState, (p.id, CYCLE))) for p in service.list_all(session)
    ]


@router.post("", response_model=ProjectOut, status_code=201)
def add_project(body: ProjectIn, session: SessionDep, request: Request) -> ProjectOut:
    project = service.add(
        session, service.ProjectSpec(repo=body.repo, name=body.name, category=body.category)
    )
    session.commit()
    on_added = request.app.state.on_project_added
    if on_added is not None:
        on_added(project.repo)
    return project_out(project, None)


class ImportOut(BaseModel):
    added: list[str]
    updated: list[str]
    feeds: list[str]


@router.post("/import", response_model=ImportOut)
def import_default_catalog(session: SessionDep, request: Request) -> ImportOut:
    """Track every project and blog of the default catalog (idempotent)."""
    from service.catalog import load_catalog
    from service.projects.catalog_import import import_catalog

    result = import_catalog(session, load_catalog())
    session.commit()
    on_added = request.app.state.on_project_added
    if on_added is not None:
        for repo in result.added:
            on_added(repo)
    return ImportOut(added=result.added, updated=result.updated, feeds=result.feeds)


@router.get("/{owner}/{name}", response_model=ProjectOut)
def get_project(owner: str, name: str, session: SessionDep) -> ProjectOut:
    project = service.get(session, f"{owner}/{name}")
    return project_out(project, session.get(SyncState, (project.id, CYCLE)))


@router.get("/{owner}/{name}/sync", response_model=list[SyncStateOut])
def get_sync_state(owner: str, name: str, session: SessionDep) -> list[SyncStateOut]:
    project = service.get(session, f"{owner}/{name}")
    states = session.query(SyncState).filter(SyncState.project_id == project.id).all()
    return [state_out(s) for s in sorted(states, key=lambda s: s.resource)]


@router.delete("/{owner}/{name}", status_code=204)
def delete_project(owner: str, name: str, session: SessionDep, request: Request) -> Response:
    repo = service.get(session, f"{owner}/{name}").repo
    service.remove(session, repo)
    session.commit()
    on_removed = request.app.state.on_project_removed
    if on_removed is not None:
        on_removed(repo)
    return Response(status_code=204)
