"""Readiness, Prometheus metrics after real work, request ids and JSON log lines."""

from __future__ import annotations

import io
import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.orm import Session, sessionmaker

from service.app import create_app
from service.config import Settings
from service.database import make_engine, make_session_factory
from service.observability.logs import JsonFormatter, request_id
from service.observability.metrics import Metrics
from service.scheduler import Poller
from service.webhooks.worker import DeliveryWorker
from tests.conftest import make_test_client
from tests.fake_github import FakeGitHub
from tests.store_snapshot import track
from tests.test_sync import build_cherry_pick_repo
from tests.test_webhooks import FakeClock, Receiver, emit


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(sample name, sorted labels) → value of a Prometheus text exposition."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """Records of the service's loggers, formatted by the JSON formatter."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("service")
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield stream
    logger.removeHandler(handler)
    logger.setLevel(previous)


def test_readyz_is_ok_on_a_migrated_store(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    with TestClient(create_app(factory, settings=settings)) as api:
        assert api.get("/healthz").status_code == 200
        response = api.get("/readyz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_readyz_is_503_with_the_reason_when_the_database_is_unreachable(
    tmp_path: Path,
) -> None:
    engine = make_engine(f"postgresql+psycopg://postgres@127.0.0.1:{closed_port()}/test")
    settings = Settings(data_dir=tmp_path, readiness_timeout=5.0, _env_file=None)  # type: ignore[call-arg]
    try:
        with TestClient(create_app(make_session_factory(engine), settings=settings)) as api:
            response = api.get("/readyz")
            assert response.status_code == 503
            assert response.json()["status"] == "unavailable"
            assert "unreachable" in response.json()["reason"]
            assert api.get("/healthz").status_code == 200  # the process itself is up
            scraped = api.get("/metrics")  # a scrape still answers
            assert scraped.status_code == 200
            assert "digest_webhook_queue_depth NaN" in scraped.text
    finally:
        engine.dispose()


def test_readyz_is_503_when_migrations_are_not_applied(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'empty.sqlite3'}")
    settings = Settings(data_dir=tmp_path, _env_file=None)  # type: ignore[call-arg]
    try:
        with TestClient(create_app(make_session_factory(engine), settings=settings)) as api:
            response = api.get("/readyz")
        assert response.status_code == 503
        assert "latest migration" in response.json()["reason"]
    finally:
        engine.dispose()


def test_metrics_after_a_sync_a_draft_and_webhook_attempts(
    fake_github: FakeGitHub, factory: sessionmaker[Session], settings: Settings
) -> None:
    build_cherry_pick_repo(fake_github)
    track(factory, "acme/engine")
    fake_github.repo("acme/missing-later")  # tracked, then gone from GitHub: a failing sync
    track(factory, "acme/missing-later")
    metrics = Metrics()
    hook_settings = settings.model_copy(
        update={"webhook_allowed_hosts": "127.0.0.1", "webhook_timeout": 5.0}
    )
    with make_test_client(fake_github) as github:
        poller = Poller(factory, settings, client=github, clock=fake_github.now, metrics=metrics)
        assert poller.run_job("acme/engine").ok  # type: ignore[union-attr]
        fake_github.advance(settings.poll_interval)  # the next cycle is due: idle, 304s
        assert poller.run_job("acme/engine").ok  # type: ignore[union-attr]
        fake_github._repos.pop("acme/missing-later")
        assert not poller.run_job("acme/missing-later").ok  # type: ignore[union-attr]

    receiver = Receiver(script=[503]).start()
    clock = FakeClock()
    try:
        app = create_app(factory, settings=hook_settings, metrics=metrics)
        with TestClient(app) as api:
            from tests.conftest import bearer

            created = api.post(
                "/v1/webhooks", json={"url": receiver.url}, headers=bearer(factory)
            ).json()
            receiver.secret = created["secret"]
            emit(factory, "first")
            worker = DeliveryWorker(factory, hook_settings, clock=clock, metrics=metrics)
            assert worker.run_pending() == 1  # 503: retried later
            draft = api.get("/v1/digests/draft?start=2026-09-01&end=2026-09-14")
            assert draft.status_code == 200
            scraped = api.get("/metrics")
            clock.advance(hours=1)
            assert worker.run_pending() == 1
            after = samples(api.get("/metrics").text)
            projects = api.get("/v1/projects").json()
    finally:
        receiver.stop()

    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain")
    found = samples(scraped.text)

    def value(name: str, **labels: str) -> float:
        return found.get((name, tuple(sorted(labels.items()))), 0.0)

    assert value("digest_github_requests_total", resource="releases", status="200") >= 1
    assert value("digest_github_requests_total", resource="pulls", status="200") >= 1
    assert value("digest_github_requests_total", resource="compare", status="200") >= 1
    # the idle cycle: releases.atom said nothing changed (no releases request), pulls 304
    assert value("digest_github_requests_total", resource="releases", status="304") == 0
    assert value("digest_github_requests_total", resource="pulls", status="304") == 1
    assert value("digest_github_requests_total", resource="releases", status="404") == 1
    remaining = value("digest_github_rate_limit_remaining")
    assert 0 < remaining <= 5000
    assert value("digest_sync_duration_seconds_count", project="acme/engine") == 2
    assert value("digest_sync_passes_total", project="acme/engine", outcome="ok") == 2
    assert value("digest_sync_passes_total", project="acme/missing-later", outcome="error") == 1
    assert value("digest_sync_last_success_timestamp_seconds", project="acme/engine") > 0
    assert (
        "digest_sync_last_success_timestamp_seconds",
        (("project", "acme/missing-later"),),
    ) not in found
    assert value("digest_webhook_delivery_attempts_total", outcome="retry") == 1
    assert value("digest_webhook_queue_depth") == 1
    assert value("digest_draft_build_seconds_count") == 1

    assert after[("digest_webhook_delivery_attempts_total", (("outcome", "delivered"),))] == 1
    assert after[("digest_webhook_queue_depth", ())] == 0
    # the failing project's last error stays visible in the API
    failing = next(p for p in projects if p["repo"] == "acme/missing-later")
    assert "not found" in failing["sync"]["last_error"]
    assert failing["sync"]["error_count"] == 1


def test_apps_have_their_own_registries(factory: sessionmaker[Session], settings: Settings) -> None:
    first = TestClient(create_app(factory, settings=settings))
    second = TestClient(create_app(factory, settings=settings))
    first.get("/v1/digests/draft?start=2026-09-01&end=2026-09-07")
    assert "digest_draft_build_seconds_count 1.0" in first.get("/metrics").text
    assert "digest_draft_build_seconds_count 0.0" in second.get("/metrics").text


def test_request_id_is_echoed_or_generated(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    with TestClient(create_app(factory, settings=settings)) as api:
        given = api.get("/healthz", headers={"X-Request-ID": "req-42.abc"})
        generated = api.get("/healthz")
        refused = api.get("/healthz", headers={"X-Request-ID": "bad id\twith spaces"})
        failed = api.get("/v1/digests/draft?start=nope&end=2026-09-07")
    assert given.headers["x-request-id"] == "req-42.abc"
    assert len(generated.headers["x-request-id"]) == 32
    assert refused.headers["x-request-id"] not in ("bad id\twith spaces", "")
    assert failed.status_code == 400 and failed.headers["x-request-id"]
    assert request_id.get() is None  # nothing leaks out of a request


def test_json_log_lines_carry_the_request_id(
    factory: sessionmaker[Session], settings: Settings, json_log: io.StringIO
) -> None:
    with TestClient(create_app(factory, settings=settings)) as api:
        response = api.post(
            "/v1/projects", json={"repo": "acme/x"}, headers={"X-Request-ID": "trace-7"}
        )
    assert response.status_code == 401
    lines = [json.loads(line) for line in json_log.getvalue().splitlines()]
    refused = [line for line in lines if line["logger"] == "service.auth.rules"]
    assert refused, lines
    assert refused[0]["request_id"] == "trace-7"
    assert refused[0]["level"] == "WARNING"
    assert "no bearer token" in refused[0]["message"]
    assert refused[0]["time"].endswith("+00:00")


def test_json_formatter_outside_a_request_and_with_an_exception() -> None:
    logger = logging.getLogger("service.test")
    try:
        raise ValueError("boom")
    except ValueError:
        record = logger.makeRecord(
            "service.test", logging.ERROR, __file__, 1, "failed %s", ("x",), exc_info=True
        )
        import sys

        record.exc_info = sys.exc_info()
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "failed x" and line["level"] == "ERROR"
    assert "request_id" not in line
    assert "ValueError: boom" in line["exc_info"]
