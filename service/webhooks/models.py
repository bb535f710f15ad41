"""Subscriptions, one delivery per (subscription, event), and every attempt of each."""

from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from service.database import Base, UTCDateTime

JSONList = JSON().with_variant(JSONB(), "postgresql")


class MessageFormat(enum.StrEnum):
    STANDARD = "standard"  # the JSON event, signed per Standard Webhooks
    SLACK = "slack"
    DISCORD = "discord"
    FEISHU = "feishu"  # also Lark
    DINGTALK = "dingtalk"
    WECOM = "wecom"


SIGNABLE_FORMATS = (MessageFormat.FEISHU, MessageFormat.DINGTALK)


class DeliveryStatus(enum.StrEnum):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


class Subscription(Base):
    __tablename__ = "webhook_subscriptions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    url: Mapped[str] = mapped_column(String(2000))
    description: Mapped[str | None] = mapped_column(String(300))
    events: Mapped[list[str]] = mapped_column(JSONList, default=list)
    repositories: Mapped[list[str]] = mapped_column(JSONList, default=list)  # repo keys
    prerelease_only: Mapped[bool] = mapped_column(Boolean, default=False)
    themes: Mapped[list[str]] = mapped_column(JSONList, default=list)
    # Must be usable to sign, so it is kept as given: "whsec_..." for the standard format,
    # the bot's own secret for Feishu / DingTalk signing.
    secret: Mapped[str] = mapped_column(String(500))
    format: Mapped[str] = mapped_column(String(20), default=MessageFormat.STANDARD.value)
    signing: Mapped[bool] = mapped_column(Boolean, default=False)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled_reason: Mapped[str | None] = mapped_column(Text)
    failing_since: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Delivery(Base):
    """An event owed to one subscription. Per subscription, only the oldest unfinished
    delivery is ever attempted, so an endpoint receives events in order."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index(
            "uq_webhook_deliveries_subscription_event", "subscription_id", "event_id", unique=True
        ),
        Index("ix_webhook_deliveries_queue", "status", "subscription_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    subscription_id: Mapped[int] = mapped_column(
        ForeignKey("webhook_subscriptions.id", ondelete="CASCADE")
    )
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16), default=DeliveryStatus.PENDING.value)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    first_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    leased_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class DeliveryAttempt(Base):
    __tablename__ = "webhook_attempts"
    __table_args__ = (Index("ix_webhook_attempts_delivery", "delivery_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    delivery_id: Mapped[int] = mapped_column(
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE")
    )
    attempted_at: Mapped[datetime] = mapped_column(UTCDateTime)
    status_code: Mapped[int | None] = mapped_column(Integer)
    latency_ms: Mapped[int] = mapped_column(Integer)
    error: Mapped[str | None] = mapped_column(Text)
    outcome: Mapped[str] = mapped_column(String(16))  # delivered | retry | failed
