"""Every table, imported in one place so that metadata (and Alembic) sees them all."""

from service.changes.models import Change
from service.database import Base
from service.events.models import Event
from service.inclusion.models import Comparison, ComparisonCommit, ReleaseChange
from service.projects.models import Project
from service.releases.models import Release
from service.sync.models import HttpValidator, SyncState
from service.webhooks.models import Delivery, DeliveryAttempt, Subscription

__all__ = [
    "Base",
    "Change",
    "Comparison",
    "ComparisonCommit",
    "Delivery",
    "DeliveryAttempt",
    "Event",
    "HttpValidator",
    "Project",
    "Release",
    "ReleaseChange",
    "Subscription",
    "SyncState",
]
