"""Subscriptions, the delivery queue (fan-out, per-endpoint order, retries) and its log."""

from __future__ import annotations

import email.utils
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from service.errors import ConflictError, NotFoundError, UnprocessableInput
from service.events.models import Event, EventType
from service.events.service import envelope, event_id_for, wake_delivery_after_commit
from service.projects.service import validate_slug
from service.webhooks import formats
from service.webhooks.models import (
    SIGNABLE_FORMATS,
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    MessageFormat,
    Subscription,
)
from service.webhooks.safety import Resolver, check_url

MAX_RETRY_AFTER = timedelta(days=1)


@dataclass(frozen=True)
class SubscriptionSpec:
    url: str
    events: Sequence[str]
    repositories: Sequence[str] = ()
    prerelease_only: bool = False
    themes: Sequence[str] = ()
    secret: str | None = None
    enabled: bool = True
    format: str = MessageFormat.STANDARD.value
    signing: bool = False
    description: str | None = None


@dataclass(frozen=True)
class RetryPolicy:
    base_seconds: float
    max_delay_seconds: float
    window: timedelta  # a delivery is retried this long after its first attempt
    disable_after: timedelta  # a subscription failing this long is disabled

    def delay(self, attempt: int, rng: Callable[[], float]) -> timedelta:
        """Exponential backoff with "equal jitter": half fixed, half random."""
        raw = min(self.base_seconds * 2 ** max(attempt - 1, 0), self.max_delay_seconds)
        return timedelta(seconds=raw / 2 + rng() * raw / 2)


class Outcome:
    DELIVERED = "delivered"
    RETRY = "retry"
    FAILED = "failed"


RETRIED_STATUSES = frozenset({408, 429})


def classify(status_code: int | None) -> str:
    """2xx delivered; no answer (timeout, connection error), 408, 429, 5xx retried; the
    rest (3xx, other 4xx) final — redirects are never followed."""
    if status_code is None or status_code in RETRIED_STATUSES or status_code >= 500:
        return Outcome.RETRY
    if 200 <= status_code < 300:
        return Outcome.DELIVERED
    return Outcome.FAILED


def parse_retry_after(value: str | None, now: datetime) -> timedelta | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        wait = timedelta(seconds=int(value))
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            return None
        wait = when - now
    return min(max(wait, timedelta(0)), MAX_RETRY_AFTER)


# --- subscriptions ---------------------------------------------------------------------


def _clean_spec_lists(spec: SubscriptionSpec) -> tuple[list[str], list[str], list[str]]:
    events = list(dict.fromkeys(str(e) for e in spec.events))
    if not events:
        raise UnprocessableInput("a subscription needs at least one event type")
    try:
        repositories = sorted({validate_slug(repo).lower() for repo in spec.repositories})
    except Exception as exc:  # validate_slug raises InvalidInput (400); here it is a bad body
        raise UnprocessableInput(str(getattr(exc, "message", exc))) from exc
    themes = sorted({theme.strip() for theme in spec.themes if theme.strip()})
    return events, repositories, themes


def _secret_for(message_format: str, signing: bool, given: str | None) -> str:
    if signing and message_format not in SIGNABLE_FORMATS:
        raise UnprocessableInput(
            f"signing is a Feishu / DingTalk option; the {message_format} format does not have it"
        )
    if signing:
        if not given:
            raise UnprocessableInput(
                f"{message_format} signing needs the bot's secret: give it as 'secret'"
            )
        return given
    if message_format == MessageFormat.STANDARD and given:
        try:
            formats.secret_key(given)
        except ValueError as exc:
            raise UnprocessableInput(f"secret: {exc} (e.g. whsec_ + base64 of 32 bytes)") from exc
        return given
    return formats.generate_secret()


def create_subscription(
    session: Session,
    spec: SubscriptionSpec,
    *,
    allowed_hosts: Collection[str],
    now: datetime,
    resolve: Resolver | None = None,
) -> Subscription:
    check_url(spec.url, allowed_hosts, *([resolve] if resolve else []))
    events, repositories, themes = _clean_spec_lists(spec)
    subscription = Subscription(
        url=spec.url.strip(),
        description=spec.description,
        events=events,
        repositories=repositories,
        prerelease_only=spec.prerelease_only,
        themes=themes,
        secret=_secret_for(spec.format, spec.signing, spec.secret),
        format=str(spec.format),
        signing=spec.signing,
        enabled=spec.enabled,
        created_at=now,
        updated_at=now,
    )
    session.add(subscription)
    session.flush()
    return subscription


def update_subscription(
    session: Session,
    subscription: Subscription,
    changes: dict[str, Any],
    *,
    allowed_hosts: Collection[str],
    now: datetime,
    resolve: Resolver | None = None,
) -> Subscription:
    merged = SubscriptionSpec(
        url=changes.get("url", subscription.url),
        events=changes.get("events", subscription.events),
        repositories=changes.get("repositories", subscription.repositories),
        prerelease_only=changes.get("prerelease_only", subscription.prerelease_only),
        themes=changes.get("themes", subscription.themes),
        secret=changes.get("secret"),
        enabled=changes.get("enabled", subscription.enabled),
        format=changes.get("format", subscription.format),
        signing=changes.get("signing", subscription.signing),
        description=changes.get("description", subscription.description),
    )
    if "url" in changes:
        check_url(merged.url, allowed_hosts, *([resolve] if resolve else []))
    events, repositories, themes = _clean_spec_lists(merged)
    if "secret" in changes or "format" in changes or "signing" in changes:
        given = merged.secret
        if given is None and merged.format == subscription.format:
            given = subscription.secret  # keep the secret when only signing flips
        subscription.secret = _secret_for(merged.format, merged.signing, given)
    subscription.url = merged.url.strip()
    subscription.events = events
    subscription.repositories = repositories
    subscription.themes = themes
    subscription.prerelease_only = merged.prerelease_only
    subscription.format = str(merged.format)
    subscription.signing = merged.signing
    subscription.description = merged.description
    if merged.enabled and not subscription.enabled:
        subscription.disabled_reason = None
        subscription.failing_since = None
        wake_delivery_after_commit(session)  # its queued deliveries can go again
    subscription.enabled = merged.enabled
    subscription.updated_at = now
    session.flush()
    return subscription


def get_subscription(session: Session, subscription_id: int) -> Subscription:
    subscription = session.get(Subscription, subscription_id)
    if subscription is None:
        raise NotFoundError(f"webhook subscription {subscription_id} does not exist")
    return subscription


def list_subscriptions(session: Session) -> list[Subscription]:
    return list(session.scalars(select(Subscription).order_by(Subscription.id)))


def delete_subscription(session: Session, subscription_id: int) -> None:
    session.delete(get_subscription(session, subscription_id))
    session.flush()


def list_deliveries(
    session: Session, subscription_id: int, limit: int = 50
) -> list[tuple[Delivery, Event, list[DeliveryAttempt]]]:
    get_subscription(session, subscription_id)
    rows = list(
        session.execute(
            select(Delivery, Event)
            .join(Event, Event.id == Delivery.event_id)
            .where(Delivery.subscription_id == subscription_id)
            .order_by(Delivery.id.desc())
            .limit(limit)
        )
    )
    attempts: dict[int, list[DeliveryAttempt]] = {delivery.id: [] for delivery, _ in rows}
    if attempts:
        for attempt in session.scalars(
            select(DeliveryAttempt)
            .where(DeliveryAttempt.delivery_id.in_(list(attempts)))
            .order_by(DeliveryAttempt.id)
        ):
            attempts[attempt.delivery_id].append(attempt)
    return [(delivery, event, attempts[delivery.id]) for delivery, event in rows]


def redeliver(session: Session, subscription_id: int, delivery_id: int, now: datetime) -> Delivery:
    subscription = get_subscription(session, subscription_id)
    delivery = session.get(Delivery, delivery_id)
    if delivery is None or delivery.subscription_id != subscription_id:
        raise NotFoundError(
            f"delivery {delivery_id} does not exist for webhook subscription {subscription_id}"
        )
    if not subscription.enabled:
        raise ConflictError(
            f"webhook subscription {subscription_id} is disabled "
            f"({subscription.disabled_reason or 'by request'}); enable it first"
        )
    delivery.status = DeliveryStatus.PENDING.value
    delivery.next_attempt_at = now
    delivery.first_attempt_at = None  # a fresh retry window
    delivery.leased_until = None
    session.flush()
    wake_delivery_after_commit(session)
    return delivery


def queue_ping(session: Session, subscription: Subscription, now: datetime) -> Delivery:
    """A ``webhook.ping`` event owed to this subscription only."""
    kind = EventType.PING
    event_id = event_id_for(kind, subscription.id, uuid.uuid4().hex)
    data = {
        "subscription_id": subscription.id,
        "message": "Webhook test from the AI infrastructure digest",
    }
    event = Event(
        event_id=event_id,
        type=kind.value,
        subject=f"ping of subscription {subscription.id}",
        occurred_at=now,
        created_at=now,
        ready=True,
        ready_at=now,
        dispatched_at=now,
        payload=envelope(event_id, kind, now, data),
    )
    session.add(event)
    session.flush()
    delivery = Delivery(
        subscription_id=subscription.id,
        event_id=event.id,
        status=DeliveryStatus.PENDING.value,
        attempts=0,
        next_attempt_at=now,
        created_at=now,
    )
    session.add(delivery)
    session.flush()
    wake_delivery_after_commit(session)
    return delivery


# --- the queue -------------------------------------------------------------------------


def matches(subscription: Subscription, event: Event) -> bool:
    """Whether a subscription wants an event. ``prerelease_only`` drops events about stable
    releases; ``themes`` keeps events whose release shipped changes of those themes.
    Events that are about no release (a breaking PR, a digest) pass both filters."""
    if event.type not in subscription.events:
        return False
    data: dict[str, Any] = (event.payload or {}).get("data") or {}
    if (
        subscription.repositories
        and str(data.get("repo", "")).lower() not in subscription.repositories
    ):
        return False
    if subscription.prerelease_only and data.get("prerelease") is False:
        return False
    if subscription.themes and "themes" in data and data.get("tag") is not None:
        keys = {theme.get("key") for theme in data.get("themes") or []}
        if not keys.intersection(subscription.themes):
            return False
    return True


def _insert_deliveries(session: Session, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    statement = insert(Delivery.__table__).on_conflict_do_nothing(
        index_elements=["subscription_id", "event_id"]
    )
    session.execute(statement, rows)


def fan_out(session: Session, now: datetime, limit: int = 500) -> int:
    """Queue a delivery of every ready, undispatched event to each subscription that wants
    it, oldest event first; returns how many events were dispatched."""
    events = list(
        session.scalars(
            select(Event)
            .where(Event.ready.is_(True), Event.dispatched_at.is_(None))
            .order_by(Event.id)
            .limit(limit)
        )
    )
    if not events:
        return 0
    subscriptions = list(
        session.scalars(select(Subscription).where(Subscription.enabled.is_(True)))
    )
    dispatched = 0
    for event in events:
        claimed = session.execute(
            update(Event)
            .where(Event.id == event.id, Event.dispatched_at.is_(None))
            .values(dispatched_at=now)
            .execution_options(synchronize_session=False)
        )
        if claimed.rowcount != 1:  # type: ignore[attr-defined]
            continue  # another worker got there first
        dispatched += 1
        _insert_deliveries(
            session,
            [
                {
                    "subscription_id": subscription.id,
                    "event_id": event.id,
                    "status": DeliveryStatus.PENDING.value,
                    "attempts": 0,
                    "next_attempt_at": now,
                    "created_at": now,
                }
                for subscription in subscriptions
                if matches(subscription, event)
            ],
        )
    return dispatched


@dataclass(frozen=True)
class QueueHead:
    delivery_id: int
    subscription_id: int
    next_attempt_at: datetime | None


def queue_heads(session: Session) -> list[QueueHead]:
    """The oldest pending delivery of every enabled subscription: the only one that may be
    attempted, so an endpoint never gets event N+1 while event N waits for a retry."""
    heads = (
        select(Delivery.subscription_id, func.min(Delivery.id).label("head_id"))
        .where(Delivery.status == DeliveryStatus.PENDING.value)
        .group_by(Delivery.subscription_id)
        .subquery()
    )
    rows = session.execute(
        select(Delivery.id, Delivery.subscription_id, Delivery.next_attempt_at)
        .join(heads, heads.c.head_id == Delivery.id)
        .join(Subscription, Subscription.id == Delivery.subscription_id)
        .where(Subscription.enabled.is_(True))
        .order_by(Delivery.id)
    )
    return [QueueHead(*row) for row in rows]


def claim(session: Session, delivery_id: int, now: datetime, lease: timedelta) -> bool:
    """Take a delivery for one attempt, so that two workers never send it at once."""
    result = session.execute(
        update(Delivery)
        .where(
            Delivery.id == delivery_id,
            Delivery.status == DeliveryStatus.PENDING.value,
            (Delivery.leased_until.is_(None)) | (Delivery.leased_until < now),
        )
        .values(leased_until=now + lease)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1  # type: ignore[attr-defined]


@dataclass
class AttemptResult:
    status_code: int | None
    latency_ms: int
    error: str | None = None
    retry_after: timedelta | None = None
    final: bool = False  # refused before sending, or a bot's error answer: never retried


def record_attempt(
    session: Session,
    delivery: Delivery,
    subscription: Subscription,
    result: AttemptResult,
    now: datetime,
    policy: RetryPolicy,
    rng: Callable[[], float],
) -> str:
    """Log an attempt and decide what happens next; returns the attempt's outcome."""
    outcome = classify(result.status_code)
    if result.final or (outcome == Outcome.DELIVERED and result.error):
        outcome = Outcome.FAILED
    delivery.attempts = (delivery.attempts or 0) + 1
    delivery.first_attempt_at = delivery.first_attempt_at or now
    delivery.last_attempt_at = now
    delivery.last_status_code = result.status_code
    delivery.last_error = result.error
    delivery.leased_until = None
    if outcome == Outcome.RETRY and now - delivery.first_attempt_at >= policy.window:
        outcome = Outcome.FAILED
        delivery.last_error = (
            f"gave up after {delivery.attempts} attempts over {now - delivery.first_attempt_at}"
            f": {result.error or f'HTTP {result.status_code}'}"
        )
    session.add(
        DeliveryAttempt(
            delivery_id=delivery.id,
            attempted_at=now,
            status_code=result.status_code,
            latency_ms=result.latency_ms,
            error=result.error,
            outcome=outcome,
        )
    )
    if outcome == Outcome.DELIVERED:
        delivery.status = DeliveryStatus.DELIVERED.value
        delivery.delivered_at = now
        delivery.next_attempt_at = None
        subscription.failing_since = None
        return outcome
    if outcome == Outcome.RETRY:
        wait = policy.delay(delivery.attempts, rng)
        if result.retry_after is not None:
            wait = max(wait, result.retry_after)
        delivery.next_attempt_at = now + wait
    else:
        delivery.status = DeliveryStatus.FAILED.value
        delivery.next_attempt_at = None
    subscription.failing_since = subscription.failing_since or now
    if result.status_code == 410:
        _disable(subscription, f"the endpoint answered 410 Gone at {now.isoformat()}", now)
    elif now - subscription.failing_since >= policy.disable_after:
        _disable(
            subscription,
            f"deliveries failed without a success since {subscription.failing_since.isoformat()}"
            f"; last error: {delivery.last_error or f'HTTP {result.status_code}'}",
            now,
        )
    return outcome


def _disable(subscription: Subscription, reason: str, now: datetime) -> None:
    if subscription.enabled:
        subscription.enabled = False
        subscription.disabled_reason = reason[:2000]
        subscription.updated_at = now
