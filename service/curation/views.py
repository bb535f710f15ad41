from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from service.api import ERROR_RESPONSES, SessionDep
from service.curation import service
from service.windows import window_for

router = APIRouter(prefix="/v1/curation", tags=["curation"], responses=ERROR_RESPONSES)


class CurationIn(BaseModel):
    start: str = Field(examples=["2026-09-30"])
    end: str = Field(examples=["2026-10-06"])
    action: service.Action
    item: str | None = Field(
        default=None,
        max_length=300,
        examples=["pr:vllm-project/vllm#28001"],
        description="the item's key (not needed to add a manual item)",
    )
    value: dict[str, Any] | None = Field(
        default=None,
        examples=[{"theme": "quantization"}],
        description=(
            "move: {theme}; retitle: {title}; note: {text}; "
            "add: {title, url, theme, note?, project?}"
        ),
    )


class CurationActionOut(BaseModel):
    id: int
    window: dict[str, str]
    item: str
    action: str
    value: dict[str, Any] | None
    actor: str
    at: str


class CurationHistory(BaseModel):
    window: dict[str, str]
    actions: list[CurationActionOut]


def actor_of(request: Request) -> str:
    caller = getattr(request.state, "caller", None)
    return caller.name if caller is not None else "anonymous"


@router.post("", response_model=CurationActionOut, status_code=201)
def curate(body: CurationIn, request: Request, session: SessionDep) -> CurationActionOut:
    """Record one editor action on one item of a window's draft."""
    window = window_for(body.start, body.end)
    theme_keys = {t.key for t in request.app.state.taxonomy.themes} | {"other"}
    entry = service.record(
        session, window, body.action, body.item, body.value, actor_of(request), theme_keys
    )
    session.commit()
    return CurationActionOut(**service.action_json(entry))


@router.get("", response_model=CurationHistory)
def curation_history(start: str, end: str, session: SessionDep) -> CurationHistory:
    """Who changed what in a window's draft, and when."""
    window = window_for(start, end)
    return CurationHistory(
        window={"start": start, "end": end},
        actions=[
            CurationActionOut(**service.action_json(e)) for e in service.history(session, window)
        ],
    )
