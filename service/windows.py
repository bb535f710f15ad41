"""UTC windows (R1) and the timing of a change within one (R3).

A window given as ``start=YYYY-MM-DD&end=YYYY-MM-DD`` (end inclusive) covers
``[start 00:00:00Z, end + 1 day 00:00:00Z)``. Everything is compared in UTC.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from service.errors import InvalidInput, UnprocessableInput

MAX_WINDOW_DAYS = 62


class Timing(enum.StrEnum):
    MERGED_UNRELEASED = "merged_unreleased"
    MERGED_AND_RELEASED = "merged_and_released"
    RELEASED_MERGED_EARLIER = "released_merged_earlier"


@dataclass(frozen=True)
class Window:
    start: datetime  # inclusive, 00:00:00Z
    end: datetime  # exclusive, 00:00:00Z of the day after the last day

    def __contains__(self, moment: datetime) -> bool:
        return self.start <= moment < self.end

    @property
    def first_day(self) -> date:
        return self.start.date()

    @property
    def last_day(self) -> date:
        return (self.end - timedelta(days=1)).date()

    def as_json(self) -> dict[str, str]:
        return {"start": iso_utc(self.start), "end": iso_utc(self.end)}


def iso_utc(moment: datetime) -> str:
    text = moment.astimezone(UTC).isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")


def parse_day(value: str, name: str) -> date:
    try:
        if len(value) != 10:
            raise ValueError
        return date.fromisoformat(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{name}: {value!r} is not a date in YYYY-MM-DD form") from None


def window_for(start: str, end: str, max_days: int = MAX_WINDOW_DAYS) -> Window:
    first = parse_day(start, "start")
    last = parse_day(end, "end")
    if last < first:
        raise UnprocessableInput(f"end {last} is before start {first}")
    days = (last - first).days + 1
    if days > max_days:
        raise UnprocessableInput(f"window of {days} days is longer than {max_days} days")
    return Window(
        start=datetime.combine(first, time.min, UTC),
        end=datetime.combine(last + timedelta(days=1), time.min, UTC),
    )


def timing_of(
    window: Window,
    merged_at: datetime,
    first_release_at: datetime | None,
    first_stable_release_at: datetime | None,
) -> Timing | None:
    """How a change stands in a window, judged as of the window's end; None if outside.

    A change merged before the window counts when its first release, or its first stable
    release, was published in the window ("merged on 9/22, shipped in 0.38.0 this week")."""
    shipped_by_end = [t for t in (first_release_at, first_stable_release_at) if t is not None]
    if merged_at in window:
        if any(t < window.end for t in shipped_by_end):
            return Timing.MERGED_AND_RELEASED
        return Timing.MERGED_UNRELEASED
    if merged_at < window.start and any(t in window for t in shipped_by_end):
        return Timing.RELEASED_MERGED_EARLIER
    return None
