from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from service.api import ERROR_RESPONSES, SessionDep
from service.digests.render import render_markdown
from service.digests.service import build_draft
from service.errors import InvalidInput
from service.projects import service as projects
from service.windows import window_for

router = APIRouter(prefix="/v1/digests", tags=["digests"], responses=ERROR_RESPONSES)


@router.get(
    "/draft",
    responses={200: {"content": {"application/json": {}, "text/markdown": {}}}},
)
def draft(
    request: Request,
    session: SessionDep,
    start: str,
    end: str,
    include: Literal["highlights", "all"] = "highlights",
    format: Literal["json", "md"] = "json",
    lang: Literal["zh", "en"] = "zh",
    repo: str | None = None,
    model: str | None = None,
) -> Any:
    """The draft digest of a UTC window ``[start 00:00Z, end + 1 day 00:00Z)``.

    ``include=all`` adds CI, docs, tests, typo, dependency, revert and version-bump changes;
    ``model=kimi`` keeps the changes touching one model family; ``lang`` picks the language
    of the Markdown digest."""
    window = window_for(start, end)
    taxonomy = request.app.state.taxonomy
    repo_key = projects.get(session, repo).repo_key if repo else None
    if model is not None and taxonomy.family(model) is None:
        known = ", ".join(f.key for f in taxonomy.families)
        raise InvalidInput(f"model: {model!r} is not a known model family ({known})")
    result = build_draft(
        session,
        window,
        include_all=include == "all",
        repo_key=repo_key,
        model=model,
        taxonomy=taxonomy,
    )
    if format == "md":
        return PlainTextResponse(
            render_markdown(result, lang, taxonomy), media_type="text/markdown; charset=utf-8"
        )
    return result
