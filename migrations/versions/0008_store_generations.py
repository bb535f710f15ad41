"""store generations bumped by triggers

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 07:40:00.000000

Two counters — the data a draft reads, and the editors' curation — that the database bumps
in the writing transaction itself, whoever writes (sync, feeds, PyPI, catalog, publishing,
re-analysis, a hand-run SQL statement). A cached draft stays valid while they stand still.

PostgreSQL runs one statement-level trigger per table and statement; SQLite only has row
triggers. Catalog tables bump only when their catalog columns change, not when a poll
records its validators or errors. A later migration that rebuilds a watched table on
SQLite (``batch_alter_table``) drops its triggers and must create them again
(``create_triggers``); tests/test_generations.py checks every watched table still has them.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# table → (counter, the columns whose update counts; None: every column)
WATCHED: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "changes": ("store", None),
    "releases": ("store", None),
    "projects": ("store", ("repo", "repo_key", "name", "category", "enabled", "options")),
    "feeds": ("store", ("key", "name", "url", "site", "projects")),
    "posts": ("store", None),
    "package_availability": ("store", None),
    "published_digests": ("store", None),
    "published_items": ("store", None),
    "curation_actions": ("curation", None),
}

PG_FUNCTION = """
CREATE OR REPLACE FUNCTION bump_store_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO store_generations (name, value, epoch)
    VALUES (TG_ARGV[0], 1, md5(random()::text || clock_timestamp()::text))
    ON CONFLICT (name) DO UPDATE SET value = store_generations.value + 1;
    RETURN NULL;
END
$$
"""

SQLITE_BUMP = """
INSERT INTO store_generations (name, value, epoch)
VALUES ('{counter}', 1, lower(hex(randomblob(16))))
ON CONFLICT (name) DO UPDATE SET value = value + 1;
"""


def _trigger_name(table: str, event: str = "") -> str:
    return f"bump_generation_{table}{'_' + event if event else ''}"


def create_triggers(table: str) -> None:
    counter, columns = WATCHED[table]
    update = f"UPDATE OF {', '.join(columns)}" if columns else "UPDATE"
    if op.get_bind().dialect.name == "postgresql":
        events = f"INSERT OR DELETE OR {update} OR TRUNCATE"
        op.execute(
            f"CREATE TRIGGER {_trigger_name(table)} AFTER {events} ON {table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION bump_store_generation('{counter}')"
        )
        return
    for event, clause in (("insert", "INSERT"), ("update", update), ("delete", "DELETE")):
        op.execute(
            f"CREATE TRIGGER {_trigger_name(table, event)} AFTER {clause} ON {table} "
            f"FOR EACH ROW BEGIN {SQLITE_BUMP.format(counter=counter)} END"
        )


def upgrade() -> None:
    op.create_table(
        "store_generations",
        sa.Column("name", sa.String(length=50), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.Column("epoch", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_store_generations")),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_FUNCTION)
    for table in WATCHED:
        create_triggers(table)


def downgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    for table in WATCHED:
        if postgres:
            op.execute(f"DROP TRIGGER IF EXISTS {_trigger_name(table)} ON {table}")
        else:
            for event in ("insert", "update", "delete"):
                op.execute(f"DROP TRIGGER IF EXISTS {_trigger_name(table, event)}")
    if postgres:
        op.execute("DROP FUNCTION IF EXISTS bump_store_generation()")
    op.drop_table("store_generations")
