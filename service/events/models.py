"""The outbox: events written in the same transaction as the data that caused them."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from service.database import Base, UTCDateTime


class EventType(enum.StrEnum):
    RELEASE_PRERELEASE = "release.prerelease"
    RELEASE_STABLE = "release.stable"
    CHANGE_BREAKING = "change.breaking"
    DIGEST_PUBLISHED = "digest.published"
    # Sent by `POST /v1/webhooks/{id}/test` to one subscription only; never fanned out.
    PING = "webhook.ping"


SUBSCRIBABLE_EVENT_TYPES = [t for t in EventType if t is not EventType.PING]


class Event(Base):
    """One event. ``event_id`` is derived from what the event is about, so seeing the same
    release or pull request again can never write a second one; ``id`` orders delivery.

    Release events are written while their release is upserted but are only ``ready`` once
    the pass that saw them has linked the changes the release shipped (the payload lists
    them); ``dispatched_at`` is set when deliveries to matching subscriptions were queued."""

    __tablename__ = "events"
    __table_args__ = (
        Index("uq_events_event_id", "event_id", unique=True),
        Index("ix_events_project_ready", "project_id", "ready"),
        Index("ix_events_undispatched", "ready", "dispatched_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[str] = mapped_column(String(64))
    type: Mapped[str] = mapped_column(String(40))
    project_id: Mapped[int | None] = mapped_column(ForeignKey("projects.id", ondelete="SET NULL"))
    release_id: Mapped[int | None] = mapped_column(ForeignKey("releases.id", ondelete="SET NULL"))
    change_id: Mapped[int | None] = mapped_column(ForeignKey("changes.id", ondelete="SET NULL"))
    subject: Mapped[str] = mapped_column(String(400))
    occurred_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ready: Mapped[bool] = mapped_column(Boolean, default=False)
    ready_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    payload: Mapped[dict[str, Any] | None] = mapped_column(
        JSON().with_variant(JSONB(), "postgresql")
    )
