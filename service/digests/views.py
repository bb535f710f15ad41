from __future__ import annotations

from typing import Any, Literal

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response
from pydantic import BaseModel, Field

from service import atom
from service.api import ERROR_RESPONSES, DbId, SessionDep
from service.curation.views import actor_of
from service.database import utcnow
from service.digests import publishing
from service.digests.cache import BodyKey, cached_draft, material_key
from service.digests.render import render_markdown
from service.errors import InvalidInput
from service.generations import service as store_generations
from service.html import safe_html
from service.projects import service as projects
from service.windows import window_for

router = APIRouter(prefix="/v1/digests", tags=["digests"], responses=ERROR_RESPONSES)

MARKDOWN = "text/markdown; charset=utf-8"
JSON = "application/json"


class PublishIn(BaseModel):
    start: str = Field(examples=["2026-09-30"])
    end: str = Field(examples=["2026-10-06"])
    title: str | None = Field(default=None, max_length=300)


class DigestSummary(BaseModel):
    number: int
    title: str
    window: dict[str, str]
    published_at: str
    published_by: str
    counts: dict[str, Any]


@router.get(
    "/draft",
    responses={
        200: {"content": {"application/json": {}, "text/markdown": {}}},
        304: {"description": "Not modified: the request's If-None-Match holds the draft's ETag"},
    },
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
    """The curated draft digest of a UTC window ``[start 00:00Z, end + 1 day 00:00Z)``.

    ``include=all`` adds CI, docs, tests, typo, dependency, revert and version-bump changes;
    ``model=kimi`` keeps the changes touching one model family; ``lang`` picks the language
    of the Markdown digest. The response carries an ETag: it changes whenever the store or
    the window's curation does, and a request sending it back in ``If-None-Match`` gets a 304
    until then."""
    state = request.app.state
    generations = store_generations.current(session)  # before anything the draft reads
    window = window_for(start, end)
    taxonomy = state.taxonomy
    repo_key = projects.get(session, repo).repo_key if repo else None
    if model is not None and taxonomy.family(model) is None:
        known = ", ".join(f.key for f in taxonomy.families)
        raise InvalidInput(f"model: {model!r} is not a known model family ({known})")
    key = BodyKey(
        material_key(generations, window, repo_key, taxonomy),
        generations.curation,
        include_all=include == "all",
        model=model,
        format=format,
        lang=lang if format == "md" else "",
    )
    headers = {"ETag": key.etag, "Cache-Control": "private, no-cache"}
    if key.etag in if_none_match(request):
        return Response(status_code=304, headers=headers)

    def build() -> bytes:
        with state.metrics.draft_timer():
            result = cached_draft(
                state.draft_cache,
                session,
                generations,
                window,
                taxonomy=taxonomy,
                repo_key=repo_key,
                include_all=key.include_all,
                model=model,
            )
            if format == "md":
                return render_markdown(result, lang, taxonomy).encode()
            return orjson.dumps(result)

    body = state.draft_cache.body(key, build)
    return Response(body, media_type=MARKDOWN if format == "md" else JSON, headers=headers)


def if_none_match(request: Request) -> set[str]:
    """The entity tags of an ``If-None-Match`` header (weak ones compare as strong: RFC 9110
    §13.1.2 uses the weak comparison for it)."""
    header = request.headers.get("if-none-match", "")
    return {tag.strip().removeprefix("W/") for tag in header.split(",") if tag.strip()}


@router.post("", response_model=DigestSummary, status_code=201)
def publish(body: PublishIn, request: Request, session: SessionDep) -> DigestSummary:
    """Freeze a window's curated draft into an immutable, numbered issue."""
    window = window_for(body.start, body.end)
    digest = publishing.publish(
        session,
        window,
        title=body.title,
        actor=actor_of(request),
        taxonomy=request.app.state.taxonomy,
        public_url=request.app.state.settings.public_url,
    )
    session.commit()
    return DigestSummary(**publishing.summary(digest))


@router.get("", response_model=list[DigestSummary])
def list_digests(session: SessionDep) -> list[DigestSummary]:
    return [DigestSummary(**publishing.summary(d)) for d in publishing.list_all(session)]


@router.get(
    ".atom", response_class=Response, responses={200: {"content": {"application/atom+xml": {}}}}
)
def digests_feed(request: Request, session: SessionDep) -> Response:
    """Published issues as an Atom 1.0 feed."""
    base = request.app.state.settings.public_url.rstrip("/")
    digests = publishing.list_all(session)[:50]
    entries = [
        atom.Entry(
            id=f"{base}/v1/digests/{d.number}",
            title=f"#{d.number} {d.title}",
            link=f"{base}/v1/digests/{d.number}?format=html",
            updated=d.published_at,
            summary=f"{d.window_start}..{d.window_end}: "
            f"{d.content.get('counts', {}).get('releases', 0)} releases, "
            f"{d.content.get('counts', {}).get('changes', 0)} changes",
            author=d.published_by,
        )
        for d in digests
    ]
    body = atom.feed(
        feed_id=f"{base}/v1/digests.atom",
        title="AI infrastructure weekly digest",
        self_link=f"{base}/v1/digests.atom",
        alternate=f"{base}/v1/digests",
        updated=digests[0].published_at if digests else utcnow(),
        entries=entries,
    )
    return Response(body, media_type="application/atom+xml; charset=utf-8")


@router.get(
    "/{number}",
    responses={200: {"content": {"application/json": {}, "text/markdown": {}, "text/html": {}}}},
)
def get_digest(
    number: DbId,
    session: SessionDep,
    format: Literal["json", "md", "html"] = "json",
    lang: Literal["zh", "en"] = "zh",
) -> Any:
    """A published issue, exactly as it was published."""
    digest = publishing.get(session, number)
    markdown = digest.markdown_zh if lang == "zh" else digest.markdown_en
    if format == "md":
        return PlainTextResponse(markdown, media_type=MARKDOWN)
    if format == "html":
        page = (
            f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
            f"<title>#{digest.number}</title></head><body><article>{safe_html(markdown)}"
            "</article></body></html>"
        )
        return HTMLResponse(page)
    return {**publishing.summary(digest), "content": digest.content}
