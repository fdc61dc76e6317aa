"""Parsing of /daily times and timezones, and the next due instant across DST changes."""

from __future__ import annotations

from datetime import UTC, datetime, time

import pytest

from bot.services.schedule import (
    ScheduleError,
    format_local,
    local_date,
    next_due,
    parse_time,
    parse_timezone,
)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_parse_time() -> None:
    assert parse_time("09:05") == time(9, 5)
    assert parse_time("7:30") == time(7, 30)
    assert parse_time("23.59") == time(23, 59)
    for bad in ("24:00", "12:60", "noon", "9", "", "12:5", "-1:00"):
        with pytest.raises(ScheduleError):
            parse_time(bad)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Europe/Moscow", "Europe/Moscow"),
        ("europe/moscow", "Europe/Moscow"),
        ("America/New_York", "America/New_York"),
        ("UTC", "UTC"),
        ("+3", "UTC+03:00"),
        ("UTC+03:00", "UTC+03:00"),
        ("utc+3", "UTC+03:00"),
        ("-5", "UTC-05:00"),
        ("GMT-05:30", "UTC-05:30"),
        ("+0530", "UTC+05:30"),
        ("+0", "UTC"),
        ("+14", "UTC+14:00"),
    ],
)
def test_parse_timezone(text: str, expected: str) -> None:
    assert parse_timezone(text) == expected


@pytest.mark.parametrize("bad", ["Mars/Olympus", "+15", "-13", "../../etc/passwd", "", "+3:75"])
def test_parse_timezone_rejects(bad: str) -> None:
    with pytest.raises(ScheduleError):
        parse_timezone(bad)


def test_next_due_in_several_timezones() -> None:
    now = utc(2026, 6, 10, 12, 0)  # 15:00 in Moscow, 08:00 in New York
    assert next_due(now, time(16, 0), "Europe/Moscow") == utc(2026, 6, 10, 13, 0)
    assert next_due(now, time(9, 0), "Europe/Moscow") == utc(2026, 6, 11, 6, 0)
    assert next_due(now, time(9, 0), "America/New_York") == utc(2026, 6, 10, 13, 0)
    assert next_due(now, time(9, 0), "UTC-05:00") == utc(2026, 6, 10, 14, 0)
    assert next_due(now, time(12, 0), "UTC") == utc(2026, 6, 11, 12, 0)  # strictly after
    # Tokyo is already on the next day.
    assert next_due(now, time(8, 0), "Asia/Tokyo") == utc(2026, 6, 10, 23, 0)
    assert local_date(utc(2026, 6, 10, 23, 0), "Asia/Tokyo") == "2026-06-11"


def test_weekdays_only_skips_the_weekend() -> None:
    friday_evening = utc(2026, 6, 12, 20, 0)  # Friday
    assert next_due(friday_evening, time(9, 0), "UTC", weekdays_only=True) == utc(2026, 6, 15, 9, 0)
    assert next_due(friday_evening, time(9, 0), "UTC") == utc(2026, 6, 13, 9, 0)


def test_dst_gap_fires_at_the_next_valid_minute() -> None:
    # 2026-03-08: New York clocks jump from 02:00 EST to 03:00 EDT; 02:30 does not exist.
    due = next_due(utc(2026, 3, 6, 12, 0), time(2, 30), "America/New_York")
    assert due == utc(2026, 3, 7, 7, 30)  # Saturday 02:30 EST
    due = next_due(due, time(2, 30), "America/New_York")
    assert due == utc(2026, 3, 8, 7, 0)  # Sunday: 03:00 EDT, the first minute after the gap
    assert local_date(due, "America/New_York") == "2026-03-08"
    assert next_due(due, time(2, 30), "America/New_York") == utc(2026, 3, 9, 6, 30)


def test_repeated_time_fires_once() -> None:
    # 2026-11-01: New York goes from 02:00 EDT back to 01:00 EST; 01:30 happens twice.
    first = next_due(utc(2026, 10, 31, 12, 0), time(1, 30), "America/New_York")
    assert first == utc(2026, 11, 1, 5, 30)  # the first 01:30 (EDT)
    after = next_due(first, time(1, 30), "America/New_York")
    assert after == utc(2026, 11, 2, 6, 30)  # not the second 01:30 an hour later
    # Even asked between the two occurrences, the next one is the following day.
    assert next_due(utc(2026, 11, 1, 6, 0), time(1, 30), "America/New_York") == after


def test_europe_gap_and_fold() -> None:
    # Berlin 2026-03-29: 02:00 -> 03:00; 2026-10-25: 03:00 -> 02:00.
    assert next_due(utc(2026, 3, 28, 12), time(2, 15), "Europe/Berlin") == utc(2026, 3, 29, 1, 0)
    assert next_due(utc(2026, 10, 24, 12), time(2, 15), "Europe/Berlin") == utc(2026, 10, 25, 0, 15)


def test_format_local_names_the_weekday_in_the_given_language() -> None:
    sunday_night_utc = utc(2026, 11, 29, 22, 30)  # already Monday in Moscow
    ru = ["пн", "вт", "ср", "чт", "пт", "сб", "вс"]
    assert format_local(sunday_night_utc, "Europe/Moscow", ru) == "2026-11-30 01:30 (пн)"
    en = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    assert format_local(sunday_night_utc, "UTC", en) == "2026-11-29 22:30 (Sun)"
