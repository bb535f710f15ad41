"""One sync pass of one project, and the sync state it leaves behind.

Order per pass (DESIGN §4): releases (conditional), merged pull requests (conditional,
newest update first, down to the stored high-water mark), compares for releases whose
ranges are not cached yet, then release inclusion. Rows are upserted page by page; an
ETag and a high-water mark are only saved in the transaction of the last page they vouch
for, so a pass killed at any point is simply redone by the next one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from connectors.feeds import FeedClient, FeedError, github_atom_url
from connectors.github import (
    GitHubClient,
    GitHubError,
    NotFound,
    PullRecord,
    RateLimited,
    ReleaseRecord,
    extract_records,
)
from connectors.pypi import PyPIClient, PyPIError
from service.analysis import (
    ANALYSIS_COLUMNS,
    RELEASE_ANALYSIS_COLUMNS,
    analysis_columns,
    release_analysis_columns,
)
from service.catalog import CatalogProject, from_options
from service.changes.models import Change
from service.config import Settings
from service.database import transaction, upsert, utcnow
from service.events import service as events
from service.inclusion import service as inclusion
from service.normalize import change_row, release_row, tag_release_row
from service.projects.models import Project
from service.releases.models import PackageAvailability, Release
from service.sync.models import HttpValidator, SyncState
from service.themes import Taxonomy, taxonomy_from
from service.versions import parse_tag

log = logging.getLogger(__name__)

CYCLE = "cycle"
RELEASES = "releases"
PULLS = "pulls"
COMPARES = "compares"

PYPI_RECHECK_DAYS = 14  # a release without a wheel is looked up again for two weeks

RELEASE_UPDATE_COLUMNS = [
    "github_id",
    "version",
    "version_line",
    "name",
    "published_at",
    "created_at",
    "prerelease",
    "github_prerelease",
    "url",
    "body",
    "target_commitish",
]
CHANGE_UPDATE_COLUMNS = [
    "github_id",
    "title",
    "body",
    "author",
    "labels",
    "merged_at",
    "merge_commit_sha",
    "base_branch",
    "url",
    "github_updated_at",
]


@dataclass
class SyncReport:
    repo: str
    releases_seen: int = 0
    changes_seen: int = 0
    compares_fetched: int = 0
    links_changed: int = 0
    not_modified: list[str] = field(default_factory=list)
    skipped_records: int = 0
    error: str | None = None
    retry_at: datetime | None = None

    @property
    def changed_anything(self) -> bool:
        return (
            self.releases_seen + self.changes_seen + self.compares_fetched > 0
            or len(self.not_modified) < 2
        )

    @property
    def ok(self) -> bool:
        return self.error is None


def get_state(session: Session, project_id: int, resource: str) -> SyncState:
    state = session.get(SyncState, (project_id, resource))
    if state is None:
        state = SyncState(project_id=project_id, resource=resource, error_count=0)
        session.add(state)
    return state


def stored_etag(session: Session, url: str) -> str | None:
    validator = session.get(HttpValidator, url)
    return validator.etag if validator else None


def save_validators(
    session: Session,
    project_id: int,
    url: str,
    etag: str | None,
    last_modified: str | None,
    now: datetime,
) -> None:
    """Keep the conditional-GET validators of a URL (rewritten only when they changed)."""
    validator = session.get(HttpValidator, url)
    if validator is None:
        session.add(
            HttpValidator(
                url=url,
                project_id=project_id,
                etag=etag,
                last_modified=last_modified,
                updated_at=now,
            )
        )
    elif (validator.etag, validator.last_modified) != (etag, last_modified):
        validator.etag, validator.last_modified, validator.updated_at = etag, last_modified, now


def save_etag(session: Session, project_id: int, url: str, etag: str | None, now: datetime) -> None:
    """The API answers carry an ETag only; a response without one keeps the stored one."""
    if etag:
        save_validators(session, project_id, url, etag, None, now)


def record_success(session: Session, project_id: int, resource: str, now: datetime) -> None:
    state = get_state(session, project_id, resource)
    state.last_attempt_at = now
    state.last_success_at = now
    state.error_count = 0


def record_failure(
    factory: sessionmaker[Session], project_id: int, resource: str, error: str, now: datetime
) -> int:
    """Save an error on a resource (and on the cycle); returns the consecutive error count."""
    with transaction(factory) as session:
        count = 0
        for name in {resource, CYCLE}:
            state = get_state(session, project_id, name)
            state.last_attempt_at = now
            state.last_error = error[:2000]
            state.last_error_at = now
            state.error_count = (state.error_count or 0) + 1
            count = max(count, state.error_count)
        return count


class ProjectSyncer:
    def __init__(
        self,
        factory: sessionmaker[Session],
        settings: Settings,
        client: GitHubClient,
        clock: Callable[[], datetime] = utcnow,
        feeds: FeedClient | None = None,
        pypi: PyPIClient | None = None,
        taxonomy: Taxonomy | None = None,
    ) -> None:
        self.factory = factory
        self.taxonomy = taxonomy or taxonomy_from(settings.themes_file, settings.models_file)
        self.settings = settings
        self.client = client
        self.clock = clock
        self.feeds = feeds  # github.com's Atom feeds: change detection without API quota
        self.pypi = pypi

    def sync(self, repo: str, progress: Callable[[str], None] | None = None) -> SyncReport:
        report = SyncReport(repo=repo)
        with self.factory() as session:
            project = session.scalar(select(Project).where(Project.repo_key == repo.lower()))
            if project is None:
                report.error = f"repository {repo!r} is not tracked"
                return report
            project_id, repo = project.id, project.repo
            entry = from_options(repo, project.name, project.category, project.options)
        previous_pass_finished = self._begin_cycle(project_id)
        resource = CYCLE
        try:
            resource = RELEASES
            feed = self._release_feed(project_id, repo, entry)
            if feed is not None and not feed.changed:
                report.not_modified.append(RELEASES)
            elif entry.tags_only:
                self._sync_tags(project_id, repo, report, entry)
            else:
                self._sync_releases(project_id, repo, report, entry)
            if feed is not None and feed.changed:
                with transaction(self.factory) as session:
                    save_validators(
                        session, project_id, feed.url, feed.etag, feed.last_modified, self.clock()
                    )
            if progress:
                progress("releases")
            resource = PULLS
            if self._pulls_due(project_id, feed):
                self._sync_pulls(project_id, repo, entry.category, report)
            else:
                report.not_modified.append(PULLS)
            if progress:
                progress("pulls")
            resource = COMPARES
            self._sync_compares(project_id, repo, report)
            with transaction(self.factory) as session:
                if report.changed_anything or not previous_pass_finished:
                    report.links_changed = inclusion.relink(
                        session, project_id, repo, self.settings.github_web_url
                    )
                events.release_pending_events(session, project_id, self.clock())
                record_success(session, project_id, CYCLE, self.clock())
            if progress:
                progress("inclusion")
            self._check_pypi(project_id, entry)
        except NotFound as exc:
            report.error = f"{repo}: not found on GitHub ({exc.url})"
        except RateLimited as exc:
            report.error = f"{repo}: {exc}"
            report.retry_at = exc.reset_at
        except GitHubError as exc:
            report.error = f"{repo}: {exc}"
        if report.error:
            log.warning("sync of %s failed at %s: %s", repo, resource, report.error)
            record_failure(self.factory, project_id, resource, report.error, self.clock())
        return report

    def _begin_cycle(self, project_id: int) -> bool:
        """Mark a pass as started; tells whether the previous one ran to its end."""
        with transaction(self.factory) as session:
            state = get_state(session, project_id, CYCLE)
            finished = state.last_success_at is not None and (
                state.last_attempt_at is None or state.last_attempt_at <= state.last_success_at
            )
            state.last_attempt_at = self.clock()
            return finished

    def _event_cutoff(self, session: Session, project_id: int) -> datetime:
        project = session.get(Project, project_id)
        assert project is not None
        return events.event_cutoff(project.added_at, self.settings.event_lookback_hours)

    def _release_feed(self, project_id: int, repo: str, entry: CatalogProject) -> FeedCheck | None:
        """Whether github.com's releases.atom (tags.atom) changed since the last pass; None
        when it cannot tell (no feed client, the feed failed). Before the first complete
        pass of the releases API the answer is always "changed"."""
        if self.feeds is None or not self.settings.atom_gate:
            return None
        with self.factory() as session:
            state = session.get(SyncState, (project_id, RELEASES))
            backfilled = state is not None and state.last_success_at is not None
            url = github_atom_url(
                self.settings.github_web_url, repo, "tags" if entry.tags_only else "releases"
            )
            validator = session.get(HttpValidator, url)
            etag = validator.etag if validator else None
            last_modified = validator.last_modified if validator else None
        try:
            result = self.feeds.fetch_github_atom(url, etag=etag, last_modified=last_modified)
        except FeedError as exc:
            log.info("%s: %s unusable (%s); asking the API", repo, url, exc)
            return None
        changed = not backfilled or not result.not_modified
        return FeedCheck(changed, url, result.etag, result.last_modified)

    def _pulls_due(self, project_id: int, feed: FeedCheck | None) -> bool:
        """With a token, every pass (an authenticated 304 is free); without one, when the
        releases changed or the last poll of pull requests is older than the token-less
        interval, since each unauthenticated request spends quota."""
        if self.settings.github_token or feed is None or feed.changed:
            return True
        with self.factory() as session:
            state = session.get(SyncState, (project_id, PULLS))
        if state is None or state.last_success_at is None:
            return True
        age = self.clock() - state.last_success_at
        return age >= timedelta(seconds=self.settings.tokenless_pull_interval)

    def _sync_releases(
        self, project_id: int, repo: str, report: SyncReport, entry: CatalogProject
    ) -> None:
        first_url = f"{self.settings.github_api_url}{self.client.releases_url(repo)}"
        with self.factory() as session:
            state = session.get(SyncState, (project_id, RELEASES))
            backfilled = state is not None and state.last_success_at is not None
            known = set(
                session.scalars(select(Release.tag).where(Release.project_id == project_id))
            )
            etag = stored_etag(session, _validator_key(first_url))
            event_cutoff = self._event_cutoff(session, project_id)
        new_etag: str | None = None
        first = True
        for page in self.client.iter_release_pages(repo, etag):
            if page.not_modified:
                report.not_modified.append(RELEASES)
                break
            if first:
                new_etag, first = page.etag, False
            records = extract_records(page.items, ReleaseRecord.from_api, f"{repo} release")
            report.skipped_records += len(page.items) - len(records)
            rows = [
                row
                for row in map(release_row, records)
                if row is not None and counts_as_release(entry, row["tag"])
            ]
            with transaction(self.factory) as session:
                upsert(
                    session,
                    Release,
                    [
                        {
                            "project_id": project_id,
                            **row,
                            **release_analysis_columns(row, self.taxonomy),
                        }
                        for row in rows
                    ],
                    key=["project_id", "tag"],
                    update=RELEASE_UPDATE_COLUMNS + RELEASE_ANALYSIS_COLUMNS,
                )
                events.record_new_releases(
                    session,
                    project_id,
                    repo,
                    [row for row in rows if row["tag"] not in known],
                    event_cutoff,
                    self.clock(),
                )
            report.releases_seen += len(rows)
            all_new = all(record.tag not in known for record in records)
            if backfilled and not all_new:
                break
        with transaction(self.factory) as session:
            if new_etag:
                save_etag(session, project_id, _validator_key(first_url), new_etag, self.clock())
            record_success(session, project_id, RELEASES, self.clock())

    def _sync_tags(
        self, project_id: int, repo: str, report: SyncReport, entry: CatalogProject
    ) -> None:
        """Versions of a project that tags without GitHub releases: each new tag's date is its
        commit's date, looked up once (a tag's commit never changes)."""
        first_url = f"{self.settings.github_api_url}/repos/{repo}/tags"
        with self.factory() as session:
            known = set(
                session.scalars(select(Release.tag).where(Release.project_id == project_id))
            )
            etag = stored_etag(session, _validator_key(first_url))
            event_cutoff = self._event_cutoff(session, project_id)
        new_etag: str | None = None
        wanted: list[tuple[str, str]] = []
        for index, page in enumerate(self.client.iter_tag_pages(repo, etag)):
            if page.not_modified:
                report.not_modified.append(RELEASES)
                break
            if index == 0:
                new_etag = page.etag
            for item in page.items:
                name = item.get("name") if isinstance(item, dict) else None
                sha = ((item.get("commit") or {}).get("sha")) if isinstance(item, dict) else None
                if (
                    isinstance(name, str)
                    and isinstance(sha, str)
                    and name not in known
                    and counts_as_release(entry, name)
                ):
                    wanted.append((name, sha))
        lookups = wanted[: self.settings.max_tag_lookups]
        for tag, sha in lookups:
            committed_at = self.client.commit_date(repo, sha)
            row = tag_release_row(tag, sha, committed_at, f"{self.settings.github_web_url}/{repo}")
            with transaction(self.factory) as session:
                upsert(
                    session,
                    Release,
                    [
                        {
                            "project_id": project_id,
                            **row,
                            **release_analysis_columns(row, self.taxonomy),
                        }
                    ],
                    key=["project_id", "tag"],
                    update=RELEASE_UPDATE_COLUMNS + RELEASE_ANALYSIS_COLUMNS,
                )
                events.record_new_releases(
                    session, project_id, repo, [row], event_cutoff, self.clock()
                )
            report.releases_seen += 1
        with transaction(self.factory) as session:
            # while tags wait for their dates, the list must be read again next pass
            if new_etag and len(lookups) == len(wanted):
                save_etag(session, project_id, _validator_key(first_url), new_etag, self.clock())
            record_success(session, project_id, RELEASES, self.clock())

    def _check_pypi(self, project_id: int, entry: CatalogProject) -> None:
        """Record whether each recent stable release has an installable wheel on PyPI."""
        if self.pypi is None or not entry.pypi:
            return
        now = self.clock()
        recheck_since = now - timedelta(days=PYPI_RECHECK_DAYS)
        horizon = now - timedelta(days=self.settings.backfill_days)
        with self.factory() as session:
            releases = list(
                session.execute(
                    select(Release.id, Release.tag, Release.published_at).where(
                        Release.project_id == project_id,
                        Release.prerelease.is_(False),
                        Release.published_at >= horizon,
                    )
                )
            )
            checked = {
                (row.release_id, row.package): row
                for row in session.scalars(
                    select(PackageAvailability).where(
                        PackageAvailability.release_id.in_([r.id for r in releases])
                    )
                )
            }
        for release_id, tag, published_at in releases:
            line = entry.line_for(tag)
            if line is None:
                continue
            for package in line.pypi:
                known = checked.get((release_id, package))
                if known is not None and (known.status == "wheel" or published_at < recheck_since):
                    continue
                try:
                    found = self.pypi.availability(package, tag, prefix=line.tag_prefix)
                except (PyPIError, ValueError) as exc:
                    log.warning("PyPI %s %s: %s", package, tag, exc)
                    continue
                with transaction(self.factory) as session:
                    upsert(
                        session,
                        PackageAvailability,
                        [
                            {
                                "release_id": release_id,
                                "package": package,
                                "version": found.version,
                                "status": found.status,
                                "first_wheel_upload": found.first_wheel_upload,
                                "checked_at": now,
                            }
                        ],
                        key=["release_id", "package"],
                        update=["version", "status", "first_wheel_upload", "checked_at"],
                    )

    def _sync_pulls(
        self, project_id: int, repo: str, category: str | None, report: SyncReport
    ) -> None:
        now = self.clock()
        first_url = f"{self.settings.github_api_url}/repos/{repo}/pulls"
        with self.factory() as session:
            state = session.get(SyncState, (project_id, PULLS))
            mark = state.high_water_mark if state else None
            etag = stored_etag(session, _validator_key(first_url))
            event_cutoff = self._event_cutoff(session, project_id)
        if mark is not None:
            cutoff = mark - timedelta(seconds=self.settings.pull_overlap_seconds)
        else:
            cutoff = now - timedelta(days=self.settings.backfill_days)
        newest = mark
        new_etag: str | None = None
        first = True
        for page in self.client.iter_closed_pull_pages(repo, etag):
            if page.not_modified:
                report.not_modified.append(PULLS)
                break
            if first:
                new_etag, first = page.etag, False
            records: list[PullRecord] = extract_records(
                page.items, PullRecord.from_api, f"{repo} pull request"
            )
            report.skipped_records += len(page.items) - len(records)
            rows = [row for row in map(change_row, records) if row is not None]
            with transaction(self.factory) as session:
                stored = set(
                    session.scalars(
                        select(Change.number).where(
                            Change.project_id == project_id,
                            Change.number.in_([row["number"] for row in rows]),
                        )
                    )
                )
                upsert(
                    session,
                    Change,
                    [
                        {
                            "project_id": project_id,
                            **row,
                            **analysis_columns(row, category, self.taxonomy),
                        }
                        for row in rows
                    ],
                    key=["project_id", "number"],
                    update=CHANGE_UPDATE_COLUMNS + ANALYSIS_COLUMNS,
                )
                events.record_new_changes(
                    session,
                    project_id,
                    repo,
                    [row for row in rows if row["number"] not in stored],
                    event_cutoff,
                    self.clock(),
                )
            report.changes_seen += len(rows)
            for record in records:
                if newest is None or record.updated_at > newest:
                    newest = record.updated_at
            if records and min(r.updated_at for r in records) < cutoff:
                break
        with transaction(self.factory) as session:
            if new_etag:
                save_etag(session, project_id, _validator_key(first_url), new_etag, self.clock())
            state = get_state(session, project_id, PULLS)
            state.high_water_mark = newest
            record_success(session, project_id, PULLS, self.clock())

    def _sync_compares(self, project_id: int, repo: str, report: SyncReport) -> None:
        horizon = self.clock() - timedelta(days=self.settings.backfill_days)
        with self.factory() as session:
            releases = list(
                session.scalars(select(Release).where(Release.project_id == project_id))
            )
            cached = inclusion.cached_ranges(session, project_id)
        wanted = [r for r in inclusion.needed_ranges(releases, horizon) if r not in cached]
        for compared in wanted:
            if compared.base_tag == inclusion.ROOT:
                fetched = self.client.history(repo, compared.head_tag, since=horizon)
            else:
                fetched = self.client.compare(repo, compared.base_tag, compared.head_tag)
            with transaction(self.factory) as session:
                inclusion.store_comparison(session, project_id, compared, fetched)
            report.compares_fetched += 1
        with transaction(self.factory) as session:
            record_success(session, project_id, COMPARES, self.clock())


@dataclass(frozen=True)
class FeedCheck:
    changed: bool
    url: str
    etag: str | None
    last_modified: str | None


def counts_as_release(entry: CatalogProject, tag: str) -> bool:
    """A tag is a release of the project when it belongs to one of its version lines, and,
    for projects whose nightly tags are automated builds, when it is no nightly."""
    if entry.line_for(tag) is None:
        return False
    return entry.nightly_releases or not parse_tag(tag).nightly


def _validator_key(url: str) -> str:
    """Validators are stored per first-page URL without its query string."""
    return url.split("?", 1)[0]
