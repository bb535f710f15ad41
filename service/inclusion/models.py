from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from service.database import Base, UTCDateTime, utcnow


class LinkMethod(enum.StrEnum):
    """How a release was found to contain a change."""

    ANCESTRY = "commit_ancestry"  # the PR's merge commit is in the release's compare range
    COMMIT_REFERENCE = "commit_reference"  # a commit in the range names the PR: "... (#N)"
    RELEASE_NOTES = "release_notes"  # the release notes link the PR


class Comparison(Base):
    """A cached ``compare/{base}...{head}`` between two tags. It never changes once fetched.

    ``base_tag`` is empty for a root range (the history before the first known release)."""

    __tablename__ = "comparisons"
    __table_args__ = (
        Index("uq_comparisons_range", "project_id", "base_tag", "head_tag", unique=True),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    base_tag: Mapped[str] = mapped_column(String(300))
    head_tag: Mapped[str] = mapped_column(String(300))
    total_commits: Mapped[int] = mapped_column(Integer)
    fetched_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ComparisonCommit(Base):
    __tablename__ = "comparison_commits"

    comparison_id: Mapped[int] = mapped_column(
        ForeignKey("comparisons.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    sha: Mapped[str] = mapped_column(String(64))
    subject: Mapped[str] = mapped_column(String(1000))


class ReleaseChange(Base):
    __tablename__ = "release_changes"
    __table_args__ = (Index("ix_release_changes_change", "change_id"),)

    release_id: Mapped[int] = mapped_column(
        ForeignKey("releases.id", ondelete="CASCADE"), primary_key=True
    )
    change_id: Mapped[int] = mapped_column(
        ForeignKey("changes.id", ondelete="CASCADE"), primary_key=True
    )
    method: Mapped[str] = mapped_column(String(32), primary_key=True)
