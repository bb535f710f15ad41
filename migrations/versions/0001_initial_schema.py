"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-12-02 15:53:44.250944
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

import service.database

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("repo", sa.String(length=200), nullable=False),
        sa.Column("repo_key", sa.String(length=200), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("category", sa.String(length=100), nullable=True),
        sa.Column("default_branch", sa.String(length=200), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("added_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
        sa.UniqueConstraint("repo_key", name=op.f("uq_projects_repo_key")),
    )
    op.create_table(
        "comparisons",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("base_tag", sa.String(length=300), nullable=False),
        sa.Column("head_tag", sa.String(length=300), nullable=False),
        sa.Column("total_commits", sa.Integer(), nullable=False),
        sa.Column("fetched_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_comparisons_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_comparisons")),
    )
    with op.batch_alter_table("comparisons", schema=None) as batch_op:
        batch_op.create_index(
            "uq_comparisons_range", ["project_id", "base_tag", "head_tag"], unique=True
        )

    op.create_table(
        "http_validators",
        sa.Column("url", sa.String(length=2000), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=True),
        sa.Column("etag", sa.String(length=500), nullable=True),
        sa.Column("last_modified", sa.String(length=100), nullable=True),
        sa.Column("updated_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_http_validators_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("url", name=op.f("pk_http_validators")),
    )
    op.create_table(
        "releases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("github_id", sa.BigInteger(), nullable=True),
        sa.Column("tag", sa.String(length=300), nullable=False),
        sa.Column("version", sa.String(length=300), nullable=False),
        sa.Column("version_line", sa.String(length=300), nullable=False),
        sa.Column("name", sa.String(length=500), nullable=True),
        sa.Column("published_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.Column("created_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("prerelease", sa.Boolean(), nullable=False),
        sa.Column("github_prerelease", sa.Boolean(), nullable=False),
        sa.Column("url", sa.String(length=1000), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("tag_commit_sha", sa.String(length=64), nullable=True),
        sa.Column("target_commitish", sa.String(length=300), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_releases_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_releases")),
    )
    with op.batch_alter_table("releases", schema=None) as batch_op:
        batch_op.create_index(
            "ix_releases_project_published", ["project_id", "published_at"], unique=False
        )
        batch_op.create_index("ix_releases_published_at", ["published_at"], unique=False)
        batch_op.create_index("uq_releases_project_tag", ["project_id", "tag"], unique=True)

    op.create_table(
        "sync_states",
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("resource", sa.String(length=32), nullable=False),
        sa.Column("high_water_mark", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_attempt_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_success_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_error_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("error_count", sa.Integer(), nullable=False),
        sa.Column("next_run_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_sync_states_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", "resource", name=op.f("pk_sync_states")),
    )
    op.create_table(
        "changes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("github_id", sa.BigInteger(), nullable=True),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(length=1000), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=True),
        sa.Column(
            "labels",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("merged_at", service.database.UTCDateTime(timezone=True), nullable=False),
        sa.Column("merge_commit_sha", sa.String(length=64), nullable=True),
        sa.Column("base_branch", sa.String(length=300), nullable=True),
        sa.Column("url", sa.String(length=1000), nullable=False),
        sa.Column("github_updated_at", service.database.UTCDateTime(timezone=True), nullable=True),
        sa.Column("first_release_id", sa.Integer(), nullable=True),
        sa.Column("first_stable_release_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["first_release_id"],
            ["releases.id"],
            name=op.f("fk_changes_first_release_id_releases"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["first_stable_release_id"],
            ["releases.id"],
            name=op.f("fk_changes_first_stable_release_id_releases"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_changes_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_changes")),
    )
    with op.batch_alter_table("changes", schema=None) as batch_op:
        batch_op.create_index("ix_changes_first_release", ["first_release_id"], unique=False)
        batch_op.create_index(
            "ix_changes_first_stable_release", ["first_stable_release_id"], unique=False
        )
        batch_op.create_index(
            "ix_changes_merge_commit", ["project_id", "merge_commit_sha"], unique=False
        )
        batch_op.create_index("ix_changes_merged_at", ["merged_at"], unique=False)
        batch_op.create_index(
            "ix_changes_project_merged", ["project_id", "merged_at"], unique=False
        )
        batch_op.create_index("uq_changes_project_number", ["project_id", "number"], unique=True)

    op.create_table(
        "comparison_commits",
        sa.Column("comparison_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("sha", sa.String(length=64), nullable=False),
        sa.Column("subject", sa.String(length=1000), nullable=False),
        sa.ForeignKeyConstraint(
            ["comparison_id"],
            ["comparisons.id"],
            name=op.f("fk_comparison_commits_comparison_id_comparisons"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("comparison_id", "position", name=op.f("pk_comparison_commits")),
    )
    op.create_table(
        "release_changes",
        sa.Column("release_id", sa.Integer(), nullable=False),
        sa.Column("change_id", sa.Integer(), nullable=False),
        sa.Column("method", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["change_id"],
            ["changes.id"],
            name=op.f("fk_release_changes_change_id_changes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["release_id"],
            ["releases.id"],
            name=op.f("fk_release_changes_release_id_releases"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "release_id", "change_id", "method", name=op.f("pk_release_changes")
        ),
    )
    with op.batch_alter_table("release_changes", schema=None) as batch_op:
        batch_op.create_index("ix_release_changes_change", ["change_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("release_changes", schema=None) as batch_op:
        batch_op.drop_index("ix_release_changes_change")

    op.drop_table("release_changes")
    op.drop_table("comparison_commits")
    with op.batch_alter_table("changes", schema=None) as batch_op:
        batch_op.drop_index("uq_changes_project_number")
        batch_op.drop_index("ix_changes_project_merged")
        batch_op.drop_index("ix_changes_merged_at")
        batch_op.drop_index("ix_changes_merge_commit")
        batch_op.drop_index("ix_changes_first_stable_release")
        batch_op.drop_index("ix_changes_first_release")

    op.drop_table("changes")
    op.drop_table("sync_states")
    with op.batch_alter_table("releases", schema=None) as batch_op:
        batch_op.drop_index("uq_releases_project_tag")
        batch_op.drop_index("ix_releases_published_at")
        batch_op.drop_index("ix_releases_project_published")

    op.drop_table("releases")
    op.drop_table("http_validators")
    with op.batch_alter_table("comparisons", schema=None) as batch_op:
        batch_op.drop_index("uq_comparisons_range")

    op.drop_table("comparisons")
    op.drop_table("projects")
