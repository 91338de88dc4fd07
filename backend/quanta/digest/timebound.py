"""Time bounds for ``--since`` / ``--until``, written as pt-query-digest users write them."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = ["parse_time_bound"]

_RELATIVE_RE = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_time_bound(text: str, now: datetime | None = None) -> datetime:
    """Parse an absolute time (ISO 8601 date or datetime, UTC unless it says otherwise) or a
    duration back from now (``90s``, ``30m``, ``12h``, ``7d``, ``2w``).

    Raises:
        ValueError: With the forms accepted, when the text is none of them.

    Example:
        >>> parse_time_bound("2024-01-02 03:04:05").isoformat()
        '2024-01-02T03:04:05+00:00'
        >>> now = datetime(2024, 1, 2, tzinfo=UTC)
        >>> parse_time_bound("12h", now).isoformat()
        '2024-01-01T12:00:00+00:00'
    """
    text = text.strip()
    relative = _RELATIVE_RE.fullmatch(text)
    if relative is not None:
        seconds = float(relative[1]) * _UNIT_SECONDS[relative[2]]
        return (now or datetime.now(UTC)) - timedelta(seconds=seconds)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a time: use a date or time such as 2024-01-02 or "
            "2024-01-02T03:04:05Z, or a duration back from now such as 30m, 12h or 7d"
        ) from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
