"""Every tracked project and source: the catalog import, blogs through feeds, PyPI
availability, token-less polling through github.com's Atom feeds, and tag-only projects."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from connectors.feeds import FeedClient
from connectors.pypi import PyPIClient
from service.catalog import CatalogBlog, load_catalog, options_of, parse_catalog
from service.config import Settings
from service.database import transaction
from service.digests.render import render_markdown
from service.digests.service import build_draft
from service.posts import service as posts
from service.posts.models import Feed, Post
from service.projects.catalog_import import import_catalog
from service.projects.models import Project
from service.releases.models import Release
from service.sync.service import ProjectSyncer
from service.windows import window_for
from tests.conftest import TOKEN, make_test_client
from tests.fake_feeds import FakeFeeds, PyPIFile
from tests.fake_feeds import Post as FeedPost
from tests.fake_github import FakeGitHub
from tests.store_snapshot import first_releases, snapshot, track

T0 = datetime(2026, 9, 1, tzinfo=UTC)
WEEK = window_for("2026-09-30", "2026-10-06")


@pytest.fixture
def feeds_server() -> Iterator[FakeFeeds]:
    with FakeFeeds() as server:
        yield server


def set_options(factory: sessionmaker[Session], repo: str, catalog_toml: str) -> None:
    entry = parse_catalog(catalog_toml, "test").projects[0]
    with factory.begin() as session:
        project = session.scalar(select(Project).where(Project.repo_key == repo.lower()))
        assert project is not None
        project.options = options_of(entry)
        project.category = entry.category


def test_catalog_import_tracks_every_project_and_blog_and_is_idempotent(
    factory: sessionmaker[Session], settings: Settings, tmp_path: Path
) -> None:
    catalog = load_catalog()
    assert len(catalog.projects) >= 28 and len(catalog.blogs) == 3
    with transaction(factory) as session:
        first = import_catalog(session, catalog)
    with transaction(factory) as session:
        again = import_catalog(session, catalog)
    assert len(first.added) == len(catalog.projects) and again.added == again.updated == []
    with factory() as session:
        stored = {p.repo: p for p in session.scalars(select(Project))}
        assert stored["vllm-project/vllm"].name == "vLLM"
        assert stored["flashinfer-ai/flashinfer"].options["nightly_releases"] is False
        assert len(session.scalars(select(Feed)).all()) == 3
    # the command line does the same on the configured store, and says what it did
    env = {"DIGEST_DATABASE_URL": settings.resolved_database_url, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "service", "projects", "import"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert f"{len(catalog.projects)} project(s): 0 added, 0 updated; 3 blog feed(s)" in done.stdout


def blog(feeds_server: FakeFeeds, key: str, path: str) -> CatalogBlog:
    return CatalogBlog(key, key.title(), feeds_server.url(path), None, ("vllm-project/vllm",))


def test_blogs_become_posts_deduplicated_and_bad_feeds_are_recorded_and_skipped(
    factory: sessionmaker[Session], feeds_server: FakeFeeds
) -> None:
    when = datetime(2026, 10, 2, 8, tzinfo=UTC)
    feeds_server.rss(
        "/vllm/rss.xml",
        [
            FeedPost(
                "Watermarking in vLLM",
                "https://blog.example.org/watermark",
                guid="w1",
                published=when,
            ),
            FeedPost(
                "PD Serving of Qwen3.8-2.4T: 1.5-2x throughput",
                "https://blog.example.org/pd",
                guid="p1",
                published=when + timedelta(hours=5),
            ),
            FeedPost("An undated note", "https://blog.example.org/undated", guid="u1"),
        ],
    )
    feeds_server.atom(
        "/pytorch/atom.xml",
        [FeedPost("FP8 training with torchao", "https://atom.example.org/fp8", published=when)],
        etag='W/"pytorch-1"',
        last_modified="Fri, 02 Oct 2026 08:00:00 GMT",
    )
    feeds_server.route(
        "/broken/feed.xml", b"<html><body>maintenance</body></html>", content_type="text/html"
    )
    with transaction(factory) as session:
        for key, path in (
            ("broken", "/broken/feed.xml"),
            ("pytorch", "/pytorch/atom.xml"),
            ("vllm", "/vllm/rss.xml"),
        ):
            posts.upsert_feed(session, blog(feeds_server, key, path))
    seen_at = datetime(2026, 10, 3, tzinfo=UTC)
    with FeedClient() as client:
        results = {
            key: posts.sync_feed(factory, client, key, lambda: seen_at)
            for key in ("broken", "pytorch", "vllm")
        }
        assert results == {"broken": -1, "pytorch": 1, "vllm": 3}
        # the same entries again, and one whose guid changed but whose link did not
        feeds_server.rss(
            "/vllm/rss.xml",
            [
                FeedPost(
                    "Watermarking in vLLM (updated)",
                    "https://blog.example.org/watermark",
                    guid="w1-v2",
                    published=when,
                )
            ],
        )
        assert posts.sync_feed(factory, client, "vllm", lambda: seen_at) == 0
        assert posts.sync_feed(factory, client, "pytorch", lambda: seen_at) == 0  # 304
    with factory() as session:
        broken = session.scalar(select(Feed).where(Feed.key == "broken"))
        assert broken is not None and broken.error_count == 1 and broken.last_error
        undated = session.scalar(
            select(Post).where(Post.link == "https://blog.example.org/undated")
        )
        assert undated is not None and undated.undated and undated.published_at == seen_at
        assert len(session.scalars(select(Post)).all()) == 4
    assert feeds_server.requests_to("/pytorch/atom.xml")[-1].status == 304
    with factory() as session:
        draft = build_draft(session, WEEK)
    found = {i["title"]: i for theme in draft["themes"] for i in theme["items"]}
    pd = found["PD Serving of Qwen3.8-2.4T: 1.5-2x throughput"]
    assert pd["kind"] == "post" and pd["primary_theme"] == "disaggregated_serving"
    assert pd["models"] == ["qwen"] and pd["claims"][0]["value"] == "1.5-2x"
    assert found["An undated note"]["undated"]
    assert "发布于项目博客" in render_markdown(draft)


def test_pypi_availability_shows_released_but_not_installable(
    fake_github: FakeGitHub,
    factory: sessionmaker[Session],
    settings: Settings,
    feeds_server: FakeFeeds,
) -> None:
    repo = fake_github.repo("acme/engine")
    repo.commit("initial", committed_at=T0)
    repo.release("v1.0.0", published_at=datetime(2026, 10, 1, tzinfo=UTC))
    repo.release("v1.0.1", published_at=datetime(2026, 10, 3, tzinfo=UTC))
    repo.release("v1.1.0rc1", published_at=datetime(2026, 10, 4, tzinfo=UTC), prerelease=True)
    uploaded = datetime(2026, 10, 1, 2, tzinfo=UTC)
    feeds_server.pypi(
        "acme-engine",
        "1.0.0",
        [PyPIFile("acme_engine-1.0.0-py3-none-any.whl", "bdist_wheel", uploaded)],
    )
    feeds_server.pypi(
        "acme-engine", "1.0.1", [PyPIFile("acme_engine-1.0.1.tar.gz", "sdist", uploaded)]
    )
    track(factory, "acme/engine")
    set_options(
        factory,
        "acme/engine",
        '[[projects]]\nrepo = "acme/engine"\nname = "Engine"\ncategory = "inference"\npypi = ["acme-engine"]\n',
    )
    with (
        make_test_client(fake_github) as client,
        PyPIClient(feeds_server.base_url, sleep=lambda _s: None) as pypi,
    ):
        assert (
            ProjectSyncer(factory, settings, client, clock=fake_github.now, pypi=pypi)
            .sync("acme/engine")
            .ok
        )
    with factory() as session:
        draft = build_draft(session, WEEK)
    by_tag = {r["tag"]: r for r in draft["releases"]}
    assert (
        by_tag["v1.0.0"]["pypi"][0]["status"] == "wheel" and not by_tag["v1.0.0"]["not_on_pypi_yet"]
    )
    assert (
        by_tag["v1.0.1"]["pypi"][0]["status"] == "sdist_only"
        and by_tag["v1.0.1"]["not_on_pypi_yet"]
    )
    assert by_tag["v1.1.0rc1"]["pypi"] == []  # pre-releases are not looked up
    assert "GitHub 已发布，PyPI 尚无可安装 wheel" in render_markdown(draft)
    assert feeds_server.requests_to("/pypi/acme-engine/1.1.0rc1/json") == []


def build_projects(fake: FakeGitHub, count: int) -> list[str]:
    repos = []
    for index in range(count):
        repo = fake.repo(f"bench/p{index}")
        repo.commit("initial", committed_at=T0)
        repo.merge_pull(1, "[Core] one", merged_at=T0 + timedelta(hours=1))
        repo.release("v0.1.0", published_at=T0 + timedelta(hours=2))
        repos.append(repo.full_name)
    return repos


def test_without_a_token_an_idle_hour_over_30_projects_stays_within_60_requests(
    fake_github: FakeGitHub,
    factory: sessionmaker[Session],
    settings: Settings,
    syncer: ProjectSyncer,
) -> None:
    repos = build_projects(fake_github, 30)
    for repo in repos:
        track(factory, repo)
        assert syncer.sync(repo).ok  # the backfill, here with a token
    tokenless = settings.model_copy(update={"github_token": None})
    fake_github.reset_log()
    with make_test_client(fake_github, token=None) as client, FeedClient() as feeds:
        poller = ProjectSyncer(factory, tokenless, client, clock=fake_github.now, feeds=feeds)
        for _cycle in range(4):  # an hour at the default 15-minute interval
            fake_github.advance(900)
            assert all(poller.sync(repo).ok for repo in repos)
        api = [r for r in fake_github.requests if r.path.startswith("/repos/")]
        atom = [r for r in fake_github.requests if r.path.endswith(".atom")]
        assert len(api) <= 60 and sum(r.cost for r in atom) == 0 and len(atom) == 120
        assert sum(r.cost for r in api) == len(api)  # unauthenticated: even a 304 costs quota

        fake_github.reset_log()
        fake_github.repo("bench/p7").release("v0.2.0", published_at=fake_github.now())
        fake_github.advance(900)
        assert all(poller.sync(repo).ok for repo in repos)
        api = [(r.path, r.status) for r in fake_github.requests if r.path.startswith("/repos/")]
    # one new release costs its releases page, the pulls check and its compares, nothing else
    assert sorted(api) == sorted(
        [
            ("/repos/bench/p7/releases", 200),
            ("/repos/bench/p7/pulls", 304),
            ("/repos/bench/p7/compare/v0.1.0...v0.2.0", 200),
        ]
    )
    with factory() as session:
        assert session.scalar(select(Release.tag).where(Release.tag == "v0.2.0")) == "v0.2.0"


def test_tag_only_project_gets_its_versions_from_tags_and_commit_dates(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    repo = fake_github.repo("acme/tagger")
    repo.commit("initial", committed_at=T0)
    first = repo.merge_pull(1, "feat: a", merged_at=T0 + timedelta(days=1))
    repo.tag("v1.0.0", first)
    repo.merge_pull(2, "feat: b", merged_at=T0 + timedelta(days=3))
    repo.tag("v1.1.0", "main")
    repo.tag("experiment-x", "main")
    track(factory, "acme/tagger")
    set_options(
        factory,
        "acme/tagger",
        '[[projects]]\nrepo = "acme/tagger"\nname = "Tagger"\ncategory = "kernels"\ntags_only = true\ntag_pattern = "v*"\n',
    )
    assert syncer.sync("acme/tagger").ok
    with factory() as session:
        stored = {r.tag: r for r in session.scalars(select(Release))}
    assert set(stored) == {"v1.0.0", "v1.1.0"}
    assert all(r.tag_only for r in stored.values())
    assert stored["v1.0.0"].published_at == T0 + timedelta(days=1)
    assert first_releases(factory) == {1: ("v1.0.0", "v1.0.0"), 2: ("v1.1.0", "v1.1.0")}
    fake_github.reset_log()
    before = snapshot(factory)
    assert syncer.sync("acme/tagger").ok
    assert not [r for r in fake_github.requests if "/commits/" in r.path]  # dates cached for good
    assert snapshot(factory) == before


def test_nightly_builds_are_not_releases_where_the_catalog_says_so(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    repo = fake_github.repo("acme/kernels")
    repo.commit("initial", committed_at=T0)
    repo.release("nightly-v0.6.18-20260819", published_at=T0 + timedelta(days=1), prerelease=True)
    repo.release("v0.6.18", published_at=T0 + timedelta(days=2))
    track(factory, "acme/kernels")
    set_options(
        factory,
        "acme/kernels",
        '[[projects]]\nrepo = "acme/kernels"\nname = "K"\ncategory = "kernels"\nnightly_releases = false\n',
    )
    assert syncer.sync("acme/kernels").ok
    with factory() as session:
        assert list(session.scalars(select(Release.tag))) == ["v0.6.18"]


def test_feed_check_spends_no_quota_with_a_token_either(
    fake_github: FakeGitHub, factory: sessionmaker[Session], syncer: ProjectSyncer
) -> None:
    build_projects(fake_github, 1)
    track(factory, "bench/p0")
    assert syncer.sync("bench/p0").ok
    fake_github.reset_log()
    assert syncer.sync("bench/p0").ok
    assert [(r.path, r.status, r.cost) for r in fake_github.requests] == [
        ("/bench/p0/releases.atom", 304, 0),
        ("/repos/bench/p0/pulls", 304, 0),
    ]
    assert TOKEN  # an authenticated 304 is free: the pulls check costs nothing
