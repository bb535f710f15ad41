"""draft indexes

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 16:45:00

- releases (project_id, version_line, published_at): the draft's version table asks, per
  project and version line of the window, for the line's earlier pre-releases; with only
  (project_id, published_at) every earlier release of the project was read and filtered.
- changes (first_release_id, merged_at) and (first_stable_release_id, merged_at) replace
  the single-column indexes: "first shipped by a release of the window, merged before it"
  becomes one index range, where PostgreSQL intersected with a bitmap of every change
  merged before the window (EXPLAIN in bench/RESULTS.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_releases_project_line_published",
        "releases",
        ["project_id", "version_line", "published_at"],
    )
    op.create_index("ix_changes_first_release_merged", "changes", ["first_release_id", "merged_at"])
    op.create_index(
        "ix_changes_first_stable_merged", "changes", ["first_stable_release_id", "merged_at"]
    )
    op.drop_index("ix_changes_first_release", table_name="changes")
    op.drop_index("ix_changes_first_stable_release", table_name="changes")


def downgrade() -> None:
    op.create_index("ix_changes_first_stable_release", "changes", ["first_stable_release_id"])
    op.create_index("ix_changes_first_release", "changes", ["first_release_id"])
    op.drop_index("ix_changes_first_stable_merged", table_name="changes")
    op.drop_index("ix_changes_first_release_merged", table_name="changes")
    op.drop_index("ix_releases_project_line_published", table_name="releases")
