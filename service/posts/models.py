from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from service.database import Base, UTCDateTime, utcnow


class Feed(Base):
    """A blog feed, with its conditional-GET validators and error count kept on it."""

    __tablename__ = "feeds"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(100), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    url: Mapped[str] = mapped_column(String(1000))
    site: Mapped[str | None] = mapped_column(String(1000))
    projects: Mapped[list[str]] = mapped_column(JSON, default=list)
    etag: Mapped[str | None] = mapped_column(String(500))
    last_modified: Mapped[str | None] = mapped_column(String(100))
    last_checked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_success_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    error_count: Mapped[int] = mapped_column(Integer, default=0)
    added_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Post(Base):
    __tablename__ = "posts"
    __table_args__ = (
        Index("uq_posts_feed_key", "feed_id", "dedupe_key", unique=True),
        Index("ix_posts_published_at", "published_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    feed_id: Mapped[int] = mapped_column(ForeignKey("feeds.id", ondelete="CASCADE"))
    dedupe_key: Mapped[str] = mapped_column(String(1100))
    title: Mapped[str] = mapped_column(String(1000))
    link: Mapped[str | None] = mapped_column(String(1000))
    published_at: Mapped[datetime] = mapped_column(UTCDateTime)
    undated: Mapped[bool] = mapped_column(Boolean, default=False)  # published_at is first-seen
    first_seen_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    summary: Mapped[str] = mapped_column(Text, default="")
    authors: Mapped[list[str]] = mapped_column(JSON, default=list)
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
