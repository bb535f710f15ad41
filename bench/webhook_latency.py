"""Webhook latency: event committed → delivered to a loopback receiver (DESIGN §8, p95 ≤ 1 s).

Runs the service's delivery worker (woken on commit) against a receiver on 127.0.0.1 that
verifies every signature, then commits events one by one — each a new pre-release written
as a sync writes it (release row and outbox event in one transaction, then made ready) —
and prints p50/p95/max from commit to receipt. Run from the repository root:
``python -m bench.webhook_latency [--events 200] [--interval 0.01]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from service.config import Settings
from service.database import make_engine, make_session_factory, transaction
from service.events import service as events
from service.migrate import upgrade
from service.projects import service as projects
from service.releases.models import Release
from service.webhooks import service as webhooks
from service.webhooks.worker import DeliveryWorker
from tests.test_webhooks import Receiver


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def run(count: int, interval: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        engine = make_engine(url)
        upgrade(engine)
        factory = make_session_factory(engine)
        settings = Settings(database_url=url, webhook_allowed_hosts="127.0.0.1")
        receiver = Receiver().start()
        now = datetime.now(UTC)
        with transaction(factory) as session:
            project = projects.add(session, projects.ProjectSpec("bench/engine", "Engine"))
            project.added_at = now - timedelta(hours=1)
            project_id = project.id
            subscription = webhooks.create_subscription(
                session,
                webhooks.SubscriptionSpec(url=receiver.url, events=["release.prerelease"]),
                allowed_hosts={"127.0.0.1"},
                now=now,
            )
            receiver.secret = subscription.secret
        worker = DeliveryWorker(factory, settings)
        worker.start()
        committed: dict[str, float] = {}
        try:
            for number in range(count):
                tag = f"v1.{number}.0rc1"
                published = datetime.now(UTC)
                row = {
                    "tag": tag,
                    "version": tag[1:],
                    "version_line": tag[1:-3],
                    "published_at": published,
                    "prerelease": True,
                    "github_prerelease": True,
                    "url": f"https://github.com/bench/engine/releases/tag/{tag}",
                    "body": "",
                }
                with transaction(factory) as session:
                    session.add(Release(project_id=project_id, **row))
                    session.flush()
                    events.record_new_releases(
                        session, project_id, "bench/engine", [row], cutoff=now, now=published
                    )
                    events.release_pending_events(session, project_id, published)
                committed[events.event_id_for("release.prerelease", "bench/engine", tag)] = (
                    time.perf_counter()
                )
                if interval:
                    time.sleep(interval)
            receiver.wait_for(lambda r: len(set(r.accepted_ids())) >= count, f"{count} events")
        finally:
            worker.stop()
            receiver.stop()
        received: dict[str, float] = {}
        for request, moment in zip(receiver.received, receiver.receipt_times, strict=True):
            received.setdefault(request.headers["webhook-id"], moment)
        latencies = [(received[i] - committed[i]) * 1000 for i in committed]
        print(f"events: {count} committed {interval * 1000:.0f} ms apart, SQLite, 1 endpoint")
        print(
            f"commit → receipt: p50 {statistics.median(latencies):.1f} ms, "
            f"p95 {percentile(latencies, 0.95):.1f} ms, max {max(latencies):.1f} ms "
            f"(target p95 ≤ 1000 ms)"
        )
        print(
            f"received {len(receiver.received)} request(s) for {len(received)} event(s); "
            f"bad signatures: {receiver.bad_signatures}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.01, help="seconds between commits")
    arguments = parser.parse_args()
    run(arguments.events, arguments.interval)


if __name__ == "__main__":
    main()
