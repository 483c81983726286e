"""The date/time tool: the current date and time in the local zone, UTC or an IANA zone.

Zone names come from the system's database or, where there is none (Windows), from the
``tzdata`` package this project depends on.
"""

from __future__ import annotations

import datetime as _dt
import zoneinfo

__all__ = ["current_datetime"]

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def current_datetime(timezone: str = "local") -> str:
    """Get the current date and time (ISO 8601, with the weekday).

    Args:
        timezone: "local", "UTC" or an IANA time zone name such as "Europe/Lisbon".

    Returns:
        e.g. ``"2026-11-29T20:41:05+00:00 (Sunday)"``, to the second, with the UTC offset.

    Raises:
        ValueError: ``timezone`` is not "local", "UTC" or a known IANA name.
    """
    name = timezone.strip()
    if name.lower() in ("", "local"):
        now = _dt.datetime.now().astimezone()
    elif name.upper() in ("UTC", "Z", "GMT"):
        now = _dt.datetime.now(_dt.timezone.utc)
    else:
        try:
            zone = zoneinfo.ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            raise ValueError(
                f"Unknown time zone {timezone!r}; write 'local', 'UTC' or an IANA name as "
                "Area/City, e.g. 'Europe/Lisbon', 'Africa/Nairobi', 'Pacific/Auckland'."
            ) from None
        now = _dt.datetime.now(zone)
    return f"{now.isoformat(timespec='seconds')} ({_WEEKDAYS[now.weekday()]})"
