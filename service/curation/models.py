from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Date, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from service.database import Base, UTCDateTime, utcnow


class CurationAction(Base):
    """One editor action on one item of one window, kept as an append-only log: the current
    state of a window is the fold of its actions, and the log says who changed what, when."""

    __tablename__ = "curation_actions"
    __table_args__ = (Index("ix_curation_window", "window_start", "window_end"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    window_start: Mapped[date] = mapped_column(Date)
    window_end: Mapped[date] = mapped_column(Date)  # last day, inclusive
    item_key: Mapped[str] = mapped_column(String(300))
    action: Mapped[str] = mapped_column(String(20))
    value: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    actor: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
