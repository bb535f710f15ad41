"""Every table, imported in one place so that metadata (and Alembic) sees them all."""

from service.auth.models import ApiToken
from service.changes.models import Change
from service.curation.models import CurationAction
from service.database import Base
from service.digests.models import PublishedDigest, PublishedItem
from service.events.models import Event
from service.generations.models import StoreGeneration
from service.inclusion.models import Comparison, ComparisonCommit, ReleaseChange
from service.leases.models import Lease
from service.posts.models import Feed, Post
from service.projects.models import Project
from service.releases.models import PackageAvailability, Release
from service.sync.models import HttpValidator, SyncState
from service.webhooks.models import Delivery, DeliveryAttempt, Subscription

__all__ = [
    "ApiToken",
    "Base",
    "Change",
    "Comparison",
    "ComparisonCommit",
    "CurationAction",
    "Delivery",
    "DeliveryAttempt",
    "Event",
    "Feed",
    "HttpValidator",
    "Lease",
    "PackageAvailability",
    "Post",
    "Project",
    "PublishedDigest",
    "PublishedItem",
    "Release",
    "ReleaseChange",
    "StoreGeneration",
    "Subscription",
    "SyncState",
]
