from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Date, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from service.database import Base, UTCDateTime, utcnow


class PublishedDigest(Base):
    """A numbered issue: the curated draft of a window, frozen as it was published."""

    __tablename__ = "published_digests"
    __table_args__ = (
        Index("uq_published_digests_window", "window_start", "window_end", unique=True),
    )

    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    window_start: Mapped[date] = mapped_column(Date)
    window_end: Mapped[date] = mapped_column(Date)  # last day, inclusive
    title: Mapped[str] = mapped_column(String(300))
    published_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    published_by: Mapped[str] = mapped_column(String(200))
    content: Mapped[dict[str, Any]] = mapped_column(JSON)
    markdown_zh: Mapped[str] = mapped_column(Text)
    markdown_en: Mapped[str] = mapped_column(Text)


class PublishedItem(Base):
    """An item an issue carried, so later drafts can say it was already reported (R4)."""

    __tablename__ = "published_items"
    __table_args__ = (Index("ix_published_items_key", "item_key"),)

    digest_number: Mapped[int] = mapped_column(
        ForeignKey("published_digests.number", ondelete="CASCADE"), primary_key=True
    )
    item_key: Mapped[str] = mapped_column(String(300), primary_key=True)
