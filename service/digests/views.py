from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from service.api import ERROR_RESPONSES, SessionDep
from service.digests.render import render_markdown
from service.digests.service import build_draft
from service.projects import service as projects
from service.windows import window_for

router = APIRouter(prefix="/v1/digests", tags=["digests"], responses=ERROR_RESPONSES)


@router.get(
    "/draft",
    responses={200: {"content": {"application/json": {}, "text/markdown": {}}}},
)
def draft(
    session: SessionDep,
    start: str,
    end: str,
    include: Literal["highlights", "all"] = "highlights",
    format: Literal["json", "md"] = "json",
    repo: str | None = None,
) -> Any:
    """The draft digest of a UTC window ``[start 00:00Z, end + 1 day 00:00Z)``."""
    window = window_for(start, end)
    repo_key = projects.get(session, repo).repo_key if repo else None
    result = build_draft(session, window, include_all=include == "all", repo_key=repo_key)
    if format == "md":
        return PlainTextResponse(render_markdown(result), media_type="text/markdown; charset=utf-8")
    return result
