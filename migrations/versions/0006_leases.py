"""leases

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 16:54:56.886912
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import service.database

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "leases",
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("owner", sa.String(length=200), nullable=False),
        sa.Column("expires_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_leases")),
    )


def downgrade() -> None:
    op.drop_table("leases")
