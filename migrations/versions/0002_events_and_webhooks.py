"""events and webhooks

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02 16:12:03.802186
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import service.database

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "webhook_subscriptions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("description", sa.String(length=300), nullable=True),
        sa.Column(
            "events",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "repositories",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("prerelease_only", sa.Boolean(), nullable=False),
        sa.Column(
            "themes",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("secret", sa.String(length=500), nullable=False),
        sa.Column("format", sa.String(length=20), nullable=False),
        sa.Column("signing", sa.Boolean(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("failing_since", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_subscriptions")),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.String(length=64), nullable=False),
        sa.Column("type", sa.String(length=40), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=True),
        sa.Column("release_id", sa.Integer(), nullable=True),
        sa.Column("change_id", sa.Integer(), nullable=True),
        sa.Column("subject", sa.String(length=400), nullable=False),
        sa.Column("occurred_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.Column("created_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.Column("ready", sa.Boolean(), nullable=False),
        sa.Column("ready_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("dispatched_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column(
            "payload",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=True,
        ),
        sa.ForeignKeyConstraint(
            ["change_id"],
            ["changes.id"],
            name=op.f("fk_events_change_id_changes"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_events_project_id_projects"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["release_id"],
            ["releases.id"],
            name=op.f("fk_events_release_id_releases"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index("ix_events_project_ready", ["project_id", "ready"], unique=False)
        batch_op.create_index("ix_events_undispatched", ["ready", "dispatched_at"], unique=False)
        batch_op.create_index("uq_events_event_id", ["event_id"], unique=True)

    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("subscription_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("first_attempt_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_attempt_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("delivered_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("leased_until", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["events.id"],
            name=op.f("fk_webhook_deliveries_event_id_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["subscription_id"],
            ["webhook_subscriptions.id"],
            name=op.f("fk_webhook_deliveries_subscription_id_webhook_subscriptions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_webhook_deliveries_queue", ["status", "subscription_id", "id"], unique=False
        )
        batch_op.create_index(
            "uq_webhook_deliveries_subscription_event", ["subscription_id", "event_id"], unique=True
        )

    op.create_table(
        "webhook_attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("delivery_id", sa.Integer(), nullable=False),
        sa.Column("attempted_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["webhook_deliveries.id"],
            name=op.f("fk_webhook_attempts_delivery_id_webhook_deliveries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempts")),
    )
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.create_index("ix_webhook_attempts_delivery", ["delivery_id", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_attempts_delivery")

    op.drop_table("webhook_attempts")
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_index("uq_webhook_deliveries_subscription_event")
        batch_op.drop_index("ix_webhook_deliveries_queue")

    op.drop_table("webhook_deliveries")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index("uq_events_event_id")
        batch_op.drop_index("ix_events_undispatched")
        batch_op.drop_index("ix_events_project_ready")

    op.drop_table("events")
    op.drop_table("webhook_subscriptions")
