"""Writing events (in the transaction of the data that caused them) and rendering payloads.

Event ids are derived from the event's type and subject (``release.stable`` + repository +
tag, ``change.breaking`` + repository + PR number, ...), and rows are inserted with "on
conflict do nothing", so re-seeing a release never writes a second event, whichever process
sees it. Only what was published (or merged) after the project was added, less a look-back
(``DIGEST_EVENT_LOOKBACK_HOURS``), produces events: a backfill is old news.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import event as orm_event
from sqlalchemy import select
from sqlalchemy.orm import Session

from service.breaking import release_breaking_changes
from service.changes.models import Change
from service.digests.service import release_changes_by_theme
from service.events.models import Event, EventType
from service.events.text import plain_text
from service.projects.models import Project
from service.releases.models import Release
from service.windows import iso_utc

MAX_ITEMS_PER_THEME = 50
MAX_BREAKING_LINES = 50
_WAKES_DELIVERY = "wakes_delivery"


class WakeSignal:
    """Wakes delivery workers of this process when deliverable events were committed.

    A generation counter rather than a flag: a worker notes the generation before it looks
    for work and sleeps only if nothing was signalled since, so no wake-up is lost."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._generation = 0

    def generation(self) -> int:
        with self._condition:
            return self._generation

    def notify(self) -> None:
        with self._condition:
            self._generation += 1
            self._condition.notify_all()

    def wait(self, seen: int, timeout: float) -> int:
        with self._condition:
            self._condition.wait_for(lambda: self._generation != seen, timeout)
            return self._generation


DELIVERABLE = WakeSignal()


def wake_delivery_after_commit(session: Session) -> None:
    """Signal the delivery workers once this session's transaction commits."""
    session.info[_WAKES_DELIVERY] = True


@orm_event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    if session.info.pop(_WAKES_DELIVERY, False):
        DELIVERABLE.notify()


@orm_event.listens_for(Session, "after_soft_rollback")
def _after_rollback(session: Session, _previous: Any) -> None:
    session.info.pop(_WAKES_DELIVERY, None)


def event_id_for(event_type: str, *subject: str | int) -> str:
    """Stable id ("evt_" + 32 hex chars) of the event of `event_type` about `subject`."""
    key = "\x1f".join([event_type, *(str(part) for part in subject)])
    return "evt_" + hashlib.sha256(key.encode()).hexdigest()[:32]


def event_cutoff(project_added_at: datetime, lookback_hours: float) -> datetime:
    """Releases and merges older than this are history, not news."""
    return project_added_at - timedelta(hours=lookback_hours)


def _insert_new(session: Session, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    table = Event.__table__
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    elif dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:
        raise NotImplementedError(f"events are not implemented for {dialect}")
    session.execute(insert(table).on_conflict_do_nothing(index_elements=["event_id"]), rows)


def record_new_releases(
    session: Session,
    project_id: int,
    repo: str,
    new_rows: Sequence[dict[str, Any]],
    cutoff: datetime,
    now: datetime,
) -> int:
    """Pending events for releases stored for the first time in this transaction.

    A release gives ``release.prerelease`` or ``release.stable``, and ``change.breaking``
    too when its notes have breaking changes. They become ready at the end of the pass."""
    fresh = [row for row in new_rows if row["published_at"] >= cutoff]
    if not fresh:
        return 0
    release_ids = dict(
        session.execute(
            select(Release.tag, Release.id).where(
                Release.project_id == project_id, Release.tag.in_([r["tag"] for r in fresh])
            )
        ).all()
    )
    repo_key = repo.lower()
    events: list[dict[str, Any]] = []
    for row in fresh:
        kind = EventType.RELEASE_PRERELEASE if row["prerelease"] else EventType.RELEASE_STABLE
        base = {
            "type": kind.value,
            "project_id": project_id,
            "release_id": release_ids.get(row["tag"]),
            "change_id": None,
            "subject": f"{repo}@{row['tag']}"[:400],
            "occurred_at": row["published_at"],
            "created_at": now,
            "ready": False,
        }
        events.append({**base, "event_id": event_id_for(kind, repo_key, row["tag"])})
        if release_breaking_changes(row.get("body") or ""):
            breaking = EventType.CHANGE_BREAKING
            events.append(
                {
                    **base,
                    "type": breaking.value,
                    "event_id": event_id_for(breaking, repo_key, "release", row["tag"]),
                }
            )
    _insert_new(session, events)
    return len(events)


def record_new_changes(
    session: Session,
    project_id: int,
    repo: str,
    new_rows: Sequence[dict[str, Any]],
    cutoff: datetime,
    now: datetime,
) -> int:
    """``change.breaking`` events, ready at once, for breaking merged PRs stored first now
    (their stored analysis says whether they break anything)."""
    recent = [row["number"] for row in new_rows if row["merged_at"] >= cutoff]
    if not recent:
        return 0
    project = session.get(Project, project_id)
    changes = {
        change.number: change
        for change in session.scalars(
            select(Change).where(
                Change.project_id == project_id,
                Change.number.in_(recent),
                Change.breaking.is_(True),
            )
        )
    }
    breaking = [row for row in new_rows if row["number"] in changes]
    if not breaking:
        return 0
    kind = EventType.CHANGE_BREAKING
    events = []
    for row in breaking:
        change = changes.get(row["number"])
        if change is None or project is None:
            continue
        event_id = event_id_for(kind, repo.lower(), "pull", row["number"])
        events.append(
            {
                "event_id": event_id,
                "type": kind.value,
                "project_id": project_id,
                "release_id": None,
                "change_id": change.id,
                "subject": f"{repo}#{row['number']}",
                "occurred_at": row["merged_at"],
                "created_at": now,
                "ready": True,
                "ready_at": now,
                "payload": envelope(event_id, kind, row["merged_at"], change_data(change, project)),
            }
        )
    _insert_new(session, events)
    if events:
        wake_delivery_after_commit(session)
    return len(events)


def release_pending_events(session: Session, project_id: int, now: datetime) -> int:
    """Render the payloads of the project's pending events and make them deliverable.

    Runs in the transaction that links releases to their changes, so a release event lists
    what the release shipped; a pass killed before it leaves them for the next pass."""
    pending = list(
        session.scalars(
            select(Event)
            .where(Event.project_id == project_id, Event.ready.is_(False))
            .order_by(Event.id)
        )
    )
    for event in pending:
        event.payload = render_payload(session, event)
        event.ready = True
        event.ready_at = now
        if event.payload is None:  # its release was deleted meanwhile: nothing to say
            event.dispatched_at = now
    if pending:
        wake_delivery_after_commit(session)
    return len(pending)


def emit_digest_published(
    session: Session,
    *,
    digest_key: str,
    title: str,
    window_start: datetime,
    window_end: datetime,
    published_at: datetime,
    url: str | None = None,
    summary: str | None = None,
) -> str:
    """Write the ``digest.published`` event of a digest (once per `digest_key`)."""
    kind = EventType.DIGEST_PUBLISHED
    event_id = event_id_for(kind, digest_key)
    data = {
        "digest": digest_key,
        "title": plain_text(title, 300),
        "window": {"start": iso_utc(window_start), "end": iso_utc(window_end)},
        "published_at": iso_utc(published_at),
        "url": url,
        "summary": plain_text(summary, 2000) or None,
    }
    _insert_new(
        session,
        [
            {
                "event_id": event_id,
                "type": kind.value,
                "project_id": None,
                "release_id": None,
                "change_id": None,
                "subject": f"digest {digest_key}"[:400],
                "occurred_at": published_at,
                "created_at": published_at,
                "ready": True,
                "ready_at": published_at,
                "payload": envelope(event_id, kind, published_at, data),
            }
        ],
    )
    wake_delivery_after_commit(session)
    return event_id


def envelope(
    event_id: str, kind: str, occurred_at: datetime, data: dict[str, Any]
) -> dict[str, Any]:
    """The Standard Webhooks payload shape: ``type``, ``timestamp``, ``data``."""
    return {"id": event_id, "type": str(kind), "timestamp": iso_utc(occurred_at), "data": data}


def render_payload(session: Session, event: Event) -> dict[str, Any] | None:
    if event.release_id is None or event.project_id is None:
        return event.payload
    release = session.get(Release, event.release_id)
    project = session.get(Project, event.project_id)
    if release is None or project is None:
        return None
    if event.type == EventType.CHANGE_BREAKING:
        data = release_data(release, project, themes=[])
        data["source"] = "release"
    else:
        data = release_data(release, project, themes=themes_of_release(session, release.id))
    return envelope(event.event_id, event.type, event.occurred_at, data)


def release_data(
    release: Release, project: Project, themes: list[dict[str, Any]]
) -> dict[str, Any]:
    breaking = [plain_text(line, 300) for line in release_breaking_changes(release.body or "")]
    return {
        "repo": project.repo,
        "project": project.name,
        "tag": release.tag,
        "version": release.version,
        "name": plain_text(release.name, 300) or None,
        "prerelease": release.prerelease,
        "published_at": iso_utc(release.published_at),
        "url": release.url,
        "breaking_changes": [line for line in breaking if line][:MAX_BREAKING_LINES],
        "themes": themes,
    }


def change_data(change: Change, project: Project) -> dict[str, Any]:
    return {
        "source": "pull_request",
        "repo": project.repo,
        "project": project.name,
        "number": change.number,
        "title": plain_text(change.title, 300),
        "url": change.url,
        "author": change.author,
        "labels": list(change.labels or []),
        "merged_at": iso_utc(change.merged_at),
        "prerelease": None,
        "breaking_changes": [plain_text(change.title, 300)],
    }


def themes_of_release(session: Session, release_id: int) -> list[dict[str, Any]]:
    themes = []
    for theme in release_changes_by_theme(session, release_id):
        items: Iterable[dict[str, Any]] = theme.get("items") or []
        items = list(items)
        themes.append(
            {
                "key": theme["key"],
                "title": plain_text(theme.get("title"), 200),
                "count": len(items),
                "items": [
                    {
                        "number": item.get("number"),
                        "title": plain_text(item.get("title"), 300),
                        "url": item.get("url"),
                        "merged_at": item.get("merged_at"),
                        "breaking": bool(item.get("breaking")),
                    }
                    for item in items[:MAX_ITEMS_PER_THEME]
                ],
            }
        )
    return themes
