"""Streaming parser for MySQL, Percona Server and MariaDB slow query logs.

One entry of a slow log is a block of ``#`` header lines, then optional ``use db;`` and
``SET timestamp=N;`` lines, then the statement text, which may span lines and ends with the
``;`` the server appends::

    # Time: 2024-01-02T03:04:05.123456Z
    # User@Host: app[app] @ web1 [10.0.0.5]  Id:    42
    # Query_time: 0.001234  Lock_time: 0.000100 Rows_sent: 1  Rows_examined: 10
    use shop;
    SET timestamp=1704164645;
    SELECT * FROM orders WHERE id = 7;

:func:`parse_slow_log` reads such a log line by line and yields one :class:`SlowLogEvent` per
entry, holding only the current entry in memory. It understands every variant users run:

* ``# Time:`` as ISO 8601 (MySQL 5.7+), ``071015 21:43:52`` (MySQL 5.0-5.6) or
  ``240102  3:04:05`` (MariaDB), also followed by ``# User@Host:`` on the same line (old
  Percona); a time is carried over to the entries that have none (MariaDB and old MySQL only
  write it when it changes). Times without an offset are taken as UTC.
* ``# User@Host: user[user] @ host [ip]`` with MySQL's ``Id:`` suffix.
* Every ``Key: value`` pair on any ``#`` line: MySQL 8 ``log_slow_extra``, Percona
  ``log_slow_verbosity``, MariaDB ``# Rows_affected:``, ``# Full_scan: Yes`` ...; MariaDB's
  ``# explain:`` lines are kept, joined, under the attribute ``explain``.
* ``# administrator command: Quit;`` (the query text is ``administrator command: Quit``).
* Server start banners anywhere in the file, empty lines, CRLF line ends and bytes that are
  not UTF-8 (decoded as Latin-1 line by line, so nothing is lost or fails).

A malformed entry (no ``# Query_time``, or a header and no statement) is not yielded; its
first line number and the reason go to ``ParseStats.skipped``. Nothing raises on bad input.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone

__all__ = [
    "BAD_QUERY_TIME",
    "NO_HEADER",
    "NO_QUERY",
    "NO_QUERY_TIME",
    "RESTARTED",
    "AttributeValue",
    "ParseStats",
    "SlowLogEvent",
    "parse_slow_log",
]

AttributeValue = str | int | float | bool


@dataclass(slots=True)
class SlowLogEvent:
    """One statement from a slow log.

    Attributes:
        query: The statement text, without the ``;`` the server appends, the ``use db;`` and
            ``SET timestamp=N;`` lines; ``administrator command: Quit`` for admin commands.
        ts: When the statement ran, UTC: from ``SET timestamp=N`` (exact), else the last
            ``# Time:``; None when the log gives neither.
        query_time: Seconds the statement took.
        lock_time: Seconds spent waiting for table locks.
        rows_sent: Rows returned to the client, if logged.
        rows_examined: Rows read by the server, if logged.
        rows_affected: Rows changed (Percona Server, MariaDB), if logged.
        db: Default database: from ``use db;``, else ``# Schema:``, else the previous event's.
        user: Client user name from ``# User@Host:``.
        host: Client host name from ``# User@Host:``, or its IP when there is no name.
        line: 1-based line number where the entry starts.
        attributes: Every other header value, typed: times float, counts int, Yes/No bool,
            anything else str, under the name the log uses (``Bytes_sent``, ``QC_hit``,
            ``Thread_id``, ``explain``, ``ip``, ...).
    """

    query: str
    ts: datetime | None
    query_time: float
    lock_time: float
    rows_sent: int | None
    rows_examined: int | None
    rows_affected: int | None
    db: str | None
    user: str | None
    host: str | None
    line: int
    attributes: dict[str, AttributeValue]


@dataclass(slots=True)
class ParseStats:
    """Counters filled in while a log is parsed.

    Attributes:
        events: Events yielded so far.
        skipped: ``(line number, reason)`` for each malformed entry that was left out.
    """

    events: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)


# Reasons recorded in ParseStats.skipped.
NO_QUERY_TIME = "entry has no Query_time"
BAD_QUERY_TIME = "entry has an invalid Query_time"
NO_QUERY = "entry has no statement (truncated?)"
NO_HEADER = "statement without a header"
RESTARTED = "entry cut off by a server restart"

_TIME_RE = re.compile(
    r"# Time:\s+(?:"
    r"(?P<iso>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?)(?P<tz>Z|[+-]\d\d:?\d\d)?"
    r"|(?P<yy>\d\d)(?P<mm>\d\d)(?P<dd>\d\d)\s+(?P<h>\d\d?):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:\.(?P<frac>\d+))?)"
)
_USER_HOST_RE = re.compile(
    r"# User@Host:\s*(?P<priv>[^\[@]*?)\s*(?:\[(?P<user>[^\]]*)\])?\s*@\s*(?P<host>[^\s\[]*)"
    r"\s*(?:\[(?P<ip>[^\]]*)\])?(?:\s+Id:\s*(?P<id>\d+))?"
)
# "Key: value" pairs; a key with nothing after it (MariaDB's "Schema:   QC_hit: No") has no
# value rather than taking the next key as its value.
_PAIR_RE = re.compile(r"([A-Za-z][A-Za-z0-9_]*):(?:[ \t]+(?![A-Za-z][A-Za-z0-9_]*:(?:\s|$))(\S+))?")
_BANNER_RE = re.compile(
    r"(?:.*(?:mysqld|mariadbd)\S*, Version: .*(?:started with:|embedded library)"
    r"|Tcp port: \d+"
    r"|Time\s+Id\s+Command\s+Argument)",
    re.IGNORECASE,
)
_PAIR_LINE_RE = re.compile(r"#\s+[A-Z][A-Za-z_]+: \S")
_SET_META_RE = re.compile(r"SET (?:last_insert_id|insert_id|timestamp)=\S*;\s*$")
_TIMESTAMP_RE = re.compile(r"timestamp=(\d+(?:\.\d+)?)")
_INT_RE = re.compile(r"-?\d+")
_FLOAT_RE = re.compile(r"-?\d+\.\d+|-?\d+(?:\.\d+)?e[+-]?\d+", re.IGNORECASE)
# Kinds of '#' lines. Time, User@Host and Query_time lines begin an entry wherever they
# appear; other '#' lines after a statement has begun are comments inside it.
_PAIRS, _TIME, _USER_HOST, _QUERY_TIME, _ADMIN, _EXPLAIN = range(6)
_HEADER_PREFIXES = {
    prefix[2:6]: (prefix, kind)
    for prefix, kind in (
        ("# Time:", _TIME),
        ("# User@Host:", _USER_HOST),
        ("# Query_time:", _QUERY_TIME),
        ("# administrator command:", _ADMIN),
        ("# explain:", _EXPLAIN),
    )
}
# Values that look numeric but are identifiers.
_STRING_KEYS = frozenset(("InnoDB_trx_id", "Log_slow_rate_type"))
_TIME_SUFFIXES = ("_time", "_wait")
_BOOLEANS = {"Yes": True, "No": False, "YES": True, "NO": False, "yes": True, "no": False}
_FIELD_KEYS = frozenset(
    ("Query_time", "Lock_time", "Rows_sent", "Rows_examined", "Rows_affected", "Schema")
)


def parse_slow_log(
    lines: Iterable[bytes], stats: ParseStats | None = None
) -> Iterator[SlowLogEvent]:
    """Parse a slow query log into events, one entry at a time.

    Args:
        lines: The log's lines as bytes, with or without their line ends (a file opened in
            binary mode works). Lines are decoded as UTF-8, or Latin-1 where that fails.
        stats: Filled in as the log is read: events yielded, malformed entries skipped.

    Yields:
        One event per well-formed entry, in file order.

    Example:
        >>> log = [b"# Time: 2024-01-02T03:04:05Z\\n", b"# Query_time: 1.5  Lock_time: 0\\n",
        ...        b"SELECT 1;\\n"]
        >>> [(e.query, e.query_time, e.ts.isoformat()) for e in parse_slow_log(log)]
        [('SELECT 1', 1.5, '2024-01-02T03:04:05+00:00')]
    """
    parser = _Parser(stats if stats is not None else ParseStats())
    for number, raw in enumerate(lines, 1):
        event = parser.feed(number, _decode(raw))
        if event is not None:
            yield event
    event = parser.finish()
    if event is not None:
        yield event


def _decode(raw: bytes) -> str:
    """Decode one line, UTF-8 or else Latin-1 (which never fails), without its line end."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return text.rstrip("\r\n")


@dataclass(slots=True)
class _Entry:
    """The entry being read: its header values and statement lines."""

    line: int
    header: bool = False  # any '#' header line seen
    user_host: bool = False
    query_time: str | None = None
    values: dict[str, str | None] = field(default_factory=dict)
    user: str | None = None
    host: str | None = None
    explain: list[str] = field(default_factory=list)
    use_db: str | None = None
    set_ts: datetime | None = None
    meta: bool = False  # a use/SET timestamp line seen
    body: list[str] = field(default_factory=list)


class _Parser:
    """Line-by-line state machine; holds the current entry and what carries over."""

    __slots__ = ("_db", "_entry", "_stats", "_time")

    def __init__(self, stats: ParseStats) -> None:
        self._stats = stats
        self._entry: _Entry | None = None
        self._time: datetime | None = None  # last '# Time:', carried over
        self._db: str | None = None  # last event's database, carried over

    def feed(self, number: int, line: str) -> SlowLogEvent | None:
        """Take one line; return the event it completes, if any."""
        if line.startswith("#"):
            return self._header_line(number, line)
        if _is_banner(line):
            event = self._end_entry(restart=True)
            self._db = None  # a restarted server writes 'use db;' again
            return event
        self._body_line(number, line)
        return None

    def finish(self) -> SlowLogEvent | None:
        """Close the last entry at the end of the input."""
        return self._end_entry()

    def _header_line(self, number: int, line: str) -> SlowLogEvent | None:
        kind = _header_kind(line)
        entry = self._entry
        event = None
        if entry is None or self._starts_entry(entry, kind, line):
            event = self._end_entry()
            entry = self._entry = _Entry(number)
        elif entry.body:
            entry.body.append(line)  # a comment line inside a multi-line statement
            return None
        if kind == _ADMIN:
            entry.body.append(line[2:].strip())
            return event
        entry.header = True
        if kind == _TIME:
            self._read_time(entry, line)
        elif kind == _USER_HOST:
            self._read_user_host(entry, line)
        elif kind == _EXPLAIN:
            entry.explain.append(line[len("# explain:") :].strip())
        else:
            self._read_pairs(entry, line)
        return event

    @staticmethod
    def _starts_entry(entry: _Entry, kind: int, line: str) -> bool:
        """Tell whether a '#' line begins a new entry rather than continuing this one."""
        if entry.body or entry.meta:
            if kind in (_TIME, _USER_HOST, _QUERY_TIME):
                return True
            # A header whose first line is unusual still follows the ';' the server appends.
            return (
                bool(entry.body)
                and entry.body[-1].rstrip().endswith(";")
                and _PAIR_LINE_RE.match(line) is not None
            )
        if kind in (_TIME, _USER_HOST):
            return entry.user_host or entry.query_time is not None
        if kind == _QUERY_TIME:
            return entry.query_time is not None
        return False

    def _body_line(self, number: int, line: str) -> None:
        entry = self._entry
        if entry is None:
            if not line.strip():
                return
            entry = self._entry = _Entry(number)
        if not entry.body:
            if not line.strip():
                return
            if _read_meta(entry, line):
                return
        entry.body.append(line)

    def _read_time(self, entry: _Entry, line: str) -> None:
        parsed = _parse_time(line)
        if parsed is not None:
            self._time = parsed
        at = line.find("# User@Host:", 2)
        if at > 0:
            self._read_user_host(entry, line[at:])

    @staticmethod
    def _read_user_host(entry: _Entry, line: str) -> None:
        entry.user_host = True
        match = _USER_HOST_RE.match(line)
        if match is None:
            return
        user = (match["user"] or "").strip() or match["priv"].strip()
        entry.user = user or None
        ip = (match["ip"] or "").strip()
        entry.host = match["host"] or ip or None
        if ip:
            entry.values["ip"] = ip
        if match["id"]:
            entry.values["Thread_id"] = match["id"]

    @staticmethod
    def _read_pairs(entry: _Entry, line: str) -> None:
        for key, value in _PAIR_RE.findall(line):
            if key == "Query_time":
                entry.query_time = value
            entry.values[key] = value or None

    def _end_entry(self, restart: bool = False) -> SlowLogEvent | None:
        """Turn the current entry into an event, or record why it cannot be one."""
        entry = self._entry
        self._entry = None
        if entry is None:
            return None
        # The server writes 'use db;' only when the database changes, so even an entry that
        # is skipped tells the database of the ones after it.
        if entry.use_db is not None:
            self._db = entry.use_db
        elif "Schema" in entry.values:
            self._db = entry.values["Schema"] or None
        if not entry.header:
            if entry.body:
                self._stats.skipped.append((entry.line, NO_HEADER))
            return None
        if entry.query_time is None:
            if entry.user_host or entry.body or entry.values:
                self._stats.skipped.append((entry.line, NO_QUERY_TIME))
            return None
        query_time = _parse_seconds(entry.query_time)
        if query_time is None:
            self._stats.skipped.append((entry.line, BAD_QUERY_TIME))
            return None
        query = _statement_text(entry)
        if not query:
            self._stats.skipped.append((entry.line, RESTARTED if restart else NO_QUERY))
            return None
        return self._event(entry, query, query_time)

    def _event(self, entry: _Entry, query: str, query_time: float) -> SlowLogEvent:
        values = entry.values
        attributes = {k: _typed(k, v) for k, v in values.items() if k not in _FIELD_KEYS}
        if entry.explain:
            attributes["explain"] = "\n".join(entry.explain)
        self._stats.events += 1
        return SlowLogEvent(
            query=query,
            ts=entry.set_ts or self._time,
            query_time=query_time,
            lock_time=_parse_seconds(values.get("Lock_time")) or 0.0,
            rows_sent=_parse_count(values.get("Rows_sent")),
            rows_examined=_parse_count(values.get("Rows_examined")),
            rows_affected=_parse_count(values.get("Rows_affected")),
            db=self._db,
            user=entry.user,
            host=entry.host,
            line=entry.line,
            attributes=attributes,
        )


def _header_kind(line: str) -> int:
    """Tell which kind of '#' line this is."""
    prefix = _HEADER_PREFIXES.get(line[2:6])  # one lookup instead of five startswith()
    if prefix is not None and line.startswith(prefix[0]):
        return prefix[1]
    return _PAIRS


def _is_banner(line: str) -> bool:
    """Tell whether a line is part of the banner a starting server writes."""
    if ", Version: " in line or line.startswith(("Tcp", "TCP", "Time")):
        return _BANNER_RE.match(line) is not None
    return False


def _read_meta(entry: _Entry, line: str) -> bool:
    """Apply a 'use db;' or 'SET timestamp=N;' line the server writes before a statement.

    These are written in this exact case, so 'USE db' or 'set timestamp=1' from a client
    stay statements.
    """
    if line.startswith("use ") and line.rstrip().endswith(";"):
        entry.use_db = line[4:].rstrip().rstrip(";").strip().strip("`") or None
        entry.meta = True
        return True
    if _SET_META_RE.match(line):
        match = _TIMESTAMP_RE.search(line)
        if match is not None:
            entry.set_ts = _from_epoch(match.group(1))
        entry.meta = True
        return True
    return False


def _statement_text(entry: _Entry) -> str:
    """Return the statement, without the ';' the server appends; '' if there is none."""
    text = "\n".join(entry.body).strip()
    if text.endswith(";"):
        text = text[:-1].rstrip()
    if not text and entry.use_db is not None:
        # A bare 'use db;' is the statement USE itself (the server logs it as meta data).
        return f"use {entry.use_db}"
    return text


def _parse_time(line: str) -> datetime | None:
    """Parse a '# Time:' line; None if it holds no time this parser knows."""
    match = _TIME_RE.match(line)
    if match is None:
        return None
    try:
        if match["iso"]:
            parsed = datetime.fromisoformat(match["iso"].replace(" ", "T"))
            return parsed.replace(tzinfo=_offset(match["tz"]))
        return datetime(
            2000 + int(match["yy"]),
            int(match["mm"]),
            int(match["dd"]),
            int(match["h"]),
            int(match["mi"]),
            int(match["s"]),
            int((match["frac"] or "0")[:6].ljust(6, "0")),
            tzinfo=UTC,
        )
    except ValueError:
        return None


def _offset(text: str | None) -> timezone:
    """Return the time zone of an ISO 8601 suffix ('Z', '+01:00', '-0530'); UTC if none."""
    if not text or text == "Z":
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))


def _from_epoch(text: str) -> datetime | None:
    """Turn 'SET timestamp=N' seconds into a UTC datetime; None if out of range."""
    try:
        return datetime.fromtimestamp(float(text), tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None


def _parse_seconds(text: str | None) -> float | None:
    """Parse a duration in seconds; None unless it is a finite, non-negative number."""
    if text is None or not (_FLOAT_RE.fullmatch(text) or _INT_RE.fullmatch(text)):
        return None
    value = float(text)
    return value if math.isfinite(value) and value >= 0 else None


def _parse_count(text: str | None) -> int | None:
    """Parse a row count; None if absent or not an integer."""
    if text is None or not _INT_RE.fullmatch(text):
        return None
    return int(text)


def _typed(key: str, value: str | None) -> AttributeValue:
    """Type a header value: times float, counts int, Yes/No bool, anything else str."""
    if value is None:
        return ""
    if key in _STRING_KEYS:
        return value
    if key.endswith(_TIME_SUFFIXES):
        seconds = _parse_seconds(value)
        return value if seconds is None else seconds
    flag = _BOOLEANS.get(value)
    if flag is not None:
        return flag
    if value.isdigit() or _INT_RE.fullmatch(value):
        return int(value)
    if _FLOAT_RE.fullmatch(value):
        return float(value)
    return value
