"""The delivery worker: woken when deliverable events are committed in this process (and
every few seconds for those of other processes), it queues deliveries and sends each
subscription's oldest pending one, endpoints in parallel, one at a time per endpoint."""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import httpx
from sqlalchemy.orm import Session, sessionmaker

from service.config import Settings
from service.database import transaction, utcnow
from service.events.models import Event
from service.events.service import DELIVERABLE, WakeSignal
from service.observability.metrics import NULL_METRICS, Metrics
from service.webhooks import formats
from service.webhooks import service as webhooks
from service.webhooks.models import Delivery, Subscription
from service.webhooks.safety import Resolver, UnsafeWebhookURL, check_url, parse_allowed_hosts

log = logging.getLogger(__name__)

USER_AGENT = "ai-infra-digest-webhooks/1"


def retry_policy(settings: Settings) -> webhooks.RetryPolicy:
    return webhooks.RetryPolicy(
        base_seconds=settings.webhook_retry_base_seconds,
        max_delay_seconds=settings.webhook_retry_max_delay_seconds,
        window=timedelta(hours=settings.webhook_retry_hours),
        disable_after=timedelta(hours=settings.webhook_disable_after_hours),
    )


class DeliveryWorker:
    def __init__(
        self,
        factory: sessionmaker[Session],
        settings: Settings,
        *,
        clock: Callable[[], datetime] = utcnow,
        rng: Callable[[], float] = random.random,
        resolve: Resolver = socket.getaddrinfo,
        http: httpx.Client | None = None,
        signal: WakeSignal = DELIVERABLE,
        metrics: Metrics | None = None,
    ) -> None:
        self.factory = factory
        self.metrics = metrics or NULL_METRICS
        self.metrics.watch_deliveries(factory)
        self.settings = settings
        self.clock = clock
        self.rng = rng
        self.resolve = resolve
        self.policy = retry_policy(settings)
        self.allowed_hosts = parse_allowed_hosts(settings.webhook_allowed_hosts)
        self.lease = timedelta(seconds=settings.webhook_timeout * 2 + 30)
        self.http = http or httpx.Client(
            timeout=settings.webhook_timeout,
            follow_redirects=False,
            headers={"user-agent": USER_AGENT},
        )
        self.signal = signal
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._in_flight: set[int] = set()
        self._in_flight_lock = threading.Lock()

    # --- running ---------------------------------------------------------------------

    def start(self) -> None:
        self._stopping.clear()
        self._pool = ThreadPoolExecutor(
            max_workers=self.settings.webhook_concurrency, thread_name_prefix="webhook"
        )
        self._thread = threading.Thread(target=self._loop, name="webhook-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self.signal.notify()
        if self._thread is not None:
            self._thread.join(timeout=self.settings.webhook_timeout + 5)
            self._thread = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self.http.close()

    def _loop(self) -> None:
        while not self._stopping.is_set():
            seen = self.signal.generation()
            try:
                wait = self._dispatch_due()
            except Exception:
                log.exception("webhook delivery pass failed; retrying shortly")
                wait = self.settings.webhook_poll_seconds
            if self._stopping.is_set():
                return
            self.signal.wait(seen, wait)

    def _dispatch_due(self) -> float:
        """Send what is due (in the pool); returns how long to sleep when nothing wakes us."""
        now = self.clock()
        with transaction(self.factory) as session:
            webhooks.fan_out(session, now)
        with self.factory() as session:
            heads = webhooks.queue_heads(session)
        wait = self.settings.webhook_poll_seconds
        for head in heads:
            if head.next_attempt_at is not None and head.next_attempt_at > now:
                wait = min(wait, (head.next_attempt_at - now).total_seconds())
                continue
            with self._in_flight_lock:
                if head.subscription_id in self._in_flight:
                    continue
                self._in_flight.add(head.subscription_id)
            assert self._pool is not None
            self._pool.submit(self._deliver_in_pool, head)
        return max(wait, 0.0)

    def _deliver_in_pool(self, head: webhooks.QueueHead) -> None:
        try:
            self.deliver(head.delivery_id)
        except Exception:
            log.exception("delivery %d crashed; it is retried on the next pass", head.delivery_id)
        finally:
            with self._in_flight_lock:
                self._in_flight.discard(head.subscription_id)
            self.signal.notify()  # the next delivery of this endpoint may be due

    def run_pending(self, max_attempts: int = 10_000) -> int:
        """Deliver, in this thread, everything due by the clock; returns attempts made.
        For tests and one-shot use: with an injected clock no real time passes."""
        attempts = 0
        while attempts < max_attempts:
            now = self.clock()
            with transaction(self.factory) as session:
                webhooks.fan_out(session, now)
            with self.factory() as session:
                due = [
                    head
                    for head in webhooks.queue_heads(session)
                    if head.next_attempt_at is None or head.next_attempt_at <= now
                ]
            if not due:
                return attempts
            for head in due:
                if self.deliver(head.delivery_id):
                    attempts += 1
        return attempts

    # --- one attempt -----------------------------------------------------------------

    def deliver(self, delivery_id: int) -> bool:
        """One attempt of one delivery; False when it was not ours to make."""
        now = self.clock()
        with transaction(self.factory) as session:
            if not webhooks.claim(session, delivery_id, now, self.lease):
                return False
            delivery = session.get(Delivery, delivery_id)
            assert delivery is not None
            subscription = session.get(Subscription, delivery.subscription_id)
            event = session.get(Event, delivery.event_id)
            if subscription is None or event is None or not subscription.enabled:
                delivery.leased_until = None
                return False
            snapshot = (
                subscription.url,
                subscription.format,
                subscription.secret,
                subscription.signing,
                event.event_id,
                event.payload or {},
            )
        result = self._send(*snapshot)
        with transaction(self.factory) as session:
            delivery = session.get(Delivery, delivery_id)
            if delivery is None:
                return True
            subscription = session.get(Subscription, delivery.subscription_id)
            if subscription is None:
                return True
            outcome = webhooks.record_attempt(
                session, delivery, subscription, result, self.clock(), self.policy, self.rng
            )
        self.metrics.webhook_attempt(outcome)
        if outcome != webhooks.Outcome.DELIVERED:
            log.info(
                "webhook delivery %d to %s: %s (%s)",
                delivery_id,
                snapshot[0],
                outcome,
                result.error or result.status_code,
            )
        return True

    def _send(
        self,
        url: str,
        message_format: str,
        secret: str,
        signing: bool,
        message_id: str,
        payload: dict[str, object],
    ) -> webhooks.AttemptResult:
        try:
            target = check_url(url, self.allowed_hosts, self.resolve)
        except UnsafeWebhookURL as exc:
            return webhooks.AttemptResult(None, 0, f"not sent: {exc.message}", final=True)
        outgoing = formats.render(
            message_format,
            payload,
            secret=secret,
            signing=signing,
            message_id=message_id,
            timestamp=int(self.clock().timestamp()),
        )
        headers = dict(outgoing.headers)
        extensions: dict[str, str] = {}
        if target.pinned:
            headers["host"] = target.host_header()
            if target.scheme == "https":
                extensions["sni_hostname"] = target.host
        # merged, not passed as params=, which would replace the URL's own query (the
        # DingTalk access_token lives there)
        url = httpx.URL(target.connect_url()).copy_merge_params(outgoing.params)
        request = self.http.build_request(
            "POST", url, content=outgoing.body, headers=headers, extensions=extensions or None
        )
        started = time.perf_counter()
        try:
            response = self.http.send(request)
            body = response.read()
        except httpx.TimeoutException as exc:
            return webhooks.AttemptResult(None, _ms_since(started), f"timeout: {exc!r}")
        except httpx.HTTPError as exc:
            return webhooks.AttemptResult(None, _ms_since(started), f"connection error: {exc!r}")
        latency = _ms_since(started)
        status = response.status_code
        error: str | None = None
        if status >= 300:
            error = f"HTTP {status}"
            if 300 <= status < 400:
                error += " (redirects are not followed; update the webhook URL)"
        bot_error = formats.chat_error(message_format, body) if status < 300 else None
        return webhooks.AttemptResult(
            status,
            latency,
            bot_error or error,
            retry_after=webhooks.parse_retry_after(
                response.headers.get("retry-after"), self.clock()
            ),
            final=bot_error is not None,
        )


def _ms_since(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
