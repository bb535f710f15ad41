"""The poller: one APScheduler job per project (interval with jitter, one run at a time,
missed runs coalesced); a failing project backs off without holding up the others."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy.orm import Session, sessionmaker

from connectors.github import GitHubClient
from service.config import Settings
from service.database import transaction, utcnow
from service.projects import service as projects
from service.sync.service import CYCLE, ProjectSyncer, SyncReport, get_state

log = logging.getLogger(__name__)

MAX_BACKOFF = timedelta(hours=6)


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
    ) -> None:
        self.factory = factory
        self.settings = settings
        self.client = client or make_client(settings)
        self.clock = clock
        self.syncer = ProjectSyncer(factory, settings, self.client, clock)
        self.interval = timedelta(seconds=settings.poll_interval)
        self.scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(max_workers=workers)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
            timezone="UTC",
        )

    def start(self) -> None:
        with self.factory() as session:
            repos = [p.repo for p in projects.list_all(session) if p.enabled]
        for repo in repos:
            self.add_project(repo)
        self.scheduler.start()

    def shutdown(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=True)
        self.client.close()

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
        job = self.scheduler.get_job(self.job_id(repo))
        if job is None:
            self.add_project(repo)
        else:
            job.modify(next_run_time=self.clock())

    def run_job(self, repo: str) -> SyncReport | None:
        try:
            return self._run(repo)
        except Exception:
            log.exception("sync job of %s crashed; the next interval retries it", repo)
            return None

    def _run(self, repo: str) -> SyncReport:
        report = self.syncer.sync(repo)
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
