"""Prometheus metrics of one process, on a registry of its own.

The process (``digest serve`` / ``digest worker``) creates one ``Metrics`` and hands it to
the app, the poller and the delivery worker; each records through it. Code given no
``Metrics`` records into ``NULL_METRICS``, which does nothing."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

if TYPE_CHECKING:
    from connectors.github import GitHubClient

log = logging.getLogger(__name__)

SYNC_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)
DRAFT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class DeliveryQueueCollector(Collector):
    """Pending webhook deliveries, counted in the database at scrape time, so the figure
    covers the deliveries of every process."""

    def __init__(self, factory: sessionmaker[Session]) -> None:
        self.factory = factory

    def describe(self) -> Iterator[GaugeMetricFamily]:
        # Described without collecting, so registering the collector runs no query.
        yield GaugeMetricFamily(
            "digest_webhook_queue_depth", "Webhook deliveries waiting to be sent"
        )

    def collect(self) -> Iterator[GaugeMetricFamily]:
        from service.webhooks.models import Delivery, DeliveryStatus

        family = GaugeMetricFamily(
            "digest_webhook_queue_depth", "Webhook deliveries waiting to be sent"
        )
        try:
            with self.factory() as session:
                pending = float(
                    session.scalar(
                        select(func.count())
                        .select_from(Delivery)
                        .where(Delivery.status == DeliveryStatus.PENDING.value)
                    )
                    or 0
                )
        except Exception as exc:  # a scrape must still answer when the database is down
            log.warning("cannot count pending webhook deliveries: %s", exc)
            pending = math.nan
        family.add_metric([], pending)
        yield family


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self._queue_watched = False
        r = self.registry
        self.github_requests = Counter(
            "digest_github_requests",
            "GitHub API responses, by resource and HTTP status",
            ["resource", "status"],
            registry=r,
        )
        self.github_rate_limit_remaining = Gauge(
            "digest_github_rate_limit_remaining",
            "x-ratelimit-remaining of the last GitHub response (NaN before the first)",
            registry=r,
        )
        self.github_rate_limit_remaining.set(math.nan)
        self.sync_duration = Histogram(
            "digest_sync_duration_seconds",
            "Duration of one sync pass of a project",
            ["project"],
            buckets=SYNC_BUCKETS,
            registry=r,
        )
        self.sync_passes = Counter(
            "digest_sync_passes",
            "Sync passes, by project and outcome",
            ["project", "outcome"],
            registry=r,
        )
        self.sync_last_success = Gauge(
            "digest_sync_last_success_timestamp_seconds",
            "Unix time of the last successful sync pass of a project",
            ["project"],
            registry=r,
        )
        self.webhook_attempts = Counter(
            "digest_webhook_delivery_attempts",
            "Webhook delivery attempts, by outcome (delivered, retry, failed)",
            ["outcome"],
            registry=r,
        )
        self.draft_build = Histogram(
            "digest_draft_build_seconds",
            "Time to build a draft digest not found in the draft cache",
            buckets=DRAFT_BUCKETS,
            registry=r,
        )
        self.draft_cache_lookups = Counter(
            "digest_draft_cache_lookups",
            "Draft cache lookups, by layer (material, body) and outcome (hit, miss)",
            ["layer", "outcome"],
            registry=r,
        )

    # --- wiring ----------------------------------------------------------------------

    def watch_github(self, client: GitHubClient) -> None:
        """Count the client's responses and export its rate-limit figure."""
        client.on_response = self.github_response

        def remaining() -> float:
            value = client.stats.rate_limit_remaining
            return math.nan if value is None else float(value)

        self.github_rate_limit_remaining.set_function(remaining)

    def watch_deliveries(self, factory: sessionmaker[Session]) -> None:
        """Export the delivery queue depth (once per registry, whoever asks first)."""
        if not self._queue_watched:
            self.registry.register(DeliveryQueueCollector(factory))
            self._queue_watched = True

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    # --- recording -------------------------------------------------------------------

    def github_response(self, resource: str, status: int) -> None:
        self.github_requests.labels(resource=resource, status=str(status)).inc()

    def sync_finished(self, project: str, seconds: float, ok: bool) -> None:
        self.sync_duration.labels(project=project).observe(seconds)
        self.sync_passes.labels(project=project, outcome="ok" if ok else "error").inc()
        if ok:
            self.sync_last_success.labels(project=project).set(time.time())

    def webhook_attempt(self, outcome: str) -> None:
        self.webhook_attempts.labels(outcome=outcome).inc()

    def draft_cache_lookup(self, layer: str, hit: bool) -> None:
        self.draft_cache_lookups.labels(layer=layer, outcome="hit" if hit else "miss").inc()

    @contextmanager
    def draft_timer(self) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.draft_build.observe(time.perf_counter() - started)


class NullMetrics(Metrics):
    """Records nothing: the default of code not handed a process's ``Metrics``."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()

    def watch_github(self, client: GitHubClient) -> None:
        pass

    def watch_deliveries(self, factory: sessionmaker[Session]) -> None:
        pass

    def github_response(self, resource: str, status: int) -> None:
        pass

    def sync_finished(self, project: str, seconds: float, ok: bool) -> None:
        pass

    def webhook_attempt(self, outcome: str) -> None:
        pass

    def draft_cache_lookup(self, layer: str, hit: bool) -> None:
        pass

    @contextmanager
    def draft_timer(self) -> Iterator[None]:
        yield


NULL_METRICS = NullMetrics()
