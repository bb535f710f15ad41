"""Webhook delivery to a real receiver on 127.0.0.1, on SQLite and PostgreSQL: signatures,
at-least-once with stable ids, retries and backoff (on an injected clock), order per
endpoint, restarts and outages, 410, and the SSRF guard."""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from service.app import create_app
from service.config import Settings
from service.database import transaction
from service.events.service import emit_digest_published
from service.webhooks.models import Subscription
from service.webhooks.worker import DeliveryWorker
from tests.conftest import bearer

T0 = datetime(2026, 10, 8, 12, 0, tzinfo=UTC)
WAIT = 20.0  # generous bound for a wait that normally ends in milliseconds


def verify_standard_signature(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """The receiver's side of Standard Webhooks: HMAC-SHA256 of "{id}.{timestamp}.{body}"
    keyed with the base64-decoded secret after "whsec_", any of the space-separated
    "v1,<base64>" signatures matching in constant time."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for candidate in headers.get("webhook-signature", "").split(" "):
        version, _, signature = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False


@dataclass
class Received:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    status: int

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """A webhook endpoint: answers from `script` (then 200), records every request."""

    secret: str | None = None
    script: list[int | tuple[int, dict[str, str]]] = field(default_factory=list)
    port: int = 0
    received: list[Received] = field(default_factory=list)
    receipt_times: list[float] = field(default_factory=list)  # perf_counter, per request
    bad_signatures: int = 0

    def __post_init__(self) -> None:
        self._condition = threading.Condition()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, extra = receiver._next_answer()
                arrived = time.perf_counter()
                with receiver._condition:
                    if receiver.secret and not verify_standard_signature(
                        receiver.secret, headers, body
                    ):
                        receiver.bad_signatures += 1
                    parts = urlsplit(self.path)
                    receiver.received.append(
                        Received(parts.path, dict(parse_qsl(parts.query)), headers, body, status)
                    )
                    receiver.receipt_times.append(arrived)
                    receiver._condition.notify_all()
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *_args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _next_answer(self) -> tuple[int, dict[str, str]]:
        with self._condition:
            if not self.script:
                return 200, {}
            answer = self.script.pop(0)
        return answer if isinstance(answer, tuple) else (answer, {})

    def accepted_ids(self) -> list[str]:
        with self._condition:
            return [r.headers["webhook-id"] for r in self.received if r.status < 300]

    def wait_for(self, condition: Callable[[Receiver], bool], what: str) -> None:
        deadline = time.monotonic() + WAIT
        with self._condition:
            while not condition(self):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"timed out waiting for {what}: {self.received!r}")
                self._condition.wait(remaining)


@pytest.fixture
def receivers() -> Iterator[list[Receiver]]:
    started: list[Receiver] = []
    yield started
    for receiver in started:
        receiver.stop()


@pytest.fixture
def make_receiver(receivers: list[Receiver]) -> Callable[..., Receiver]:
    def make(**options: Any) -> Receiver:
        receiver = Receiver(**options).start()
        receivers.append(receiver)
        return receiver

    return make


@pytest.fixture
def hook_settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={
            "webhook_allowed_hosts": "127.0.0.1",
            "webhook_retry_base_seconds": 0.01,
            "webhook_retry_max_delay_seconds": 0.05,
            "webhook_poll_seconds": 0.2,
            "webhook_timeout": 5.0,
        }
    )


@pytest.fixture
def api(factory: sessionmaker[Session], hook_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(factory, settings=hook_settings), headers=bearer(factory)) as client:
        yield client


@pytest.fixture
def no_outside_connections(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Fail any attempt to open a connection to a non-loopback address."""
    attempted: list[Any] = []
    original = socket.socket.connect

    def guarded(sock: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else address
        if host not in ("127.0.0.1", "::1", "localhost"):
            attempted.append(address)
            raise AssertionError(f"connection attempted to {address!r}")
        return original(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return attempted


class FakeClock:
    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def just_after_now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)


def subscribe(api: TestClient, url: str, **options: Any) -> dict[str, Any]:
    response = api.post("/v1/webhooks", json={"url": url, **options})
    assert response.status_code == 201, response.text
    return response.json()


def emit(factory: sessionmaker[Session], key: str, when: datetime = T0) -> str:
    with transaction(factory) as session:
        return emit_digest_published(
            session,
            digest_key=key,
            title=f"Digest {key} <b>bold</b>",
            window_start=when - timedelta(days=7),
            window_end=when,
            published_at=when,
        )


def test_every_event_arrives_signed_in_order_and_duplicates_share_the_id(
    factory: sessionmaker[Session],
    hook_settings: Settings,
    api: TestClient,
    make_receiver: Callable[..., Receiver],
) -> None:
    receiver = make_receiver()
    created = subscribe(api, receiver.url, events=["digest.published"])
    receiver.secret = created["secret"]
    assert created["secret"].startswith("whsec_")
    assert len(base64.b64decode(created["secret"][6:])) >= 24
    worker = DeliveryWorker(factory, hook_settings)
    worker.start()
    try:
        emitted = [emit(factory, f"2026-w{n:02d}") for n in range(20)]
        receiver.wait_for(lambda r: len(set(r.accepted_ids())) == 20, "20 events")
        # seeing the same digest again writes no second event
        assert emit(factory, "2026-w00") == emitted[0]
        delivery = api.get(f"/v1/webhooks/{created['id']}/deliveries").json()[-1]
        assert delivery["event_id"] == emitted[0]
        response = api.post(f"/v1/webhooks/{created['id']}/deliveries/{delivery['id']}/redeliver")
        assert response.status_code == 202
        receiver.wait_for(lambda r: len(r.accepted_ids()) == 21, "the redelivery")
    finally:
        worker.stop()
    assert receiver.bad_signatures == 0
    ids = receiver.accepted_ids()
    assert ids[:20] == emitted  # in the order the events were committed
    assert Counter(ids) == Counter({**dict.fromkeys(emitted, 1), emitted[0]: 2})
    for request in receiver.received:
        body = request.json
        assert body["id"] == request.headers["webhook-id"]
        assert body["type"] == "digest.published"
        assert body["data"]["title"].endswith("bold") and "<b>" not in body["data"]["title"]
        assert abs(int(request.headers["webhook-timestamp"]) - time.time()) < 600


def test_503_three_times_then_200_delivers_and_holds_back_the_next_event(
    factory: sessionmaker[Session],
    hook_settings: Settings,
    api: TestClient,
    make_receiver: Callable[..., Receiver],
) -> None:
    receiver = make_receiver(script=[503, 503, 503])
    created = subscribe(api, receiver.url)
    receiver.secret = created["secret"]
    worker = DeliveryWorker(factory, hook_settings)
    worker.start()
    try:
        first, second = emit(factory, "first"), emit(factory, "second")
        receiver.wait_for(lambda r: second in r.accepted_ids(), "both events")
    finally:
        worker.stop()
    sent = [(r.headers["webhook-id"], r.status) for r in receiver.received]
    assert sent == [(first, 503), (first, 503), (first, 503), (first, 200), (second, 200)]
    assert receiver.bad_signatures == 0
    deliveries = api.get(f"/v1/webhooks/{created['id']}/deliveries").json()
    oldest = deliveries[-1]
    assert oldest["event_id"] == first and oldest["status"] == "delivered"
    assert [a["status_code"] for a in oldest["attempts"]] == [503, 503, 503, 200]
    assert [a["outcome"] for a in oldest["attempts"]] == ["retry"] * 3 + ["delivered"]
    assert all(a["latency_ms"] >= 0 and a["attempted_at"] for a in oldest["attempts"])
    assert oldest["attempts"][0]["error"] == "HTTP 503"


def test_receiver_down_while_the_worker_restarts_still_gets_everything(
    factory: sessionmaker[Session],
    hook_settings: Settings,
    api: TestClient,
    make_receiver: Callable[..., Receiver],
) -> None:
    receiver = make_receiver()
    created = subscribe(api, receiver.url)
    receiver.secret = created["secret"]
    worker = DeliveryWorker(factory, hook_settings)
    worker.start()
    emitted = [emit(factory, "before")]
    receiver.wait_for(lambda r: r.accepted_ids() == emitted, "the first event")
    receiver.stop()
    emitted += [emit(factory, f"outage-{n}") for n in range(3)]

    def failed_attempts() -> int:
        deliveries = api.get(f"/v1/webhooks/{created['id']}/deliveries").json()
        return sum(1 for d in deliveries for a in d["attempts"] if a["outcome"] == "retry")

    deadline = time.monotonic() + WAIT
    while failed_attempts() < 2:
        assert time.monotonic() < deadline, "the worker never tried the endpoint while down"
        time.sleep(0.01)
    worker.stop()
    emitted += [emit(factory, "while-stopped")]
    receiver.start()  # same port
    restarted = DeliveryWorker(factory, hook_settings)
    restarted.start()
    try:
        receiver.wait_for(lambda r: set(r.accepted_ids()) == set(emitted), "every event")
    finally:
        restarted.stop()
    assert receiver.accepted_ids() == emitted
    assert receiver.bad_signatures == 0
    errors = [
        a["error"]
        for d in api.get(f"/v1/webhooks/{created['id']}/deliveries").json()
        for a in d["attempts"]
        if a["outcome"] == "retry"
    ]
    assert errors and all(e.startswith("connection error") for e in errors)


def test_410_stops_retries_and_disables_the_subscription(
    factory: sessionmaker[Session],
    hook_settings: Settings,
    api: TestClient,
    make_receiver: Callable[..., Receiver],
) -> None:
    receiver = make_receiver(script=[410])
    created = subscribe(api, receiver.url)
    clock = FakeClock()
    worker = DeliveryWorker(factory, hook_settings, clock=clock)
    emit(factory, "one")
    emit(factory, "two")
    assert worker.run_pending() == 1
    clock.advance(days=2)
    assert worker.run_pending() == 0
    assert len(receiver.received) == 1
    subscription = api.get(f"/v1/webhooks/{created['id']}").json()
    assert subscription["enabled"] is False
    assert "410" in subscription["disabled_reason"]
    deliveries = api.get(f"/v1/webhooks/{created['id']}/deliveries").json()
    assert [d["status"] for d in deliveries] == ["pending", "failed"]
    assert api.patch(f"/v1/webhooks/{created['id']}", json={"enabled": True}).status_code == 200
    assert worker.run_pending() == 1  # the held-back event goes once re-enabled
    assert [r.json["data"]["digest"] for r in receiver.received] == ["one", "two"]


def test_429_retry_after_is_honoured_on_an_injected_clock(
    factory: sessionmaker[Session],
    hook_settings: Settings,
    api: TestClient,
    make_receiver: Callable[..., Receiver],
) -> None:
    receiver = make_receiver(script=[(429, {"retry-after": "120"}), 500, 408])
    subscribe(api, receiver.url)
    clock = FakeClock()
    worker = DeliveryWorker(factory, hook_settings, clock=clock)
    emit(factory, "rate-limited")
    assert worker.run_pending() == 1
    clock.advance(seconds=119)
    assert worker.run_pending() == 0
    clock.advance(seconds=2)
    for _ in range(3):  # 500, then 408 are retried after the (small) backoff, then 200
        assert worker.run_pending() == 1
        clock.advance(seconds=1)
    assert worker.run_pending() == 0
    assert [r.status for r in receiver.received] == [429, 500, 408, 200]


def test_backoff_is_exponential_with_jitter_and_retries_for_days_then_disables(
    factory: sessionmaker[Session],
    settings: Settings,
    make_receiver: Callable[..., Receiver],
) -> None:
    receiver = make_receiver(script=[500] * 200)
    defaults = settings.model_copy(update={"webhook_allowed_hosts": "127.0.0.1"})
    clock = FakeClock()
    worker = DeliveryWorker(factory, defaults, clock=clock, rng=lambda: 1.0)
    with TestClient(create_app(factory, settings=defaults), headers=bearer(factory)) as api:
        created = subscribe(api, receiver.url)
        emit(factory, "never-accepted")
        attempt_times = []
        for _ in range(100):
            attempted = worker.run_pending()
            if attempted:
                attempt_times.append(clock.now)
            subscription = api.get(f"/v1/webhooks/{created['id']}").json()
            if not subscription["enabled"]:
                break
            delivery = api.get(f"/v1/webhooks/{created['id']}/deliveries").json()[0]
            clock.now = datetime.fromisoformat(delivery["next_attempt_at"])
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(attempt_times)]
    assert gaps[:4] == [5.0, 10.0, 20.0, 40.0]  # base 5 s, doubling (rng pinned to 1.0)
    assert max(gaps) == 6 * 3600.0  # capped
    assert attempt_times[-1] - attempt_times[0] >= timedelta(hours=72)
    assert subscription["enabled"] is False
    assert "failed without a success since" in subscription["disabled_reason"]
    assert len(receiver.received) == len(attempt_times)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://127.0.0.1:9/hook", "loopback"),
        ("http://localhost:9/hook", "loopback"),
        ("http://[::1]:9/hook", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.0.0.1/", "private"),
        ("http://192.168.1.20:8080/", "private"),
        ("http://[::ffff:10.0.0.1]/", "private"),
        ("http://224.0.0.1/", "multicast"),
        ("http://0.0.0.0/", "unspecified"),
        ("ftp://example.com/hook", "http or https"),
        ("file:///etc/passwd", "http or https"),
        ("http:///nohost", "no host"),
    ],
)
def test_unsafe_urls_are_refused_with_a_clear_422_before_any_connection(
    factory: sessionmaker[Session],
    settings: Settings,
    no_outside_connections: list[Any],
    url: str,
    reason: str,
) -> None:
    strict = settings.model_copy(update={"webhook_allowed_hosts": ""})
    with TestClient(create_app(factory, settings=strict), headers=bearer(factory)) as api:
        response = api.post("/v1/webhooks", json={"url": url})
        assert response.status_code == 422, response.text
        body = response.json()
        assert body["error"] == "unsafe_webhook_url"
        assert reason in body["message"]
        assert api.get("/v1/webhooks").json() == []
    assert no_outside_connections == []


def test_unsafe_url_is_refused_on_patch_and_rechecked_at_delivery(
    factory: sessionmaker[Session],
    hook_settings: Settings,
    settings: Settings,
    api: TestClient,
    make_receiver: Callable[..., Receiver],
    no_outside_connections: list[Any],
) -> None:
    receiver = make_receiver()
    created = subscribe(api, receiver.url)
    response = api.patch(f"/v1/webhooks/{created['id']}", json={"url": "http://10.1.2.3/x"})
    assert response.status_code == 422 and "private" in response.json()["message"]
    emit(factory, "after-the-allow-list-changed")
    strict = settings.model_copy(update={"webhook_allowed_hosts": ""})
    assert DeliveryWorker(factory, strict, clock=FakeClock()).run_pending() == 1
    assert receiver.received == []
    delivery = api.get(f"/v1/webhooks/{created['id']}/deliveries").json()[0]
    assert delivery["status"] == "failed"
    assert delivery["attempts"][0]["error"].startswith("not sent: ")
    assert "loopback" in delivery["attempts"][0]["error"]
    assert no_outside_connections == []


def test_subscription_api_shows_the_secret_once_and_validates_input(
    api: TestClient, factory: sessionmaker[Session]
) -> None:
    url = "http://127.0.0.1:9/hook"
    created = subscribe(
        api,
        url,
        events=["release.prerelease", "change.breaking"],
        repositories=["vllm-project/vllm"],
        prerelease_only=True,
        themes=["quantization"],
    )
    assert created["repositories"] == ["vllm-project/vllm"] and created["enabled"] is True
    shown = api.get(f"/v1/webhooks/{created['id']}").json()
    assert "secret" not in shown and "secret" not in api.get("/v1/webhooks").json()[0]
    with factory() as session:
        stored = session.scalar(select(Subscription.secret))
    assert stored == created["secret"]  # kept so that it can sign

    given = "whsec_" + base64.b64encode(b"k" * 32).decode()
    assert subscribe(api, url, secret=given)["secret"] == given
    bad = [
        ({"secret": "not-a-secret"}, "whsec_"),
        ({"secret": "whsec_" + base64.b64encode(b"short").decode()}, "24"),
        ({"events": []}, "events"),
        ({"events": ["release.deleted"]}, "events"),
        ({"events": ["webhook.ping"]}, "not subscribable"),
        ({"format": "telegram"}, "format"),
        ({"format": "slack", "signing": True, "secret": "x"}, "Feishu / DingTalk"),
        ({"format": "feishu", "signing": True}, "bot's secret"),
        ({"repositories": ["not a repo"]}, "slug"),
    ]
    for options, message in bad:
        response = api.post("/v1/webhooks", json={"url": url, **options})
        assert response.status_code == 422, (options, response.text)
        assert message in response.json()["message"], (options, response.json())
    patched = api.patch(f"/v1/webhooks/{created['id']}", json={"enabled": False, "themes": []})
    assert patched.status_code == 200
    assert patched.json()["enabled"] is False and patched.json()["themes"] == []
    assert api.delete(f"/v1/webhooks/{created['id']}").status_code == 204
    for method, path in [
        ("get", f"/v1/webhooks/{created['id']}"),
        ("delete", f"/v1/webhooks/{created['id']}"),
        ("get", f"/v1/webhooks/{created['id']}/deliveries"),
        ("post", f"/v1/webhooks/{created['id']}/test"),
        ("post", f"/v1/webhooks/{created['id']}/deliveries/1/redeliver"),
    ]:
        response = api.request(method, path)
        assert response.status_code == 404 and response.json()["error"] == "not_found"


def test_ping_and_chat_formats_with_feishu_and_dingtalk_signatures(
    factory: sessionmaker[Session],
    hook_settings: Settings,
    api: TestClient,
    make_receiver: Callable[..., Receiver],
) -> None:
    clock = FakeClock()
    worker = DeliveryWorker(factory, hook_settings, clock=clock)
    standard = make_receiver()
    created = subscribe(api, standard.url)
    standard.secret = created["secret"]
    assert api.post(f"/v1/webhooks/{created['id']}/test").status_code == 202
    clock.now = just_after_now()  # the API queues pings at the real time
    assert worker.run_pending() == 1
    assert standard.received[0].json["type"] == "webhook.ping"
    assert standard.bad_signatures == 0

    chat = make_receiver()
    for chat_format, options in [
        ("feishu", {"signing": True, "secret": "feishu-bot-secret"}),
        ("dingtalk", {"signing": True, "secret": "SECdingtalk-bot-secret"}),
        ("slack", {}),
        ("discord", {}),
        ("wecom", {}),
    ]:
        made = subscribe(api, chat.url + f"?bot={chat_format}", format=chat_format, **options)
        assert api.post(f"/v1/webhooks/{made['id']}/test").status_code == 202
    clock.now = just_after_now()
    assert worker.run_pending() == 5
    by_format = {r.query["bot"]: r for r in chat.received}
    moment = int(clock.now.timestamp())

    feishu = by_format["feishu"].json
    assert feishu["msg_type"] == "post" and feishu["timestamp"] == str(moment)
    key = f"{moment}\nfeishu-bot-secret".encode()
    assert feishu["sign"] == base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()

    dingtalk = by_format["dingtalk"]
    assert dingtalk.json["msgtype"] == "markdown"
    millis = dingtalk.query["timestamp"]
    assert millis == str(moment * 1000)
    secret = b"SECdingtalk-bot-secret"
    expected = hmac.new(secret, f"{millis}\n".encode() + secret, hashlib.sha256).digest()
    # parse_qsl undid the one URL-encoding; what is left is the base64 signature
    assert dingtalk.query["sign"] == base64.b64encode(expected).decode()

    assert "blocks" in by_format["slack"].json and "text" in by_format["slack"].json
    assert by_format["discord"].json["allowed_mentions"] == {"parse": []}
    assert by_format["wecom"].json["msgtype"] == "markdown"
    assert all("webhook-signature" not in r.headers for r in chat.received)
