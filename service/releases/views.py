from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response
from sqlalchemy import select

from service import atom
from service.analysis import release_analysis
from service.api import ERROR_RESPONSES, Offset, SessionDep
from service.database import utcnow
from service.digests.service import release_json
from service.errors import InvalidInput
from service.projects import service as projects
from service.projects.models import Project
from service.releases.models import Release
from service.windows import window_for

router = APIRouter(prefix="/v1/releases", tags=["releases"], responses=ERROR_RESPONSES)


@router.get("")
def list_releases(
    request: Request,
    session: SessionDep,
    repo: str | None = None,
    start: str | None = None,
    end: str | None = None,
    prerelease: bool | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Offset = 0,
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
    taxonomy = request.app.state.taxonomy
    return [release_json(r, p, taxonomy) for r, p in session.execute(query)]


@router.get(
    ".atom", response_class=Response, responses={200: {"content": {"application/atom+xml": {}}}}
)
def releases_feed(
    request: Request,
    session: SessionDep,
    repo: str | None = None,
    prerelease: bool | None = None,
) -> Response:
    """New releases as an Atom 1.0 feed (``prerelease=true`` follows every new RC)."""
    base = request.app.state.settings.public_url.rstrip("/")
    query = select(Release, Project).join(Project, Project.id == Release.project_id)
    if repo is not None:
        query = query.where(Release.project_id == projects.get(session, repo).id)
    if prerelease is not None:
        query = query.where(Release.prerelease.is_(prerelease))
    rows = list(session.execute(query.order_by(Release.published_at.desc()).limit(100)))
    taxonomy = request.app.state.taxonomy
    entries = [
        atom.Entry(
            id=f"{base}/v1/releases/{p.repo}/{r.tag}",
            title=f"{p.name} {r.version}" + (" (pre-release)" if r.prerelease else ""),
            link=r.url,
            updated=r.published_at,
            summary="; ".join(release_analysis(r, taxonomy).breaking_changes[:5]),
            categories=[p.repo, "pre-release" if r.prerelease else "stable"],
        )
        for r, p in rows
    ]
    self_link = str(request.url)
    body = atom.feed(
        feed_id=f"{base}/v1/releases.atom" + (f"?{request.url.query}" if request.url.query else ""),
        title="Releases"
        + (f" of {repo}" if repo else "")
        + (" (pre-releases)" if prerelease else ""),
        self_link=self_link,
        alternate=f"{base}/v1/releases",
        updated=rows[0][0].published_at if rows else utcnow(),
        entries=entries,
    )
    return Response(body, media_type="application/atom+xml; charset=utf-8")
