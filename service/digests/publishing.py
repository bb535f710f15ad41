"""Publishing: freeze a window's curated draft into an immutable, numbered issue."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from service.database import utcnow
from service.digests.models import PublishedDigest, PublishedItem
from service.digests.render import render_markdown
from service.digests.service import build_draft
from service.errors import ConflictError, NotFoundError, UnprocessableInput
from service.events import service as events
from service.themes import Taxonomy
from service.windows import Window, iso_utc


def published_keys(draft: dict[str, Any]) -> set[str]:
    keys = {item["key"] for theme in draft["themes"] for item in theme["items"]}
    keys.update(release["key"] for release in draft["releases"])
    return keys


def publish(
    session: Session,
    window: Window,
    *,
    title: str | None,
    actor: str,
    taxonomy: Taxonomy,
    public_url: str,
) -> PublishedDigest:
    existing = session.scalar(
        select(PublishedDigest).where(
            PublishedDigest.window_start == window.first_day,
            PublishedDigest.window_end == window.last_day,
        )
    )
    if existing is not None:
        raise ConflictError(
            f"the window {window.first_day}..{window.last_day} was already published "
            f"as issue {existing.number}"
        )
    draft = build_draft(session, window, taxonomy=taxonomy)
    if not draft["themes"] and not draft["releases"]:
        raise UnprocessableInput("the draft of this window is empty: nothing to publish")
    now = utcnow()
    title = (
        title or ""
    ).strip() or f"AI infrastructure weekly {window.first_day}..{window.last_day}"
    # issues are numbered 1, 2, 3... without the gaps a database sequence can leave
    last = session.scalar(select(func.max(PublishedDigest.number))) or 0
    digest = PublishedDigest(
        number=last + 1,
        window_start=window.first_day,
        window_end=window.last_day,
        title=title[:300],
        published_at=now,
        published_by=actor,
        content=draft,
        markdown_zh=render_markdown(draft, "zh", taxonomy),
        markdown_en=render_markdown(draft, "en", taxonomy),
    )
    session.add(digest)
    session.flush()
    session.add_all(
        PublishedItem(digest_number=digest.number, item_key=key)
        for key in sorted(published_keys(draft))
    )
    events.emit_digest_published(
        session,
        digest_key=str(digest.number),
        title=digest.title,
        window_start=window.start,
        window_end=window.end,
        published_at=now,
        url=f"{public_url.rstrip('/')}/v1/digests/{digest.number}",
        summary=f"{draft['counts']['releases']} releases, {draft['counts']['changes']} changes",
    )
    session.flush()
    return digest


def get(session: Session, number: int) -> PublishedDigest:
    digest = session.get(PublishedDigest, number)
    if digest is None:
        raise NotFoundError(f"issue {number} has not been published")
    return digest


def list_all(session: Session) -> list[PublishedDigest]:
    return list(session.scalars(select(PublishedDigest).order_by(PublishedDigest.number.desc())))


def summary(digest: PublishedDigest) -> dict[str, Any]:
    return {
        "number": digest.number,
        "title": digest.title,
        "window": {"start": digest.window_start.isoformat(), "end": digest.window_end.isoformat()},
        "published_at": iso_utc(digest.published_at),
        "published_by": digest.published_by,
        "counts": digest.content.get("counts", {}),
    }
