"""Each change and release is analysed once, when it is stored, under a version; a draft
over stale analyses is the same as over fresh ones, and re-analysis brings them up to date."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from importlib import resources

import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from service import analysis
from service.analysis import ChangeAnalysis, ReleaseAnalysis, analyze_change, analyze_release
from service.changes.models import Change
from service.config import Settings
from service.database import transaction
from service.digests.service import build_draft
from service.projects.catalog_import import import_catalog
from service.projects.models import Project
from service.releases.models import Release
from service.scheduler import Poller
from service.sync.service import ProjectSyncer
from service.themes import Taxonomy, default_taxonomy, load_taxonomy
from service.windows import window_for
from tests.fake_github import FakeGitHub
from tests.store_snapshot import track

WEEK = window_for("2026-09-30", "2026-10-06")
IN_WEEK = datetime(2026, 10, 1, tzinfo=UTC)
NOTES = """## Highlights
* Decode is 1.5-2x faster on GB300.

### Breaking Changes
* The `--legacy-scheduler` flag was removed.
"""
CATALOG = """
[[projects]]
repo = "acme/engine"
name = "Engine"
category = "{category}"
"""


@pytest.fixture
def synced(fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer) -> None:
    repo = fake_github.repo("acme/engine")
    repo.commit("initial", committed_at=IN_WEEK - timedelta(days=30))
    repo.release("v1.0.0", published_at=IN_WEEK - timedelta(days=20))
    repo.merge_pull(1, "[Model] Support Kimi K3", merged_at=IN_WEEK + timedelta(hours=1))
    repo.merge_pull(
        2, "[Perf] FP8 KV cache, +9.8% E2E throughput", merged_at=IN_WEEK + timedelta(hours=2)
    )
    repo.merge_pull(
        3,
        "[Frontend] Remove the --disable-log-requests flag",
        merged_at=IN_WEEK + timedelta(hours=3),
    )
    repo.merge_pull(4, "[CI] Fix nightly build", merged_at=IN_WEEK + timedelta(hours=4))
    repo.merge_pull(5, "Add the glorp sampler", merged_at=IN_WEEK + timedelta(hours=5))
    repo.release("v1.1.0", published_at=IN_WEEK + timedelta(days=2), body=NOTES)
    track(factory, "acme/engine", "Engine")
    assert syncer.sync("acme/engine").ok


def edited_taxonomy() -> Taxonomy:
    """The packaged taxonomy with one keyword more: a "glorp" is multimodal."""
    data = resources.files("service.data")
    themes = data.joinpath("themes.toml").read_text(encoding="utf-8")
    models = data.joinpath("models.toml").read_text(encoding="utf-8")
    edited = themes.replace('keywords = ["multimodal", ', 'keywords = ["glorp", "multimodal", ', 1)
    assert edited != themes, "the packaged multimodal theme's keywords have moved"
    return load_taxonomy(edited, models, "edited")


def test_sync_stores_each_change_and_release_analysed(
    factory: sessionmaker[Session], synced: None
) -> None:
    taxonomy = default_taxonomy()
    version = analysis.analysis_version(taxonomy)
    with factory() as session:
        changes = session.scalars(select(Change).order_by(Change.number)).all()
        assert len(changes) == 5
        for change in changes:
            assert change.analysis_version == version and change.analysis is not None
            stored = ChangeAnalysis.from_columns(change.analysis, change.noise, change.breaking)
            assert stored == analyze_change(
                change.title, change.labels, change.body, None, taxonomy
            )
        by_number = {c.number: c for c in changes}
        assert by_number[3].breaking and not by_number[1].breaking
        assert by_number[4].noise == "ci" and by_number[1].noise is None
        release = session.scalar(select(Release).where(Release.tag == "v1.1.0"))
        assert release is not None and release.analysis_version == version
        stored_release = ReleaseAnalysis.from_column(release.analysis or "")
        assert stored_release == analyze_release(NOTES)
        assert stored_release.breaking_changes == ("The `--legacy-scheduler` flag was removed.",)
        assert [c["value"] for c in stored_release.claims] == ["1.5-2x"]
        assert analysis.count_stale(session, taxonomy) == 0


def test_a_draft_over_stale_analyses_equals_a_fresh_one(
    factory: sessionmaker[Session], synced: None
) -> None:
    taxonomy = default_taxonomy()
    with factory() as session:
        fresh = build_draft(session, WEEK, include_all=True, taxonomy=taxonomy)
    wrong = '{"themes":["other"],"models":[],"claims":[],"score":0,"reasons":[]}'
    with transaction(factory) as session:
        session.execute(
            update(Change).values(
                analysis=wrong, analysis_version="old", noise=None, breaking=False
            )
        )
        session.execute(
            update(Release).values(
                analysis='{"breaking_changes":[],"claims":[]}', analysis_version="old"
            )
        )
    with factory() as session:
        assert analysis.count_stale(session, taxonomy) == 7
        assert build_draft(session, WEEK, include_all=True, taxonomy=taxonomy) == fresh
    with transaction(factory) as session:
        assert analysis.refresh_stale(session, taxonomy, limit=3) == 2  # releases first
    refreshed = 0
    while True:
        with transaction(factory) as session:
            count = analysis.refresh_stale(session, taxonomy, limit=3)
        if count == 0:
            break
        refreshed += count
    assert refreshed == 5
    with factory() as session:
        assert analysis.count_stale(session, taxonomy) == 0
        assert session.scalar(select(Change.breaking).where(Change.number == 3)) is True
        assert build_draft(session, WEEK, include_all=True, taxonomy=taxonomy) == fresh


def test_an_edited_taxonomy_reclassifies_before_and_after_reanalysis(
    factory: sessionmaker[Session], synced: None
) -> None:
    edited = edited_taxonomy()
    assert edited.version != default_taxonomy().version

    def themes_of_glorp(taxonomy: Taxonomy) -> list[str]:
        with factory() as session:
            draft = build_draft(session, WEEK, include_all=True, taxonomy=taxonomy)
        return next(
            item["themes"]
            for theme in draft["themes"]
            for item in theme["items"]
            if item["number"] == 5
        )

    assert "multimodal" not in themes_of_glorp(default_taxonomy())
    assert "multimodal" in themes_of_glorp(edited)  # stale rows: analysed on the fly
    with factory() as session:
        assert analysis.count_stale(session, edited) == 7
    with transaction(factory) as session:
        while analysis.refresh_stale(session, edited, limit=100):
            pass
    with factory() as session:
        assert analysis.count_stale(session, edited) == 0
        assert analysis.count_stale(session, default_taxonomy()) == 7
    assert "multimodal" in themes_of_glorp(edited)


def test_a_new_project_category_makes_its_changes_stale(
    factory: sessionmaker[Session], synced: None
) -> None:
    from service.catalog import parse_catalog

    taxonomy = default_taxonomy()
    with transaction(factory) as session:
        import_catalog(session, parse_catalog(CATALOG.format(category="kernels"), "test"))
    with factory() as session:
        project = session.scalar(select(Project).where(Project.repo_key == "acme/engine"))
        assert project is not None and project.category == "kernels"
        assert analysis.count_stale(session, taxonomy) == 5
    with transaction(factory) as session:
        while analysis.refresh_stale(session, taxonomy):
            pass
    with transaction(factory) as session:  # the same category again changes nothing
        import_catalog(session, parse_catalog(CATALOG.format(category="kernels"), "test"))
    with factory() as session:
        assert analysis.count_stale(session, taxonomy) == 0
        fix = session.scalar(select(Change).where(Change.number == 4))
        assert fix is not None
        assert ChangeAnalysis.from_columns(
            fix.analysis or "", fix.noise, fix.breaking
        ) == analyze_change(fix.title, fix.labels, fix.body, "kernels", taxonomy)


def test_the_worker_reanalyses_in_batches(
    factory: sessionmaker[Session],
    settings: Settings,
    synced: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from service import scheduler

    monkeypatch.setattr(scheduler, "REANALYSIS_BATCH", 2)
    with transaction(factory) as session:
        session.execute(update(Change).values(analysis_version=None))
    poller = Poller(factory, settings)
    try:
        assert poller.run_reanalysis() == 5
        assert poller.run_reanalysis() == 0
    finally:
        poller.shutdown()
    with factory() as session:
        assert analysis.count_stale(session, default_taxonomy()) == 0
