"""Types of the C reader of the usual slow-log entry (_slowlog.c)."""

from collections.abc import Callable
from datetime import datetime
from typing import Any

class PlainReader:
    """Reads the usual entries of a slow log into events; see the module comment."""

    def __init__(
        self,
        event_type: Callable[..., Any],
        connections: dict[str, Any],
        read_connection: Callable[[str], Any],
        epoch_time: Callable[[str], datetime | None],
        typed: Callable[[str, str | None], Any],
        /,
    ) -> None: ...
    def scan(
        self,
        text: str,
        position: int,
        limit: int,
        at_end: bool,
        line: int,
        database: str | None,
        sink: Any = None,
        max_count: int = 0,
        /,
    ) -> tuple[list[Any], int, int, int, str | None, str | None]:
        """(events, count, end, line, database, last '# Time:') of the entries from position."""
