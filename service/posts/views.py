from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.api import ERROR_RESPONSES, SessionDep
from service.posts import service

router = APIRouter(prefix="/v1/feeds", tags=["feeds"], responses=ERROR_RESPONSES)


@router.get("")
def list_feeds(session: SessionDep) -> list[dict[str, Any]]:
    """Blog feeds with their health: last check, last success, last error, error count."""
    return [service.feed_json(feed) for feed in service.list_feeds(session)]
