"""Tests for react_agent.tools.builtin._clock: the current date and time in a zone."""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

import pytest

from react_agent.tools.builtin._clock import current_datetime

_ISO = re.compile(
    r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}) "
    r"\((Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\)$"
)


@pytest.mark.parametrize("zone", ["local", "UTC", "utc", ""])
def test_current_datetime_format(zone: str) -> None:
    out = current_datetime(zone)
    match = _ISO.match(out)
    assert match, out
    parsed = dt.datetime.fromisoformat(match.group(1))
    assert parsed.weekday() == [
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"
    ].index(match.group(2))
    now = dt.datetime.now(dt.timezone.utc)
    assert abs((parsed - now).total_seconds()) < 3600  # the current time, not a fixed one


def test_current_datetime_utc_has_zero_offset() -> None:
    assert "+00:00 (" in current_datetime("UTC")


def test_current_datetime_iana_zone() -> None:
    if "Asia/Tokyo" not in zoneinfo.available_timezones():
        pytest.skip("no IANA time zone data on this system")
    out = current_datetime("Asia/Tokyo")
    assert "+09:00 (" in out  # Japan has no daylight saving time
    assert _ISO.match(out)


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "../../etc/passwd", "/etc/localtime"])
def test_current_datetime_unknown_zone(zone: str) -> None:
    with pytest.raises(ValueError, match=r"Unknown time zone .*Europe/Lisbon"):
        current_datetime(zone)
