"""Local times and timezones for daily questions: parsing and the next due instant (zoneinfo)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

_TIME = re.compile(r"^([01]?\d|2[0-3])[:.]([0-5]\d)$")
_OFFSET = re.compile(r"^(?:UTC|GMT)?([+-])(\d{1,2})(?::?([0-5]\d))?$", re.IGNORECASE)
MAX_GAP_MINUTES = 2 * 24 * 60  # the longest a local day can lose (Samoa skipped a whole day)


class ScheduleError(ValueError):
    """A time or timezone the user typed that we cannot use."""


def parse_time(text: str) -> time:
    """`HH:MM` (also `H:MM`, `HH.MM`) -> time; raises ScheduleError."""
    match = _TIME.match(text.strip())
    if not match:
        raise ScheduleError(text)
    return time(int(match.group(1)), int(match.group(2)))


@cache
def _zones_by_lower_name() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


def parse_timezone(text: str) -> str:
    """IANA name (any case) or a UTC offset (`+3`, `UTC+03:00`, `-5`) -> canonical name."""
    raw = text.strip()
    if raw.upper() in ("UTC", "GMT", "Z"):
        return "UTC"
    match = _OFFSET.match(raw.replace(" ", ""))
    if match:
        sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        total = hours * 60 + minutes
        # Real offsets run from UTC-12:00 to UTC+14:00.
        if (sign == "+" and total > 14 * 60) or (sign == "-" and total > 12 * 60):
            raise ScheduleError(text)
        if total == 0:
            return "UTC"
        return f"UTC{sign}{hours:02d}:{minutes:02d}"
    name = _zones_by_lower_name().get(raw.lower())
    if name is None:
        raise ScheduleError(text)
    return name


def zone(name: str) -> tzinfo:
    """The tzinfo of a canonical name from parse_timezone."""
    if name == "UTC":
        return UTC
    if name.startswith(("UTC+", "UTC-")):
        sign = 1 if name[3] == "+" else -1
        hours, minutes = int(name[4:6]), int(name[7:9])
        return timezone(sign * timedelta(hours=hours, minutes=minutes), name)
    return ZoneInfo(name)


def _exists(naive: datetime, tz: tzinfo) -> bool:
    aware = naive.replace(tzinfo=tz)
    return aware.astimezone(UTC).astimezone(tz).replace(tzinfo=None) == naive


def resolve_local(day: date, at: time, tz: tzinfo) -> datetime:
    """The UTC instant of `at` on `day`: a time lost to a DST gap moves to the next valid
    minute; a time that happens twice (clocks go back) means its first occurrence."""
    naive = datetime.combine(day, at)
    for _ in range(MAX_GAP_MINUTES):
        if _exists(naive, tz):
            return naive.replace(tzinfo=tz, fold=0).astimezone(UTC)
        naive += timedelta(minutes=1)
    raise ScheduleError(f"no valid local time near {day} {at} in {tz}")


def next_due(after: datetime, at: time, tz_name: str, weekdays_only: bool = False) -> datetime:
    """The first delivery instant strictly after `after` (aware), in UTC."""
    tz = zone(tz_name)
    start = after.astimezone(tz).date() - timedelta(days=1)  # a gap can push a day forward
    for offset in range(10):
        day = start + timedelta(days=offset)
        if weekdays_only and day.weekday() >= 5:
            continue
        due = resolve_local(day, at, tz)
        if due > after:
            return due
    raise ScheduleError(f"no delivery time after {after}")


def local_date(instant: datetime, tz_name: str) -> str:
    return instant.astimezone(zone(tz_name)).date().isoformat()


def format_local(instant: datetime, tz_name: str, weekday_names: Sequence[str]) -> str:
    """`2026-11-30 09:00 (Mon)` in the subscriber's timezone; `weekday_names` starts on Monday
    and comes from the user's language (strftime's %a follows the process locale instead)."""
    local = instant.astimezone(zone(tz_name))
    return f"{local:%Y-%m-%d %H:%M} ({weekday_names[local.weekday()]})"
