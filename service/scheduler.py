"""The poller: one APScheduler job per project (interval with jitter, one run at a time,
missed runs coalesced); a failing project backs off without holding up the others."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy.orm import Session, sessionmaker

from connectors.feeds import FeedClient
from connectors.github import GitHubClient
from connectors.pypi import PyPIClient
from service import analysis
from service.config import Settings
from service.database import transaction, utcnow
from service.leases import service as leases
from service.observability.metrics import NULL_METRICS, Metrics
from service.posts import service as posts
from service.projects import service as projects
from service.sync import requests as sync_requests
from service.sync.models import SyncState
from service.sync.service import CYCLE, ProjectSyncer, SyncReport, get_state

log = logging.getLogger(__name__)

MAX_BACKOFF = timedelta(hours=6)
SQLITE_WORKER = "store:sqlite-worker"
REQUEST_CHECK_SECONDS = 5
REANALYSIS_CHECK_SECONDS = 60
REANALYSIS_LEASE = "store:reanalysis"
REANALYSIS_BATCH = 500
REANALYSIS_BUDGET_SECONDS = 20.0


def make_client(settings: Settings) -> GitHubClient:
    return GitHubClient(
        settings.github_api_url,
        settings.github_token,
        timeout=settings.http_timeout,
        max_attempts=settings.http_max_attempts,
        max_rate_limit_wait=settings.max_rate_limit_wait,
    )


def backoff_delay(interval: timedelta, error_count: int) -> timedelta:
    """Interval doubled per consecutive failure, at most six hours."""
    return min(interval * (2 ** max(error_count - 1, 0)), max(MAX_BACKOFF, interval))


class Poller:
    def __init__(
        self,
        factory: sessionmaker[Session],
        settings: Settings,
        client: GitHubClient | None = None,
        clock: Callable[[], datetime] = utcnow,
        workers: int = 4,
        metrics: Metrics | None = None,
    ) -> None:
        self.factory = factory
        self.settings = settings
        self.client = client or make_client(settings)
        self.metrics = metrics or NULL_METRICS
        self.metrics.watch_github(self.client)
        self.clock = clock
        self.feeds = FeedClient(timeout=settings.http_timeout)
        self.pypi = PyPIClient(settings.pypi_url, timeout=settings.http_timeout)
        self.syncer = ProjectSyncer(
            factory, settings, self.client, clock, feeds=self.feeds, pypi=self.pypi
        )
        self.interval = timedelta(seconds=settings.poll_interval)
        self.identity = leases.worker_identity()
        self.lease_ttl = timedelta(seconds=settings.lease_seconds)
        self._forced: set[str] = set()
        self.scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(max_workers=workers)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
            timezone="UTC",
        )

    def start(self) -> None:
        self._claim_sqlite_store()
        with self.factory() as session:
            repos = [p.repo for p in projects.list_all(session) if p.enabled]
        for repo in repos:
            self.add_project(repo)
        with self.factory() as session:
            feed_keys = [feed.key for feed in posts.list_feeds(session)]
        for key in feed_keys:
            self.scheduler.add_job(
                self.run_feed_job,
                IntervalTrigger(
                    seconds=self.settings.poll_interval, jitter=self.settings.poll_jitter
                ),
                args=[key],
                id=f"feed:{key}",
                name=f"feed {key}",
                replace_existing=True,
                next_run_time=self.clock(),
            )
        self.scheduler.add_job(
            self.run_reanalysis,
            IntervalTrigger(seconds=REANALYSIS_CHECK_SECONDS),
            id="reanalysis",
            name="changes analysed under another taxonomy version",
            replace_existing=True,
            next_run_time=self.clock(),
        )
        self.scheduler.add_job(
            self.run_requested,
            IntervalTrigger(seconds=REQUEST_CHECK_SECONDS),
            id="requested-syncs",
            name="syncs requested through the API",
            replace_existing=True,
        )
        self.scheduler.start()

    def run_reanalysis(self) -> int:
        """Re-analyse changes stored under another taxonomy or classifier version, in
        batches of one transaction each, for at most a budget of time per run; one worker
        at a time does it."""
        if not leases.claim(
            self.factory, REANALYSIS_LEASE, self.identity, self.lease_ttl, self.clock()
        ):
            return 0
        done = 0
        deadline = time.monotonic() + REANALYSIS_BUDGET_SECONDS
        try:
            while time.monotonic() < deadline:
                with transaction(self.factory) as session:
                    count = analysis.refresh_stale(session, self.syncer.taxonomy, REANALYSIS_BATCH)
                done += count
                if count < REANALYSIS_BATCH:
                    break
        finally:
            leases.release(self.factory, REANALYSIS_LEASE, self.identity)
        if done:
            log.info("re-analysed %d changes", done, extra={"changes": done})
        return done

    def _claim_sqlite_store(self) -> None:
        """SQLite mode is one worker: a second one is refused with a clear message."""
        if self.factory.kw["bind"].dialect.name != "sqlite":
            return
        if not leases.claim(
            self.factory, SQLITE_WORKER, self.identity, self.lease_ttl, self.clock()
        ):
            with self.factory() as session:
                owner = leases.holder(session, SQLITE_WORKER, self.clock())
            raise RuntimeError(
                f"the SQLite store already has a worker ({owner}); SQLite mode runs one worker "
                "process. Stop it, or use PostgreSQL (DIGEST_DATABASE_URL) for several workers."
            )
        self.scheduler.add_job(
            lambda: leases.claim(
                self.factory, SQLITE_WORKER, self.identity, self.lease_ttl, self.clock()
            ),
            IntervalTrigger(seconds=max(self.lease_ttl.total_seconds() / 3, 1)),
            id="sqlite-worker-lease",
            replace_existing=True,
        )

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=True)
        leases.release(self.factory, SQLITE_WORKER, self.identity)
        self.client.close()
        self.feeds.close()
        self.pypi.close()

    @staticmethod
    def job_id(repo: str) -> str:
        return f"sync:{repo.lower()}"

    def add_project(self, repo: str, first_run: datetime | None = None) -> None:
        self.scheduler.add_job(
            self.run_job,
            IntervalTrigger(seconds=self.settings.poll_interval, jitter=self.settings.poll_jitter),
            args=[repo],
            id=self.job_id(repo),
            name=f"sync {repo}",
            replace_existing=True,
            next_run_time=first_run or self.clock(),
        )

    def remove_project(self, repo: str) -> None:
        with contextlib.suppress(JobLookupError):
            self.scheduler.remove_job(self.job_id(repo))

    def run_now(self, repo: str) -> None:
        self._forced.add(repo.lower())
        job = self.scheduler.get_job(self.job_id(repo))
        if job is None:
            self.add_project(repo)
        else:
            job.modify(next_run_time=self.clock())

    def run_feed_job(self, key: str) -> int | None:
        try:
            return posts.sync_feed(self.factory, self.feeds, key, self.clock)
        except Exception:
            log.exception("feed job %s crashed; the next interval retries it", key)
            return None

    def run_job(self, repo: str) -> SyncReport | None:
        try:
            return self._run(repo)
        except Exception:
            log.exception("sync job of %s crashed; the next interval retries it", repo)
            return None

    def run_requested(self) -> None:
        """Run the syncs another process (``digest api``) asked for in the store."""
        for repo in sync_requests.take(self.factory):
            self.run_now(repo)

    def _recently_synced(self, repo: str) -> bool:
        """Whether another worker synced the project within half an interval."""
        with self.factory() as session:
            project = projects.find(session, repo)
            state = session.get(SyncState, (project.id, CYCLE)) if project else None
        if state is None or state.last_success_at is None:
            return False
        return self.clock() - state.last_success_at < self.interval / 2

    def _run(self, repo: str) -> SyncReport | None:
        forced = repo.lower() in self._forced
        self._forced.discard(repo.lower())
        with leases.held(
            self.factory, f"project:{repo.lower()}", self.identity, self.lease_ttl, self.clock
        ) as mine:
            if not mine:
                # a worker killed mid-sync holds the lease until it expires: look again then
                log.info("%s is being synced by another worker; retrying later", repo)
                job = self.scheduler.get_job(self.job_id(repo))
                if job is not None:
                    job.modify(next_run_time=self.clock() + self.lease_ttl)
                return None
            # checked under the lease: a worker that just finished has recorded its success
            if not forced and self._recently_synced(repo):
                return None
            started = time.perf_counter()
            report = self.syncer.sync(repo)
        self.metrics.sync_finished(repo, time.perf_counter() - started, report.ok)
        with transaction(self.factory) as session:
            project = projects.find(session, repo)
            if project is None:
                self.remove_project(repo)
                return report
            state = get_state(session, project.id, CYCLE)
            if report.ok:
                next_run = self.clock() + self.interval
            else:
                next_run = self.clock() + backoff_delay(self.interval, state.error_count or 1)
                if report.retry_at is not None:
                    next_run = max(next_run, report.retry_at)
                log.info(
                    "%s failed %d time(s) in a row; next try %s", repo, state.error_count, next_run
                )
            state.next_run_at = next_run
        job = self.scheduler.get_job(self.job_id(repo))
        if job is not None and not report.ok:
            job.modify(next_run_time=next_run)
        return report
