"""change and release analysis stored with them

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 22:40:00.000000

Each change keeps its classification (themes, model families, noise, breaking, claims) and
the timing-independent part of its score, stamped with the taxonomy version that produced
them, so a draft reads them instead of recomputing them on every request; a release keeps
the breaking changes and reported numbers of its notes the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("changes") as batch:
        batch.add_column(sa.Column("analysis", sa.Text(), nullable=True))
        batch.add_column(sa.Column("analysis_version", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("noise", sa.String(length=40), nullable=True))
        batch.add_column(
            sa.Column("breaking", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_index("ix_changes_analysis_version", "changes", ["analysis_version"])
    with op.batch_alter_table("releases") as batch:
        batch.add_column(sa.Column("analysis", sa.Text(), nullable=True))
        batch.add_column(sa.Column("analysis_version", sa.String(length=32), nullable=True))
    op.create_index("ix_releases_analysis_version", "releases", ["analysis_version"])


def downgrade() -> None:
    op.drop_index("ix_releases_analysis_version", table_name="releases")
    with op.batch_alter_table("releases") as batch:
        batch.drop_column("analysis_version")
        batch.drop_column("analysis")
    op.drop_index("ix_changes_analysis_version", table_name="changes")
    with op.batch_alter_table("changes") as batch:
        batch.drop_column("breaking")
        batch.drop_column("noise")
        batch.drop_column("analysis_version")
        batch.drop_column("analysis")
