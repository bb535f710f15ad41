from datetime import UTC, datetime

import pytest

from connectors.github import parse_timestamp
from service.errors import InvalidInput, UnprocessableInput
from service.windows import Timing, timing_of, window_for

WINDOW = window_for("2026-08-04", "2026-08-10")


def at(text: str) -> datetime:
    return parse_timestamp(text, "test")


def test_window_is_start_midnight_to_day_after_end_midnight_utc() -> None:
    assert WINDOW.start == datetime(2026, 8, 4, tzinfo=UTC)
    assert WINDOW.end == datetime(2026, 8, 11, tzinfo=UTC)
    assert WINDOW.as_json() == {"start": "2026-08-04T00:00:00Z", "end": "2026-08-11T00:00:00Z"}


@pytest.mark.parametrize(
    ("stamp", "inside"),
    [
        ("2026-08-10T23:59:59Z", True),
        ("2026-08-11T00:00:00Z", False),
        ("2026-08-04T00:00:00Z", True),
        ("2026-08-03T23:59:59Z", False),
        # 23:30 in California on the last day is 06:30Z the next day: the week after.
        ("2026-08-10T23:30:00-07:00", False),
        ("2026-08-10T16:59:59-07:00", True),
        # 07:30 in Beijing on the first day is 23:30Z the day before: the week before.
        ("2026-08-04T07:30:00+08:00", False),
        ("2026-08-04T08:00:00+08:00", True),
    ],
)
def test_offsets_are_converted_to_utc_before_bucketing(stamp: str, inside: bool) -> None:
    assert (at(stamp) in WINDOW) is inside


@pytest.mark.parametrize("bad", ["2026-13-01", "yesterday", "2026/08/04", "", "2026-8-4"])
def test_malformed_dates_are_refused_clearly(bad: str) -> None:
    with pytest.raises(InvalidInput, match="YYYY-MM-DD"):
        window_for(bad, "2026-08-10")


def test_reversed_and_overlong_windows_are_refused() -> None:
    with pytest.raises(UnprocessableInput, match="before start"):
        window_for("2026-08-10", "2026-08-04")
    with pytest.raises(UnprocessableInput, match="longer than 62"):
        window_for("2026-01-01", "2026-03-05")
    assert window_for("2026-01-01", "2026-03-03").end == datetime(2026, 3, 4, tzinfo=UTC)


def test_timing_as_of_the_window_end() -> None:
    merged = at("2026-08-05T10:00:00Z")
    in_window = at("2026-08-09T10:00:00Z")
    after = at("2026-08-12T10:00:00Z")
    before = at("2026-07-30T10:00:00Z")
    assert timing_of(WINDOW, merged, None, None) is Timing.MERGED_UNRELEASED
    assert timing_of(WINDOW, merged, after, after) is Timing.MERGED_UNRELEASED
    assert timing_of(WINDOW, merged, in_window, None) is Timing.MERGED_AND_RELEASED
    assert timing_of(WINDOW, before, in_window, None) is Timing.RELEASED_MERGED_EARLIER
    # first shipped in an RC of an earlier week, first stable this week
    assert timing_of(WINDOW, before, before, in_window) is Timing.RELEASED_MERGED_EARLIER
    assert timing_of(WINDOW, before, before, after) is None
    assert timing_of(WINDOW, after, None, None) is None


def test_timestamps_without_offset_or_malformed_are_record_errors() -> None:
    from connectors.github import RecordError

    for bad in ["2026-08-10T23:30:00", "2026-02-30T00:00:00Z", "soon", None, 12]:
        with pytest.raises(RecordError):
            parse_timestamp(bad, "published_at")
