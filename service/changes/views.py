from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from service.api import ERROR_RESPONSES, Offset, SessionDep
from service.digests.cache import cached_draft
from service.errors import InvalidInput
from service.generations import service as store_generations
from service.projects import service as projects
from service.windows import Timing, window_for

router = APIRouter(prefix="/v1/changes", tags=["changes"], responses=ERROR_RESPONSES)


@router.get("")
def list_changes(
    request: Request,
    session: SessionDep,
    start: str,
    end: str,
    repo: str | None = None,
    timing: str | None = None,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Changes of a window with their merge date, first releases and timing."""
    generations = store_generations.current(session)  # before anything the draft reads
    window = window_for(start, end)
    wanted: Timing | None = None
    if timing is not None:
        try:
            wanted = Timing(timing)
        except ValueError:
            choices = ", ".join(t.value for t in Timing)
            raise InvalidInput(f"timing: {timing!r} is not one of {choices}") from None
    repo_key = projects.get(session, repo).repo_key if repo else None
    draft = cached_draft(
        request.app.state.draft_cache,
        session,
        generations,
        window,
        taxonomy=request.app.state.taxonomy,
        repo_key=repo_key,
        include_all=True,
        curated=False,
    )
    items = [i for theme in draft["themes"] for i in theme["items"]]
    if wanted is not None:
        items = [i for i in items if i["timing"] == wanted.value]
    return {"window": draft["window"], "total": len(items), "items": items[offset : offset + limit]}
