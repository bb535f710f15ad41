from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from service.api import ERROR_RESPONSES, SessionDep
from service.projects import service as projects

router = APIRouter(prefix="/v1/sync", tags=["sync"], responses=ERROR_RESPONSES)


class SyncRequest(BaseModel):
    repo: str | None = Field(default=None, description="one repository; all when omitted")


class SyncAccepted(BaseModel):
    queued: list[str]


@router.post("", response_model=SyncAccepted, status_code=202)
def request_sync(
    request: Request, session: SessionDep, body: SyncRequest | None = None
) -> SyncAccepted:
    """Queue a sync pass now; the poller runs it (the API itself never calls GitHub)."""
    if body is not None and body.repo:
        repos = [projects.get(session, body.repo).repo]
    else:
        repos = [p.repo for p in projects.list_all(session)]
    trigger = request.app.state.sync_trigger
    for repo in repos:
        trigger(repo)
    return SyncAccepted(queued=repos)
