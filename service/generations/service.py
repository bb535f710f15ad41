from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.generations.models import StoreGeneration

# What each counter watches (migration 0008 holds the triggers): the window material of a
# draft is read from the DATA tables only, its curation from the CURATION table.
DATA = "store"
CURATION = "curation"
KINDS = {
    DATA: (
        "changes",
        "releases",
        "projects",  # only its catalog columns: repo, repo_key, name, category, enabled, options
        "feeds",  # only its catalog columns: key, name, url, site, projects
        "posts",
        "package_availability",
        "published_digests",
        "published_items",
    ),
    CURATION: ("curation_actions",),
}


@dataclass(frozen=True)
class Generation:
    """A counter's position; equal generations mean nothing it watches changed between
    the two reads."""

    epoch: str
    value: int


UNSET = Generation("", 0)  # a counter nothing has bumped since its row was created or lost


@dataclass(frozen=True)
class Generations:
    data: Generation
    curation: Generation


def current(session: Session) -> Generations:
    """The counters as the session's transaction sees them. Read them before the data they
    guard: whatever is read afterwards is at least as new as the generation."""
    found = {
        row.name: Generation(row.epoch, row.value)
        for row in session.execute(
            select(StoreGeneration.name, StoreGeneration.value, StoreGeneration.epoch)
        )
    }
    return Generations(found.get(DATA, UNSET), found.get(CURATION, UNSET))
