"""The slow-log parser reads what MariaDB 10.11 writes, at every log_slow_verbosity.

For each value MariaDB accepts (and all of them at once) a throw-away server runs the script of
``tests/tools/capture_mariadb_slowlogs.py``: two users, three connections, TCP and socket,
``USE`` and ``COM_INIT_DB``, multi-line statements, bytes that are not UTF-8, a slow
``SLEEP(0.2)``, full scans, filesorts and temporary tables, an error, warnings, a procedure,
protocol commands (ping, change of database, quit). The parsed log must hold one event per
statement sent, nothing skipped, each with the text sent, the database it ran in, its user and
host, the server's counts, and the attributes that verbosity adds, typed.

The same captures are committed as ``tests/analysis/data/slowlogs/mariadb_10_11_verbosity_*``
so that ``tests/analysis/test_slowlog.py`` covers them without a server; the last test here
checks that they still match the script.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from quanta.analysis.slowlog import ParseStats, SlowLogEvent, parse_slow_log
from tests.fixtures.servers import OwnMariaDB
from tests.tools.capture_mariadb_slowlogs import (
    CLIENTS,
    DATA,
    FILESORT,
    FIXTURE_PREFIX,
    FULL_JOIN,
    FULL_SCAN,
    SCRIPT,
    TMP_TABLE,
    VERBOSITIES,
    Sent,
    capture,
    capturing_server,
)

services = pytest.mark.services

# What each verbosity adds to an entry, by the names used below.
QUERY_PLAN, ENGINE, EXPLAIN, WARNINGS = "query_plan", "engine", "explain", "warnings"
EVERYTHING = (QUERY_PLAN, ENGINE, EXPLAIN, WARNINGS)
SECTIONS = {
    "empty": (),
    "query_plan": (QUERY_PLAN,),
    "innodb": (ENGINE,),  # since 10.6.15 a synonym of 'engine'
    "engine": (ENGINE,),
    "explain": (EXPLAIN,),
    "warnings": (WARNINGS,),
    "full": EVERYTHING,
    "all": EVERYTHING,
}

# Attribute names and types, by the line that carries them.
ALWAYS = {"Thread_id": int, "QC_hit": bool, "Bytes_sent": int}
PLAN = {
    FULL_SCAN: bool,
    FULL_JOIN: bool,
    TMP_TABLE: bool,
    "Tmp_table_on_disk": bool,
    FILESORT: bool,
    "Filesort_on_disk": bool,
    "Merge_passes": int,
    "Priority_queue": bool,
}
TMP_TABLES = {"Tmp_tables": int, "Tmp_disk_tables": int, "Tmp_table_sizes": int}
PAGES = {
    "Pages_accessed": int,
    "Pages_read": int,
    "Pages_prefetched": int,
    "Pages_updated": int,
    "Old_rows_read": int,
    "Pages_read_time": float,
    "Engine_time": float,
}
EXPLAIN_HEADER = (
    "id\tselect_type\ttable\ttype\tpossible_keys\tkey\tkey_len\tref\trows\tr_rows\tfiltered"
    "\tr_filtered\tExtra"
)


@dataclass(frozen=True)
class Capture:
    """One run of the script: what it sent, and what the parser made of the log."""

    sent: list[Sent]
    events: list[SlowLogEvent]
    stats: ParseStats
    started: datetime
    finished: datetime


@pytest.fixture(scope="module")
def own_mariadb() -> Iterator[OwnMariaDB]:
    """A MariaDB of this module's own: its slow logs hold only the script's statements."""
    with capturing_server() as own:
        yield own


@pytest.fixture(scope="module")
def captures(
    own_mariadb: OwnMariaDB, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Capture]:
    """The script captured at every verbosity, each in a slow log of its own."""
    directory = tmp_path_factory.mktemp("slowlogs")
    result = {}
    for name, verbosity in VERBOSITIES.items():
        log = directory / f"{name}.log"
        started = datetime.now(UTC).replace(microsecond=0)
        sent = capture(own_mariadb, verbosity, log)
        finished = datetime.now(UTC)
        stats = ParseStats()
        with log.open("rb") as lines:
            events = list(parse_slow_log(lines, stats))
        result[name] = Capture(sent, in_sent_order(sent, events), stats, started, finished)
    return result


def in_sent_order(sent: list[Sent], events: list[SlowLogEvent]) -> list[SlowLogEvent]:
    """The events in the order their statements were sent.

    MariaDB answers the client before it writes the statement to the slow log, so under load
    the next statement, sent on another connection, can be logged first. Within one
    connection the order is fixed: each client's statements are matched to the one thread
    whose events are exactly those statements. If no such pairing exists the events are
    returned as logged, for the assertions to show the difference.
    """
    by_thread: dict[object, list[SlowLogEvent]] = defaultdict(list)
    for event in events:
        by_thread[event.attributes.get("Thread_id")].append(event)
    by_client: dict[str, list[str]] = defaultdict(list)
    for statement in sent:
        by_client[statement.step.client].append(statement.query)
    threads = {}
    for client, queries in by_client.items():
        matching = [t for t, logged in by_thread.items() if [e.query for e in logged] == queries]
        if len(matching) != 1:
            return events
        threads[client] = iter(by_thread[matching[0]])
    return [next(threads[statement.step.client]) for statement in sent]


@services
def test_every_verbosity_the_server_accepts_is_captured(own_mariadb: OwnMariaDB) -> None:
    with contextlib.closing(own_mariadb.server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute("SELECT VERSION()")
        (version,) = cursor.fetchone() or ("",)
        cursor.execute("SET SESSION log_slow_verbosity = 'all'")
        cursor.execute("SELECT @@session.log_slow_verbosity")
        (everything,) = cursor.fetchone() or ("",)
    assert version.startswith("10.11.")
    assert set(everything.split(",")) == set(VERBOSITIES["all"].split(","))
    assert set(VERBOSITIES) - {"empty", "all"} == set(everything.split(","))


@services
@pytest.mark.parametrize("name", VERBOSITIES)
def test_one_event_per_statement_nothing_skipped(name: str, captures: dict[str, Capture]) -> None:
    run = captures[name]
    # Protocol commands (ping, change of database, quit) are not statements: MariaDB logs none.
    assert len(run.sent) == sum(step.sql is not None for step in SCRIPT) + len(CLIENTS)
    assert run.stats.skipped == []
    assert run.stats.events == len(run.events) == len(run.sent)
    assert [e.query for e in run.events] == [s.query for s in run.sent]
    assert not any(e.query.startswith("administrator command") for e in run.events)


@services
@pytest.mark.parametrize("name", VERBOSITIES)
def test_database_user_host_and_counts(name: str, captures: dict[str, Capture]) -> None:
    run = captures[name]
    assert [(e.db, e.user, e.host) for e in run.events] == [
        (s.db, s.user, s.host) for s in run.sent
    ]
    assert [(e.rows_sent, e.rows_affected) for e in run.events] == [
        (s.rows_sent, s.step.rows_affected) for s in run.sent
    ]
    assert all(isinstance(e.rows_examined, int) and e.rows_examined >= 0 for e in run.events)
    # One connection, one Thread_id; three connections, three.
    threads = {
        (s.step.client, e.attributes["Thread_id"])
        for s, e in zip(run.sent, run.events, strict=True)
    }
    assert len(threads) == len({client for client, _ in threads}) == len(CLIENTS)


@services
@pytest.mark.parametrize("name", VERBOSITIES)
def test_times(name: str, captures: dict[str, Capture]) -> None:
    run = captures[name]
    # SET timestamp has whole seconds: the statement started within the capture's seconds.
    assert all(
        e.ts is not None and run.started <= e.ts <= run.finished + timedelta(seconds=1)
        for e in run.events
    )
    assert all(e.query_time >= 0 and e.lock_time >= 0 for e in run.events)
    (sleep,) = [e for e in run.events if e.query == "SELECT SLEEP(0.2)"]
    assert 0.2 <= sleep.query_time < 5


@services
@pytest.mark.parametrize("name", VERBOSITIES)
def test_attributes_of_each_verbosity(name: str, captures: dict[str, Capture]) -> None:
    run = captures[name]
    sections = SECTIONS[name]
    for sent, event in zip(run.sent, run.events, strict=True):
        step = sent.step
        if step.warnings:
            continue  # test_warnings_are_kept
        expected = dict(ALWAYS)
        if not CLIENTS[step.client].unix_socket:
            expected["ip"] = str
        if QUERY_PLAN in sections and step.plan:
            expected |= PLAN
            if TMP_TABLE in step.plan:
                expected |= TMP_TABLES
        if ENGINE in sections and step.pages:
            expected |= PAGES
        if EXPLAIN in sections and step.explain is not None:
            expected["explain"] = str
        attributes = event.attributes
        where = f"{event.query!r} at line {event.line}"
        assert {k: type(v) for k, v in attributes.items()} == expected, where
        assert attributes["QC_hit"] is False, where
        assert attributes.get("ip", "127.0.0.1") == "127.0.0.1", where
        if PLAN.keys() <= attributes.keys():
            flags = {flag for flag, kind in PLAN.items() if kind is bool and attributes[flag]}
            assert flags == set(step.plan), where
        if "explain" in attributes:
            header, first_row, *_ = str(attributes["explain"]).split("\n")
            assert header == EXPLAIN_HEADER, where
            assert first_row.split("\t")[2] == step.explain, where


@services
@pytest.mark.parametrize("name", VERBOSITIES)
def test_warnings_are_kept(name: str, captures: dict[str, Capture]) -> None:
    # MariaDB writes '# Warnings' and one '# <Level> <code> <message>' line per warning. They
    # belong under one attribute, as the EXPLAIN lines do; none of their words is a key.
    run = captures[name]
    with_warnings = [(s, e) for s, e in zip(run.sent, run.events, strict=True) if s.step.warnings]
    assert len(with_warnings) == 3
    for sent, event in with_warnings:
        expected = "\n".join(sent.step.warnings) if WARNINGS in SECTIONS[name] else None
        assert event.attributes.get("warnings") == expected, event.query
        assert "value" not in event.attributes, event.query


@services
@pytest.mark.parametrize("name", VERBOSITIES)
def test_committed_capture_matches_the_script(name: str, captures: dict[str, Capture]) -> None:
    log = DATA / f"{FIXTURE_PREFIX}{name}.log"
    stats = ParseStats()
    with log.open("rb") as lines:
        events = list(parse_slow_log(lines, stats))
    assert stats.skipped == []
    fresh = captures[name].events
    assert [(e.query, e.db, e.user, e.host, e.rows_sent, e.rows_affected) for e in events] == [
        (e.query, e.db, e.user, e.host, e.rows_sent, e.rows_affected) for e in fresh
    ], f"{log.name} is older than the script: recapture it (see its README)"


def test_fixture_files_exist() -> None:
    # Offline half of the check above: every verbosity has its committed log and events.
    names = {path.name for path in Path(DATA).glob(f"{FIXTURE_PREFIX}*")}
    assert names == {
        f"{FIXTURE_PREFIX}{name}{suffix}"
        for name in VERBOSITIES
        for suffix in (".log", ".expected.json")
    }
