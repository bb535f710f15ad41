from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from sqlalchemy import select

from service.api import ERROR_RESPONSES, SessionDep
from service.digests.service import release_json
from service.errors import InvalidInput
from service.projects import service as projects
from service.projects.models import Project
from service.releases.models import Release
from service.windows import window_for

router = APIRouter(prefix="/v1/releases", tags=["releases"], responses=ERROR_RESPONSES)


@router.get("")
def list_releases(
    session: SessionDep,
    repo: str | None = None,
    start: str | None = None,
    end: str | None = None,
    prerelease: bool | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[dict[str, Any]]:
    query = select(Release, Project).join(Project, Project.id == Release.project_id)
    if repo is not None:
        query = query.where(Release.project_id == projects.get(session, repo).id)
    if (start is None) != (end is None):
        raise InvalidInput("give both start and end, or neither")
    if start is not None and end is not None:
        window = window_for(start, end, max_days=100_000)
        query = query.where(Release.published_at >= window.start, Release.published_at < window.end)
    if prerelease is not None:
        query = query.where(Release.prerelease.is_(prerelease))
    query = (
        query.order_by(Release.published_at.desc(), Release.id.desc()).limit(limit).offset(offset)
    )
    return [release_json(r, p) for r, p in session.execute(query)]
