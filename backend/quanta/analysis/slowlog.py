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

:func:`read_slow_log` gives the same events from a file read in large blocks, several times
faster: an entry of the usual shape is read in C (``_slowlog.PlainReader``, where built) or
by one regular expression instead of line by line, and anything unusual goes through the
same line-by-line state machine. Given a :class:`ColumnSink`, the C reader hands the usual
entries' fields over as columns instead of event objects. Tests check that both functions
agree on every sample and on random input, with and without the C reader.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

from quanta.analysis import native

if TYPE_CHECKING:
    from quanta.analysis import _slowlog

__all__ = [
    "BAD_QUERY_TIME",
    "NO_HEADER",
    "NO_QUERY",
    "NO_QUERY_TIME",
    "RESTARTED",
    "AttributeValue",
    "ParseStats",
    "ReadableBytes",
    "SlowLogEvent",
    "parse_slow_log",
    "read_slow_log",
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
        database: The database in effect after the last line, once the whole log is read
            (what the next part of the log starts with).
        lines: Lines read, once the whole log is read.
    """

    events: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)
    database: str | None = None
    lines: int = 0


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
_PAIRS, _TIME, _USER_HOST, _QUERY_TIME, _ADMIN, _EXPLAIN, _WARNINGS = range(7)
_HEADER_PREFIXES = {
    prefix[2:6]: (prefix, kind)
    for prefix, kind in (
        ("# Time:", _TIME),
        ("# User@Host:", _USER_HOST),
        ("# Query_time:", _QUERY_TIME),
        ("# administrator command:", _ADMIN),
        ("# explain:", _EXPLAIN),
        ("# Warnings", _WARNINGS),
    )
}
# Values that look numeric but are identifiers.
# MariaDB (log_slow_verbosity=warnings) lists each warning after '# Warnings'.
_WARNING_LINE_RE = re.compile(r"# (?:Note|Warning|Error) \d+ ")
_STRING_KEYS = frozenset(("InnoDB_trx_id", "Log_slow_rate_type"))
_TIME_SUFFIXES = ("_time", "_wait")
# MariaDB writes these (log_slow_verbosity=innodb/engine) in milliseconds; typed as seconds.
_MILLISECOND_KEYS = frozenset(("Pages_read_time", "Engine_time"))
_BOOLEANS = {"Yes": True, "No": False, "YES": True, "NO": False, "yes": True, "no": False}
_FIELD_KEYS = frozenset(
    ("Query_time", "Lock_time", "Rows_sent", "Rows_examined", "Rows_affected", "Schema")
)

# The usual entry, whole: optional Time and User@Host lines, other header lines around the
# Query_time line, use/SET timestamp lines, then a statement none of whose lines starts with
# '#' or looks like a server banner, ending where the next entry's header begins. Possessive
# quantifiers: a line is never given back to a later part, so the match means exactly what
# the line-by-line parser would read (anything else fails and takes that path).
_PLAIN_HEADER_LINE = (
    r"# (?!Time:|User@Host:|Query_time:|explain:|administrator command:|Warnings\n)[^\n]*\n"
)
_META_LINE = r"(?:use [^\n]*;|SET (?:last_insert_id|insert_id|timestamp)=\S*;)[^\S\n]*\n|[^\S\n]*\n"
_BODY_LINE = r"(?!\#|Tcp|TCP|Time|[^\n]*, Version: )[^\n]*\n"
# The common MySQL header lines have their values captured here (ASCII digits only), so that
# they need no further parsing; any other form goes through the generic groups.
_ISO_TIME_LINE = (
    r"\# Time:[ \t]+(?P<iso>[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
    r"(?:\.[0-9]{1,6})?)Z[^\S\n]*\n"
)
_PLAIN_QUERY_TIME_LINE = (
    r"\# Query_time:[ \t]+(?P<qt>[0-9]+\.[0-9]+)[ \t]+Lock_time:[ \t]+(?P<lt>[0-9]+\.[0-9]+)"
    r"[ \t]+Rows_sent:[ \t]+(?P<rs>[0-9]+)[ \t]+Rows_examined:[ \t]+(?P<rx>[0-9]+)[ \t]*\n"
    rf"(?!{_PLAIN_HEADER_LINE})"
)
_ENTRY_PATTERN = (
    rf"(?:{_ISO_TIME_LINE}|(?P<time>\# Time:[^\n\#]*\n))?+"
    r"(?P<user_host>\# User@Host:[^\n]*\n)?+"
    rf"(?:{_PLAIN_QUERY_TIME_LINE}"
    rf"|(?P<pairs>(?:{_PLAIN_HEADER_LINE})*+\# Query_time:[^\n]*\n(?:{_PLAIN_HEADER_LINE})*+))"
    rf"(?P<meta>(?:{_META_LINE})*+)"
    rf"(?P<body>(?![^\S\n]*\n){_BODY_LINE}(?:{_BODY_LINE})*+)"
)
_NEXT_ENTRY = r"(?=\# (?:Time|User@Host|Query_time):"
_ENTRY_RE = re.compile(_ENTRY_PATTERN + _NEXT_ENTRY + ")")
_LAST_ENTRY_RE = re.compile(_ENTRY_PATTERN + _NEXT_ENTRY + r"|\Z)")
# Distinct User@Host lines remembered by one parser, and by _user_host and _use_database.
_CACHE_SIZE = 4096
# The usual meta lines, '[use db;] SET timestamp=N;': anything else takes the general rules.
_PLAIN_META_RE = re.compile(r"(?:(use [^\n]*;)\n)?SET timestamp=([0-9]+);\n")
_PLAIN_QUERY_TIME_KEYS = ("Query_time", "Lock_time", "Rows_sent", "Rows_examined")
_TRAILING_CR_RE = re.compile(r"\r+(?=\n|\Z)")
# The C reader of the usual entry (quanta.analysis.native): several times faster than
# _ENTRY_RE and _read_whole_entry, it stops at anything else, which this module reads.
# Every test comparing read_slow_log with parse_slow_log runs it, and tests compare the
# block reader with and without it.
PlainReader: type[_slowlog.PlainReader] | None = (
    native.slowlog.PlainReader if native.slowlog is not None else None
)
BLOCK_SIZE = 1 << 20
# The fast path looks at an entry only when this much text (or the end of the file) follows,
# so that a match never stops at the end of a block; longer entries are read line by line.
_FAST_PATH_LOOKAHEAD = 1 << 16


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
    number = 0
    for number, raw in enumerate(lines, 1):
        event = parser.feed(number, _decode(raw))
        if event is not None:
            yield event
    event = parser.finish(lines=number)
    if event is not None:
        yield event


SINK_COLUMNS = (
    "query",
    "ts",
    "query_time",
    "lock_time",
    "rows_sent",
    "rows_examined",
    "rows_affected",
    "db",
    "user",
    "host",
)
"""The event fields a :class:`ColumnSink` receives, in the order of its columns."""


class ColumnSink(Protocol):
    """Takes the events of the usual shape as column values, grouped by statement shape.

    A group is a list of one list per :data:`SINK_COLUMNS` field, then a dict of attribute
    columns. For each such event, the C reader appends its :data:`SINK_COLUMNS` values to the
    columns found in ``groups`` under the statement's literal mask
    (``fingerprinter.literal_mask``), or else to those ``classify(query)`` returns (which may
    add them to ``groups``), and each numeric or Yes/No attribute of its header lines
    (``Bytes_sent``, ``Full_scan`` ...; not the ``ip`` and ``Thread_id`` of its User@Host
    line, nor text) to the dict's list under that attribute's name. A group without that
    dict takes only entries without such attributes: the others are yielded as events (read
    in C all the same). A checksum query of percona-toolkit, and a statement whose text is
    not ASCII, is always classified.
    """

    @property
    def groups(self) -> dict[str, list[Any]]:
        """Columns by literal mask."""
        ...

    def classify(self, query: str) -> list[Any]:
        """The columns of a statement that ``groups`` does not know."""
        ...

    def room(self) -> int:
        """How many more events the sink takes before :meth:`filled` must be called."""
        ...

    def filled(self, count: int) -> None:
        """Called after each run of ``count`` events given to the columns: a chance to fold
        what they hold."""
        ...


class ReadableBytes(Protocol):
    """What :func:`read_slow_log` reads from: a binary file, or anything with its ``read``."""

    def read(self, size: int, /) -> bytes:
        """Return up to ``size`` bytes; ``b""`` at the end."""
        ...


def read_slow_log(
    handle: ReadableBytes,
    stats: ParseStats | None = None,
    block_size: int = BLOCK_SIZE,
    database: str | None = None,
    sink: ColumnSink | None = None,
) -> Iterator[SlowLogEvent]:
    """Parse a slow log read from a binary file in blocks; the events of :func:`parse_slow_log`.

    Args:
        handle: The log, opened in binary mode, read from its current position to its end.
        stats: Filled in as the log is read: events yielded, malformed entries skipped.
        block_size: Bytes read at a time; memory use is a few times this.
        database: The database in effect where reading starts, for a part of a log; events
            get it until the log names another.
        sink: Where the C reader puts the events of the usual shape, as column values,
            instead of yielding them (see :class:`ColumnSink`); the others are yielded. The
            sink's columns are filled before the next event is yielded, so the consumer
            sees every event in file order.

    Yields:
        One event per well-formed entry, in file order (but those given to ``sink``).

    Example:
        >>> import io
        >>> log = io.BytesIO(b"# Query_time: 1.5  Lock_time: 0\\nuse shop;\\nSELECT 1;\\n")
        >>> [(e.query, e.db) for e in read_slow_log(log)]
        [('SELECT 1', 'shop')]
    """
    parser = _Parser(stats if stats is not None else ParseStats())
    parser.database = database
    yield from parser.read_blocks(_text_blocks(handle, block_size), sink)


def _text_blocks(handle: ReadableBytes, block_size: int) -> Iterator[tuple[str, bool]]:
    """Yield ``(text, is_last)``: the file decoded in blocks of whole lines, CRs dropped."""
    rest = b""
    while True:
        raw = handle.read(block_size)
        if not raw:
            yield _decode_block(rest), True
            return
        data = rest + raw
        cut = data.rfind(b"\n") + 1
        rest = data[cut:]
        if cut:
            yield _decode_block(data[:cut]), False


def _decode_block(data: bytes) -> str:
    """Decode whole lines as :func:`_decode` decodes each one, line ends kept as ``\\n``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        # Lines split at b"\\n" never cut a UTF-8 sequence, so line by line gives the same.
        text = "\n".join(_decode_keeping_cr(line) for line in data.split(b"\n"))
    if "\r" in text:
        text = _TRAILING_CR_RE.sub("", text)
    return text


def _decode_keeping_cr(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


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
    warnings: list[str] | None = None  # after MariaDB's '# Warnings' line
    use_db: str | None = None
    set_ts: datetime | None = None
    meta: bool = False  # a use/SET timestamp line seen
    body: list[str] = field(default_factory=list)


class _Parser:
    """Line-by-line state machine; holds the current entry and what carries over."""

    __slots__ = ("_clock", "_connections", "_entry", "_plain_reader", "_stats", "database")

    def __init__(self, stats: ParseStats) -> None:
        self._stats = stats
        self._clock = _Clock()
        self._connections: dict[str, tuple[str | None, str | None, dict[str, AttributeValue]]] = {}
        self._entry: _Entry | None = None
        self.database: str | None = None  # last event's database, carried over
        self._plain_reader = (
            None
            if PlainReader is None
            else PlainReader(SlowLogEvent, self._connections, self._connection, _from_epoch, _typed)
        )

    def feed(self, number: int, line: str) -> SlowLogEvent | None:
        """Take one line; return the event it completes, if any."""
        if line.startswith("#"):
            return self._header_line(number, line)
        if _is_banner(line):
            event = self._end_entry(restart=True)
            self.database = None  # a restarted server writes 'use db;' again
            return event
        self._body_line(number, line)
        return None

    def read_blocks(
        self, blocks: Iterable[tuple[str, bool]], sink: ColumnSink | None = None
    ) -> Iterator[SlowLogEvent]:
        """Parse decoded blocks of whole lines (see :func:`_text_blocks`)."""
        text, pos, number = "", 0, 1
        for block, is_last in blocks:
            text = text[pos:] + block
            pos = 0
            limit = len(text) if is_last else len(text) - _FAST_PATH_LOOKAHEAD
            entry_re = _LAST_ENTRY_RE if is_last else _ENTRY_RE
            while pos < limit:
                if self._entry is None:
                    if self._plain_reader is not None:
                        room = sink.room() if sink is not None else 0
                        events, count, end, number, self.database, last_time = (
                            self._plain_reader.scan(
                                text, pos, limit, is_last, number, self.database, sink, room
                            )
                        )
                        if count:
                            if last_time is None:
                                pass
                            elif last_time.startswith("#"):  # '# Time: YYMMDD H:MM:SS'
                                self._clock.set(_parse_time(last_time))
                            else:
                                self._clock.set_iso(last_time)
                            self._stats.events += count
                            if sink is not None and count > len(events):
                                # The events are not the sink's: the consumer takes them.
                                sink.filled(count - len(events))
                            yield from events
                            pos = end
                            continue
                    match = entry_re.match(text, pos)
                    if match is not None:
                        event = self._read_whole_entry(text, match, number)
                        if event is not None:
                            yield event
                        number += text.count("\n", pos, match.end())
                        pos = match.end()
                        continue
                end = text.find("\n", pos)
                end = len(text) if end < 0 else end
                event = self.feed(number, text[pos:end])
                if event is not None:
                    yield event
                    if self._entry is not None and self._entry.line == number:
                        # This line began the next entry: read it again on the fast path.
                        self._entry = None
                        continue
                pos, number = end + 1, number + 1
        event = self.finish(lines=number - 1)
        if event is not None:
            yield event

    def _read_whole_entry(
        self, text: str, match: re.Match[str], number: int
    ) -> SlowLogEvent | None:
        """Turn an entry matched by ``_ENTRY_RE`` into the event :meth:`feed` would give."""
        iso, time_line, user_host, query_time, meta, body = match.group(
            "iso", "time", "user_host", "qt", "meta", "body"
        )
        if iso is not None:
            self._clock.set_iso(iso)
        elif time_line is not None:
            self._clock.set(_parse_time(time_line))
        query = body.strip()
        if query.endswith(";"):
            query = query[:-1].rstrip()
        plain_meta = _PLAIN_META_RE.fullmatch(meta) if meta else None
        if query_time is None or not query or (meta and plain_meta is None):
            return self._read_unusual_entry(match, number)
        set_ts = None
        if plain_meta is not None:
            use_line, stamp = plain_meta.groups()
            if use_line:
                # A 'use' line naming no database changes nothing, as in _carry_database.
                self.database = _use_database(use_line) or self.database
            set_ts = self._clock.epoch_time(stamp)
        user = host = None
        attributes: dict[str, AttributeValue] = {}
        if user_host is not None:
            user, host, connection = self._connections.get(user_host) or self._connection(user_host)
            attributes = connection.copy()
        lock_time, rows_sent, rows_examined = match.group("lt", "rs", "rx")
        self._stats.events += 1
        # Positional arguments: half the cost of keywords, and this runs once per event.
        return SlowLogEvent(
            query,
            set_ts or self._clock.time,
            float(query_time),
            float(lock_time),
            int(rows_sent),
            int(rows_examined),
            None,
            self.database,
            user,
            host,
            number,
            attributes,
        )

    def _connection(self, line: str) -> tuple[str | None, str | None, dict[str, AttributeValue]]:
        """User, host and attributes (ip, Thread_id) of a '# User@Host:' line, remembered:
        a log repeats the lines of its few connections."""
        if len(self._connections) >= _CACHE_SIZE:
            self._connections.clear()
        user, host, ip, thread_id = _user_host(line)
        attributes: dict[str, AttributeValue] = {}
        if ip:
            attributes["ip"] = _typed("ip", ip)
        if thread_id:
            attributes["Thread_id"] = _typed("Thread_id", thread_id)
        parsed = self._connections[line] = (user, host, attributes)
        return parsed

    def _read_unusual_entry(self, match: re.Match[str], number: int) -> SlowLogEvent | None:
        """Read a matched entry whose header or meta lines need the general rules."""
        entry = self._entry = _Entry(number, header=True)
        if match["user_host"] is not None:
            self._read_user_host(entry, match["user_host"])
        if match["qt"] is not None:
            plain = match.group("qt", "lt", "rs", "rx")
            entry.values.update(zip(_PLAIN_QUERY_TIME_KEYS, plain, strict=True))
            entry.query_time = match["qt"]
        else:
            self._read_pairs(entry, match["pairs"])
        for line in match["meta"].split("\n"):
            _read_meta(entry, line, self._clock)
        entry.body.append(match["body"].rstrip("\n"))
        return self._end_entry()

    def finish(self, lines: int) -> SlowLogEvent | None:
        """Close the last entry at the end of the input, after ``lines`` lines."""
        event = self._end_entry()
        self._stats.database = self.database
        self._stats.lines = lines
        return event

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
        elif kind == _WARNINGS and line == "# Warnings":
            entry.warnings = []
        elif entry.warnings is not None and _WARNING_LINE_RE.match(line):
            entry.warnings.append(line[2:].rstrip())
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
            if _read_meta(entry, line, self._clock):
                return
        entry.body.append(line)

    def _read_time(self, entry: _Entry, line: str) -> None:
        parsed = _parse_time(line)
        if parsed is not None:
            self._clock.set(parsed)
        at = line.find("# User@Host:", 2)
        if at > 0:
            self._read_user_host(entry, line[at:])

    @staticmethod
    def _read_user_host(entry: _Entry, line: str) -> None:
        entry.user_host = True
        entry.user, entry.host, ip, thread_id = _user_host(line)
        if ip:
            entry.values["ip"] = ip
        if thread_id:
            entry.values["Thread_id"] = thread_id

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
        self._carry_database(entry)
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

    def _carry_database(self, entry: _Entry) -> None:
        # The server writes 'use db;' only when the database changes, so even an entry that
        # is skipped tells the database of the ones after it.
        if entry.use_db is not None:
            self.database = entry.use_db
        elif "Schema" in entry.values:
            self.database = entry.values["Schema"] or None

    def _event(self, entry: _Entry, query: str, query_time: float) -> SlowLogEvent:
        values = entry.values
        attributes = {k: _typed(k, v) for k, v in values.items() if k not in _FIELD_KEYS}
        if entry.warnings:
            attributes["warnings"] = "\n".join(entry.warnings)
        if entry.explain:
            attributes["explain"] = "\n".join(entry.explain)
        self._stats.events += 1
        return SlowLogEvent(
            query=query,
            ts=entry.set_ts or self._clock.time,
            query_time=query_time,
            lock_time=_parse_seconds(values.get("Lock_time")) or 0.0,
            rows_sent=_parse_count(values.get("Rows_sent")),
            rows_examined=_parse_count(values.get("Rows_examined")),
            rows_affected=_parse_count(values.get("Rows_affected")),
            db=self.database,
            user=entry.user,
            host=entry.host,
            line=entry.line,
            attributes=attributes,
        )


class _Clock:
    """The last '# Time:' (carried over to entries without one) and 'SET timestamp' values.

    Building a datetime costs more than the rest of an entry, and MySQL writes both lines for
    every entry, so the time of a '# Time:' line is built only when an entry without 'SET
    timestamp' needs it, and the datetime of the last second seen is reused.
    """

    __slots__ = ("_epoch", "_epoch_time", "_fraction", "_second", "_second_time", "_time")

    def __init__(self) -> None:
        self._time: datetime | None = None
        self._second = self._fraction = self._epoch = ""
        self._second_time: datetime | None = None
        self._epoch_time: datetime | None = None

    @property
    def time(self) -> datetime | None:
        """The time carried over: the last '# Time:' that held a valid time."""
        if self._fraction and self._time is not None:  # _time is the fraction's second
            fraction, self._fraction = self._fraction, ""
            self._time = self._time.replace(microsecond=int(fraction.ljust(6, "0")))
        return self._time

    def set(self, time: datetime | None) -> None:
        """Take a '# Time:' line's time; None (unreadable) keeps the previous one."""
        if time is not None:
            self._time, self._fraction = time, ""

    def set_iso(self, iso: str) -> None:
        """Take 'YYYY-MM-DDTHH:MM:SS[.f]' (1 to 6 fraction digits, UTC) from a '# Time:'."""
        second, _, fraction = iso.partition(".")
        if second != self._second:
            self._second = second
            try:
                self._second_time = datetime.fromisoformat(second + "+00:00")
            except ValueError:
                self._second_time = None
        if self._second_time is not None:  # the fraction cannot make the time invalid
            self._time, self._fraction = self._second_time, fraction

    def epoch_time(self, stamp: str) -> datetime | None:
        """:func:`_from_epoch` of a 'SET timestamp=N' value, remembering the last one."""
        if stamp != self._epoch:
            self._epoch = stamp
            self._epoch_time = _from_epoch(stamp)
        return self._epoch_time


def _header_kind(line: str) -> int:
    """Tell which kind of '#' line this is."""
    prefix = _HEADER_PREFIXES.get(line[2:6])  # one lookup instead of five startswith()
    if prefix is not None and line.startswith(prefix[0]):
        return prefix[1]
    return _PAIRS


@lru_cache(maxsize=_CACHE_SIZE)
def _user_host(line: str) -> tuple[str | None, str | None, str, str | None]:
    """Read a '# User@Host:' line: user, host (its IP when it has no name), IP, thread id.

    Remembered: a log repeats the lines of its few connections, and the events of one then
    share their strings (a statement held by the agent's minute folder costs ~110 bytes less).
    """
    match = _USER_HOST_RE.match(line)
    if match is None:
        return None, None, "", None
    priv, user, host, ip, thread_id = match.group("priv", "user", "host", "ip", "id")
    user = (user or "").strip() or priv.strip()
    ip = (ip or "").strip()
    return user or None, host or ip or None, ip, thread_id


@lru_cache(maxsize=_CACHE_SIZE)
def _use_database(line: str) -> str | None:
    """The database of a 'use db;' line the server writes (remembered, as _user_host)."""
    return line[4:].rstrip().rstrip(";").strip().strip("`") or None


def _is_banner(line: str) -> bool:
    """Tell whether a line is part of the banner a starting server writes."""
    if ", Version: " in line or line.startswith(("Tcp", "TCP", "Time")):
        return _BANNER_RE.match(line) is not None
    return False


def _read_meta(entry: _Entry, line: str, clock: _Clock) -> bool:
    """Apply a 'use db;' or 'SET timestamp=N;' line the server writes before a statement.

    These are written in this exact case, so 'USE db' or 'set timestamp=1' from a client
    stay statements.
    """
    if line.startswith("use ") and line.rstrip().endswith(";"):
        entry.use_db = _use_database(line)
        entry.meta = True
        return True
    if _SET_META_RE.match(line):
        match = _TIMESTAMP_RE.search(line)
        if match is not None:
            entry.set_ts = clock.epoch_time(match.group(1))
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
        if seconds is not None and key in _MILLISECOND_KEYS:
            seconds /= 1000
        return value if seconds is None else seconds
    flag = _BOOLEANS.get(value)
    if flag is not None:
        return flag
    if value.isdigit() or _INT_RE.fullmatch(value):
        return int(value)
    if _FLOAT_RE.fullmatch(value):
        return float(value)
    return value
