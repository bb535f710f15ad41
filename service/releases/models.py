from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, Text, false
from sqlalchemy.orm import Mapped, mapped_column

from service.database import Base, UTCDateTime


class Release(Base):
    __tablename__ = "releases"
    __table_args__ = (
        Index("uq_releases_project_tag", "project_id", "tag", unique=True),
        Index("ix_releases_published_at", "published_at"),
        Index("ix_releases_project_published", "project_id", "published_at"),
        # the version table looks up earlier pre-releases of each line in the window
        Index("ix_releases_project_line_published", "project_id", "version_line", "published_at"),
        Index("ix_releases_analysis_version", "analysis_version"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    github_id: Mapped[int | None] = mapped_column(BigInteger)
    tag: Mapped[str] = mapped_column(String(300))
    version: Mapped[str] = mapped_column(String(300))
    version_line: Mapped[str] = mapped_column(String(300))
    name: Mapped[str | None] = mapped_column(String(500))
    published_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    prerelease: Mapped[bool] = mapped_column(Boolean)
    github_prerelease: Mapped[bool] = mapped_column(Boolean)
    url: Mapped[str] = mapped_column(String(1000))
    body: Mapped[str] = mapped_column(Text, default="")
    tag_commit_sha: Mapped[str | None] = mapped_column(String(64))
    target_commitish: Mapped[str | None] = mapped_column(String(300))
    tag_only: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # what service.analysis found in the notes, and with which version
    analysis: Mapped[str | None] = mapped_column(Text)
    analysis_version: Mapped[str | None] = mapped_column(String(32))


class PackageAvailability(Base):
    """Whether a stable release can be installed from PyPI: a non-yanked wheel, and when."""

    __tablename__ = "package_availability"

    release_id: Mapped[int] = mapped_column(
        ForeignKey("releases.id", ondelete="CASCADE"), primary_key=True
    )
    package: Mapped[str] = mapped_column(String(200), primary_key=True)
    version: Mapped[str] = mapped_column(String(300))
    status: Mapped[str] = mapped_column(
        String(20)
    )  # wheel | sdist_only | yanked | no_files | not_on_pypi
    first_wheel_upload: Mapped[datetime | None] = mapped_column(UTCDateTime)
    checked_at: Mapped[datetime] = mapped_column(UTCDateTime)
