"""The store on SQLite and PostgreSQL: exact UTC round-trips and idempotent upserts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import select
from sqlalchemy.exc import StatementError
from sqlalchemy.orm import Session, sessionmaker

from service.database import transaction, upsert
from service.projects import service as projects
from service.releases.models import Release
from service.sync.service import RELEASE_UPDATE_COLUMNS

PACIFIC = timezone(timedelta(hours=-7))
BEIJING = timezone(timedelta(hours=8))


def release_values(project_id: int, tag: str, published_at: datetime, body: str = "") -> dict:
    return {
        "project_id": project_id,
        "github_id": 1,
        "tag": tag,
        "version": tag.lstrip("v"),
        "version_line": tag.lstrip("v"),
        "name": tag,
        "published_at": published_at,
        "created_at": None,
        "prerelease": False,
        "github_prerelease": False,
        "url": f"https://github.com/o/r/releases/tag/{tag}",
        "body": body,
        "target_commitish": "main",
    }


@pytest.fixture
def project_id(factory: sessionmaker[Session]) -> int:
    with transaction(factory) as session:
        return projects.add(session, projects.ProjectSpec("o/r")).id


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 8, 10, 23, 30, 0, 123456, tzinfo=PACIFIC),
        datetime(2026, 8, 4, 7, 30, tzinfo=BEIJING),
        datetime(2026, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(1999, 1, 1, tzinfo=UTC),
    ],
)
def test_timestamps_round_trip_exactly_as_aware_utc(
    factory: sessionmaker[Session], project_id: int, moment: datetime
) -> None:
    with transaction(factory) as session:
        upsert(
            session,
            Release,
            [release_values(project_id, "v1", moment)],
            ["project_id", "tag"],
            RELEASE_UPDATE_COLUMNS,
        )
    with factory() as session:
        stored = session.scalars(select(Release)).one().published_at
    assert stored == moment
    assert stored.utcoffset() == timedelta(0)
    assert stored.tzinfo is UTC


def test_window_bounds_compare_in_utc_in_sql(
    factory: sessionmaker[Session], project_id: int
) -> None:
    boundary = datetime(2026, 8, 11, tzinfo=UTC)
    moments = {
        "late-pacific": datetime(2026, 8, 10, 23, 30, tzinfo=PACIFIC),  # 08-11 06:30Z
        "last-second": datetime(2026, 8, 10, 23, 59, 59, tzinfo=UTC),
        "midnight": boundary,
    }
    with transaction(factory) as session:
        upsert(
            session,
            Release,
            [release_values(project_id, tag, moment) for tag, moment in moments.items()],
            ["project_id", "tag"],
            RELEASE_UPDATE_COLUMNS,
        )
    with factory() as session:
        before = session.scalars(select(Release.tag).where(Release.published_at < boundary))
        assert sorted(before) == ["last-second"]


def test_naive_datetimes_are_refused(factory: sessionmaker[Session], project_id: int) -> None:
    with pytest.raises(StatementError, match="naive datetime"), transaction(factory) as session:
        upsert(
            session,
            Release,
            [release_values(project_id, "v1", datetime(2026, 1, 1))],
            ["project_id", "tag"],
            RELEASE_UPDATE_COLUMNS,
        )


def test_upsert_is_idempotent_and_updates_only_what_changed(
    factory: sessionmaker[Session], project_id: int
) -> None:
    moment = datetime(2026, 8, 1, tzinfo=UTC)
    rows = [
        release_values(project_id, "v1", moment, "notes"),
        release_values(project_id, "v2", moment),
    ]
    for _ in range(3):
        with transaction(factory) as session:
            upsert(session, Release, rows, ["project_id", "tag"], RELEASE_UPDATE_COLUMNS)
    with factory() as session:
        stored = {r.tag: (r.id, r.body) for r in session.scalars(select(Release))}
    assert len(stored) == 2
    edited = [release_values(project_id, "v1", moment, "edited notes")]
    with transaction(factory) as session:
        upsert(session, Release, edited, ["project_id", "tag"], RELEASE_UPDATE_COLUMNS)
    with factory() as session:
        after = {r.tag: (r.id, r.body) for r in session.scalars(select(Release))}
    assert after == {"v1": (stored["v1"][0], "edited notes"), "v2": stored["v2"]}


def test_text_with_nul_and_huge_bodies_is_stored_once_cleaned(
    factory: sessionmaker[Session], project_id: int
) -> None:
    from service.normalize import MAX_BODY_CHARS, clean_text

    body = clean_text("a\x00b" + "é" * (MAX_BODY_CHARS + 10), MAX_BODY_CHARS)
    with transaction(factory) as session:
        upsert(
            session,
            Release,
            [release_values(project_id, "v1", datetime.now(UTC), body)],
            ["project_id", "tag"],
            RELEASE_UPDATE_COLUMNS,
        )
    with factory() as session:
        assert session.scalars(select(Release.body)).one() == body
