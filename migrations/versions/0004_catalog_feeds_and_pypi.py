"""catalog feeds and pypi

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 16:40:22.518293
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import service.database

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "feeds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("url", sa.String(length=1000), nullable=False),
        sa.Column("site", sa.String(length=1000), nullable=True),
        sa.Column("projects", sa.JSON(), nullable=False),
        sa.Column("etag", sa.String(length=500), nullable=True),
        sa.Column("last_modified", sa.String(length=100), nullable=True),
        sa.Column("last_checked_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_success_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("error_count", sa.Integer(), nullable=False),
        sa.Column("added_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_feeds")),
        sa.UniqueConstraint("key", name=op.f("uq_feeds_key")),
    )
    op.create_table(
        "posts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("feed_id", sa.Integer(), nullable=False),
        sa.Column("dedupe_key", sa.String(length=1100), nullable=False),
        sa.Column("title", sa.String(length=1000), nullable=False),
        sa.Column("link", sa.String(length=1000), nullable=True),
        sa.Column("published_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.Column("undated", sa.Boolean(), nullable=False),
        sa.Column("first_seen_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("authors", sa.JSON(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["feed_id"], ["feeds.id"], name=op.f("fk_posts_feed_id_feeds"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_posts")),
    )
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.create_index("ix_posts_published_at", ["published_at"], unique=False)
        batch_op.create_index("uq_posts_feed_key", ["feed_id", "dedupe_key"], unique=True)

    op.create_table(
        "package_availability",
        sa.Column("release_id", sa.Integer(), nullable=False),
        sa.Column("package", sa.String(length=200), nullable=False),
        sa.Column("version", sa.String(length=300), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("first_wheel_upload", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("checked_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["release_id"],
            ["releases.id"],
            name=op.f("fk_package_availability_release_id_releases"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("release_id", "package", name=op.f("pk_package_availability")),
    )
    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.add_column(sa.Column("options", sa.JSON(), nullable=True))

    with op.batch_alter_table("releases", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("tag_only", sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("releases", schema=None) as batch_op:
        batch_op.drop_column("tag_only")

    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.drop_column("options")

    op.drop_table("package_availability")
    with op.batch_alter_table("posts", schema=None) as batch_op:
        batch_op.drop_index("uq_posts_feed_key")
        batch_op.drop_index("ix_posts_published_at")

    op.drop_table("posts")
    op.drop_table("feeds")
