from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field

from service.api import ERROR_RESPONSES, DbId, SessionDep
from service.config import Settings
from service.database import utcnow
from service.events.models import SUBSCRIBABLE_EVENT_TYPES, Event, EventType
from service.webhooks import service
from service.webhooks.models import Delivery, DeliveryAttempt, MessageFormat, Subscription
from service.webhooks.safety import parse_allowed_hosts

router = APIRouter(prefix="/v1/webhooks", tags=["webhooks"], responses=ERROR_RESPONSES)

SubscribableEvent = EventType  # webhook.ping is refused below: it is not subscribable


class SubscriptionIn(BaseModel):
    url: str = Field(max_length=2000, examples=["https://hooks.example.com/digest"])
    events: list[SubscribableEvent] = Field(
        default_factory=lambda: list(SUBSCRIBABLE_EVENT_TYPES), min_length=1
    )
    repositories: list[str] = Field(default_factory=list, examples=[["vllm-project/vllm"]])
    prerelease_only: bool = False
    themes: list[str] = Field(default_factory=list)
    secret: str | None = Field(
        default=None,
        max_length=500,
        description="whsec_ + base64 of 24-64 bytes (generated when omitted); for Feishu / "
        "DingTalk signing, the bot's secret",
    )
    enabled: bool = True
    format: MessageFormat = MessageFormat.STANDARD
    signing: bool = Field(default=False, description="Feishu / DingTalk signature scheme")
    description: str | None = Field(default=None, max_length=300)


class SubscriptionPatch(BaseModel):
    url: str | None = Field(default=None, max_length=2000)
    events: list[SubscribableEvent] | None = Field(default=None, min_length=1)
    repositories: list[str] | None = None
    prerelease_only: bool | None = None
    themes: list[str] | None = None
    secret: str | None = Field(default=None, max_length=500)
    enabled: bool | None = None
    format: MessageFormat | None = None
    signing: bool | None = None
    description: str | None = Field(default=None, max_length=300)


class SubscriptionOut(BaseModel):
    id: int
    url: str
    description: str | None
    events: list[str]
    repositories: list[str]
    prerelease_only: bool
    themes: list[str]
    format: str
    signing: bool
    enabled: bool
    disabled_reason: str | None
    failing_since: datetime | None
    created_at: datetime
    updated_at: datetime


class SubscriptionCreated(SubscriptionOut):
    secret: str = Field(description="shown once, here; keep it to verify signatures")


class AttemptOut(BaseModel):
    attempted_at: datetime
    status_code: int | None
    latency_ms: int
    error: str | None
    outcome: str


class DeliveryOut(BaseModel):
    id: int
    event_id: str
    event_type: str
    subject: str
    status: str
    attempt_count: int
    next_attempt_at: datetime | None
    delivered_at: datetime | None
    last_status_code: int | None
    last_error: str | None
    attempts: list[AttemptOut]


def subscription_out(subscription: Subscription) -> dict[str, Any]:
    return SubscriptionOut(
        id=subscription.id,
        url=subscription.url,
        description=subscription.description,
        events=list(subscription.events),
        repositories=list(subscription.repositories),
        prerelease_only=subscription.prerelease_only,
        themes=list(subscription.themes),
        format=subscription.format,
        signing=subscription.signing,
        enabled=subscription.enabled,
        disabled_reason=subscription.disabled_reason,
        failing_since=subscription.failing_since,
        created_at=subscription.created_at,
        updated_at=subscription.updated_at,
    ).model_dump()


def delivery_out(delivery: Delivery, event: Event, attempts: list[DeliveryAttempt]) -> DeliveryOut:
    return DeliveryOut(
        id=delivery.id,
        event_id=event.event_id,
        event_type=event.type,
        subject=event.subject,
        status=delivery.status,
        attempt_count=delivery.attempts,
        next_attempt_at=delivery.next_attempt_at,
        delivered_at=delivery.delivered_at,
        last_status_code=delivery.last_status_code,
        last_error=delivery.last_error,
        attempts=[
            AttemptOut(
                attempted_at=a.attempted_at,
                status_code=a.status_code,
                latency_ms=a.latency_ms,
                error=a.error,
                outcome=a.outcome,
            )
            for a in attempts
        ],
    )


def _allowed_hosts(request: Request) -> frozenset[str]:
    settings: Settings = request.app.state.settings
    return parse_allowed_hosts(settings.webhook_allowed_hosts)


def _refuse_ping(events: list[EventType] | None) -> None:
    if events and EventType.PING in events:
        from service.errors import UnprocessableInput

        raise UnprocessableInput(
            "webhook.ping is not subscribable; POST /v1/webhooks/{id}/test sends one"
        )


@router.post("", response_model=SubscriptionCreated, status_code=201)
def create_subscription(body: SubscriptionIn, session: SessionDep, request: Request) -> Any:
    _refuse_ping(body.events)
    subscription = service.create_subscription(
        session,
        service.SubscriptionSpec(
            url=body.url,
            events=[e.value for e in body.events],
            repositories=body.repositories,
            prerelease_only=body.prerelease_only,
            themes=body.themes,
            secret=body.secret,
            enabled=body.enabled,
            format=body.format.value,
            signing=body.signing,
            description=body.description,
        ),
        allowed_hosts=_allowed_hosts(request),
        now=utcnow(),
    )
    session.commit()
    return {**subscription_out(subscription), "secret": subscription.secret}


@router.get("", response_model=list[SubscriptionOut])
def list_subscriptions(session: SessionDep) -> Any:
    return [subscription_out(s) for s in service.list_subscriptions(session)]


@router.get("/{subscription_id}", response_model=SubscriptionOut)
def get_subscription(subscription_id: DbId, session: SessionDep) -> Any:
    return subscription_out(service.get_subscription(session, subscription_id))


@router.patch("/{subscription_id}", response_model=SubscriptionOut)
def update_subscription(
    subscription_id: DbId, body: SubscriptionPatch, session: SessionDep, request: Request
) -> Any:
    changes = body.model_dump(exclude_unset=True)
    _refuse_ping(body.events)
    if "events" in changes and body.events is not None:
        changes["events"] = [e.value for e in body.events]
    if "format" in changes and body.format is not None:
        changes["format"] = body.format.value
    nullable = {"secret", "description"}
    changes = {k: v for k, v in changes.items() if v is not None or k in nullable}
    subscription = service.update_subscription(
        session,
        service.get_subscription(session, subscription_id),
        changes,
        allowed_hosts=_allowed_hosts(request),
        now=utcnow(),
    )
    session.commit()
    return subscription_out(subscription)


@router.delete("/{subscription_id}", status_code=204)
def delete_subscription(subscription_id: DbId, session: SessionDep) -> Response:
    service.delete_subscription(session, subscription_id)
    session.commit()
    return Response(status_code=204)


@router.get("/{subscription_id}/deliveries", response_model=list[DeliveryOut])
def list_deliveries(
    subscription_id: DbId,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> list[DeliveryOut]:
    return [
        delivery_out(d, e, a)
        for d, e, a in service.list_deliveries(session, subscription_id, limit)
    ]


@router.post(
    "/{subscription_id}/deliveries/{delivery_id}/redeliver",
    response_model=DeliveryOut,
    status_code=202,
)
def redeliver(subscription_id: DbId, delivery_id: DbId, session: SessionDep) -> DeliveryOut:
    delivery = service.redeliver(session, subscription_id, delivery_id, utcnow())
    session.commit()
    event = session.get(Event, delivery.event_id)
    assert event is not None
    return delivery_out(delivery, event, [])


@router.post("/{subscription_id}/test", response_model=DeliveryOut, status_code=202)
def send_test(subscription_id: DbId, session: SessionDep) -> DeliveryOut:
    subscription = service.get_subscription(session, subscription_id)
    delivery = service.queue_ping(session, subscription, utcnow())
    session.commit()
    event = session.get(Event, delivery.event_id)
    assert event is not None
    return delivery_out(delivery, event, [])
