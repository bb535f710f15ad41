"""editors desk

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02 16:22:03.988965
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import service.database

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("created_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    op.create_table(
        "curation_actions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("window_start", sa.Date(), nullable=False),
        sa.Column("window_end", sa.Date(), nullable=False),
        sa.Column("item_key", sa.String(length=300), nullable=False),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("value", sa.JSON(), nullable=True),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("created_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_curation_actions")),
    )
    with op.batch_alter_table("curation_actions", schema=None) as batch_op:
        batch_op.create_index("ix_curation_window", ["window_start", "window_end"], unique=False)

    op.create_table(
        "published_digests",
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("window_start", sa.Date(), nullable=False),
        sa.Column("window_end", sa.Date(), nullable=False),
        sa.Column("title", sa.String(length=300), nullable=False),
        sa.Column("published_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.Column("published_by", sa.String(length=200), nullable=False),
        sa.Column("content", sa.JSON(), nullable=False),
        sa.Column("markdown_zh", sa.Text(), nullable=False),
        sa.Column("markdown_en", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("number", name=op.f("pk_published_digests")),
    )
    with op.batch_alter_table("published_digests", schema=None) as batch_op:
        batch_op.create_index(
            "uq_published_digests_window", ["window_start", "window_end"], unique=True
        )

    op.create_table(
        "published_items",
        sa.Column("digest_number", sa.Integer(), nullable=False),
        sa.Column("item_key", sa.String(length=300), nullable=False),
        sa.ForeignKeyConstraint(
            ["digest_number"],
            ["published_digests.number"],
            name=op.f("fk_published_items_digest_number_published_digests"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("digest_number", "item_key", name=op.f("pk_published_items")),
    )
    with op.batch_alter_table("published_items", schema=None) as batch_op:
        batch_op.create_index("ix_published_items_key", ["item_key"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("published_items", schema=None) as batch_op:
        batch_op.drop_index("ix_published_items_key")

    op.drop_table("published_items")
    with op.batch_alter_table("published_digests", schema=None) as batch_op:
        batch_op.drop_index("uq_published_digests_window")

    op.drop_table("published_digests")
    with op.batch_alter_table("curation_actions", schema=None) as batch_op:
        batch_op.drop_index("ix_curation_window")

    op.drop_table("curation_actions")
    op.drop_table("api_tokens")
