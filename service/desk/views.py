from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, select_autoescape
from sqlalchemy import select, tuple_
from sqlalchemy.orm import Session

from service.api import ERROR_RESPONSES, SessionDep
from service.digests.cache import cached_draft
from service.digests.render import Wording
from service.generations import service as store_generations
from service.html import safe_html
from service.projects.models import Project
from service.releases.models import Release
from service.windows import window_for

router = APIRouter(tags=["desk"], responses=ERROR_RESPONSES)

_environment = Environment(
    loader=PackageLoader("service.desk", "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


def release_notes(session: Session, draft: dict[str, Any]) -> dict[str, str]:
    """Release key → the release's notes (untrusted Markdown)."""
    wanted = {(r["repo"].lower(), r["tag"]): r["key"] for r in draft["releases"]}
    if not wanted:
        return {}
    rows = session.execute(
        select(Project.repo_key, Release.tag, Release.body)
        .join(Project, Project.id == Release.project_id)
        .where(tuple_(Project.repo_key, Release.tag).in_(list(wanted)))
    )
    return {wanted[(repo_key, tag)]: body for repo_key, tag, body in rows if body}


def this_week() -> tuple[str, str]:
    today = datetime.now(UTC).date()
    start = today - timedelta(days=today.weekday())
    return start.isoformat(), (start + timedelta(days=6)).isoformat()


@router.get("/desk", response_class=HTMLResponse)
def desk(
    request: Request,
    session: SessionDep,
    start: str | None = None,
    end: str | None = None,
    include: str = "highlights",
) -> HTMLResponse:
    """The draft of a window as an editor sees it: versions, themes, badges and buttons."""
    if start is None or end is None:
        start, end = this_week()
    generations = store_generations.current(session)  # before anything the draft reads
    window = window_for(start, end)
    taxonomy = request.app.state.taxonomy
    draft = cached_draft(
        request.app.state.draft_cache,
        session,
        generations,
        window,
        taxonomy=taxonomy,
        include_all=include == "all",
    )
    notes = {
        release["key"]: safe_html(body)
        for release in draft["releases"]
        if (
            body := session.scalar(
                Release.__table__.select()
                .with_only_columns(Release.body)
                .where(Release.url == release["url"])
            )
        )
    }
    wording = Wording("zh")
    page = _environment.get_template("desk.html").render(
        draft=draft,
        start=start,
        end=end,
        include=include,
        notes=notes,
        window_text=wording.window(draft["window"]),
        timing_text=lambda item: wording.timing(item, draft["window"]),
        status_text=wording.status,
        day=wording.day,
        themes=[{"key": t.key, "title": t.title_zh} for t in taxonomy.themes]
        + [{"key": "other", "title": "其他"}],
    )
    return HTMLResponse(page)
