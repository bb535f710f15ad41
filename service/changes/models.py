from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, Boolean, ForeignKey, Index, Integer, String, Text, false
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from service.database import Base, UTCDateTime


class Change(Base):
    """A merged pull request. Its merge date and the releases that first shipped it are
    separate facts: ``merged_at`` comes from GitHub, the release links from inclusion."""

    __tablename__ = "changes"
    __table_args__ = (
        Index("uq_changes_project_number", "project_id", "number", unique=True),
        Index("ix_changes_merged_at", "merged_at"),
        Index("ix_changes_project_merged", "project_id", "merged_at"),
        Index("ix_changes_merge_commit", "project_id", "merge_commit_sha"),
        # with merged_at, "shipped in the window, merged before it" is one index range
        Index("ix_changes_first_release_merged", "first_release_id", "merged_at"),
        Index("ix_changes_first_stable_merged", "first_stable_release_id", "merged_at"),
        Index("ix_changes_analysis_version", "analysis_version"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    github_id: Mapped[int | None] = mapped_column(BigInteger)
    number: Mapped[int] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(String(1000))
    body: Mapped[str] = mapped_column(Text, default="")
    author: Mapped[str | None] = mapped_column(String(200))
    labels: Mapped[list[str]] = mapped_column(
        JSON().with_variant(JSONB(), "postgresql"), default=list
    )
    merged_at: Mapped[datetime] = mapped_column(UTCDateTime)
    merge_commit_sha: Mapped[str | None] = mapped_column(String(64))
    base_branch: Mapped[str | None] = mapped_column(String(300))
    url: Mapped[str] = mapped_column(String(1000))
    github_updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    first_release_id: Mapped[int | None] = mapped_column(
        ForeignKey("releases.id", ondelete="SET NULL")
    )
    first_stable_release_id: Mapped[int | None] = mapped_column(
        ForeignKey("releases.id", ondelete="SET NULL")
    )
    # what service.analysis made of the change, and with which taxonomy version
    analysis: Mapped[str | None] = mapped_column(Text)
    analysis_version: Mapped[str | None] = mapped_column(String(32))
    noise: Mapped[str | None] = mapped_column(String(40))
    breaking: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
