"""Profiles of a SELECT on an execution target: N runs, their stages, one ranked profile.

A profile executes the example, so it runs only on the instance's execution target (a
replica or sandbox an admin configured), never on the monitored server itself; its session
is a TargetConnection, which verifies the target read-only as it opens.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from quanta.analysis.profile import (
    Profile,
    ProfileRun,
    Stage,
    rank_profile,
    stages_from_performance_schema,
    stages_from_show_profile,
)
from quanta.analysis.sqlkind import classify_statement
from quanta.monitored.connection import GuardedConnection
from quanta.monitored.errors import FeatureUnavailable, StatementRefused
from quanta.monitored.objects import ObjectRefused, check_reached
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.target import TargetConnection

__all__ = ["ProfilingMethod", "profile", "profile_on", "profiling_method"]

_ENABLED = "YES"
_COMPARED_CHARS = 256


class ProfilingMethod(enum.StrEnum):
    """Where the stages of a run are read from."""

    SHOW_PROFILE = "show_profile"
    PERFORMANCE_SCHEMA = "performance_schema"


@dataclass(frozen=True, slots=True)
class _Target:
    statement: str
    thread_id: int | None = None


def profile(
    target: ConnectionOptions,
    sql: str,
    *,
    runs: int | None = None,
    settings: MonitoredSettings | None = None,
    truncated: bool = False,
    method: ProfilingMethod | None = None,
) -> Profile:
    """Run a SELECT ``runs`` times with profiling and rank where its time goes.

    Each run is one read-only transaction, rolled back, in which what the example reaches
    is checked first (views, generated columns: :mod:`quanta.monitored.objects`), with the
    limits written into the statement (MariaDB ``SET STATEMENT max_statement_time``, MySQL's
    ``MAX_EXECUTION_TIME`` hint); its rows are read and thrown away. Stages come from
    SHOW PROFILE, or on servers without it from performance_schema's
    events_stages_history_long for this session's thread.

    Args:
        target: The instance's execution target, verified read-only as the session opens;
            ``database`` is the example's default database.
        sql: The example.
        runs: How many executions (default: ``settings.profile_runs``).
        settings: Session limits.
        truncated: The collector marked the example as cut short.
        method: Force a source of stages (default: SHOW PROFILE where the server has it).

    Returns:
        The ranked profile of the runs (combine profiles of several examples with
        :func:`quanta.analysis.profile.combine_profiles`).

    Raises:
        StatementRefused: not an executable SELECT (or truncated, several statements).
        FeatureUnavailable: the server gives no stages (see the message for the fix).
        TargetNotReadOnly: the target is not read-only for the account: nothing ran.
        ConnectionFailed, ServerError: as for explain.
    """
    settings = settings or MonitoredSettings()
    count = _run_count(runs, settings)
    statement = _executable(sql, truncated)
    with TargetConnection(target, settings) as conn:
        return _profiled(conn, statement, count, method)


def profile_on(
    conn: TargetConnection,
    sql: str,
    *,
    runs: int | None = None,
    truncated: bool = False,
    method: ProfilingMethod | None = None,
) -> Profile:
    """:func:`profile` on an execution target's session the caller opened (verified
    read-only as it opened) and keeps, so that one run profiles several examples on one
    connection; ``runs`` defaults to the session's ``settings.profile_runs``.

    Raises:
        StatementRefused, FeatureUnavailable, ServerError: as for :func:`profile`.
    """
    count = _run_count(runs, conn.settings)
    return _profiled(conn, _executable(sql, truncated), count, method)


def _run_count(runs: int | None, settings: MonitoredSettings) -> int:
    count = runs if runs is not None else settings.profile_runs
    if count < 1:
        raise ValueError("a profile needs at least one run")
    return count


def _executable(sql: str, truncated: bool) -> str:
    """The SELECT to execute; StatementRefused when the example may not be executed."""
    classification = classify_statement(sql.strip().rstrip(";").rstrip(), truncated=truncated)
    statement = classification.explain_text
    if not classification.executable or statement is None:
        raise StatementRefused(f"not profiled: {classification.execute_refusal}")
    return statement


def _profiled(
    conn: TargetConnection, statement: str, count: int, method: ProfilingMethod | None
) -> Profile:
    chosen = method or profiling_method(conn)
    prepared = _prepare(conn, chosen, statement)
    return rank_profile([_run(conn, chosen, prepared) for _ in range(count)])


def profiling_method(conn: GuardedConnection) -> ProfilingMethod:
    """SHOW PROFILE where the server has it, else performance_schema stage events."""
    with conn.read_only():
        have = conn.query("SHOW VARIABLES LIKE 'have_profiling'")
        if have and str(have[0].get("Value", "")).upper() == _ENABLED:
            return ProfilingMethod.SHOW_PROFILE
        consumer = conn.query(
            "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = %s",
            ("events_stages_history_long",),
        )
    if consumer and str(consumer[0]["ENABLED"]).upper() == _ENABLED:
        return ProfilingMethod.PERFORMANCE_SCHEMA
    raise FeatureUnavailable(
        "no stage timings on this server: it has no SHOW PROFILE and performance_schema's "
        "events_stages_history_long consumer is off (enable it, events_stages_current and "
        "the stage/% instruments in the server's configuration)"
    )


def _prepare(conn: GuardedConnection, method: ProfilingMethod, statement: str) -> _Target:
    if method is ProfilingMethod.SHOW_PROFILE:
        conn.set_session("SET SESSION profiling = 1")
        return _Target(statement)
    with conn.read_only():
        rows = conn.query(
            "SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = "
            "CONNECTION_ID()"
        )
    if not rows:
        raise FeatureUnavailable("performance_schema does not instrument this session's thread")
    return _Target(statement, int(rows[0]["THREAD_ID"]))


def _run(conn: GuardedConnection, method: ProfilingMethod, target: _Target) -> ProfileRun:
    with conn.read_only():
        try:  # what it reaches, checked in the transaction it runs in
            check_reached(conn, target.statement)
        except ObjectRefused as exc:
            raise StatementRefused(f"not profiled: {exc}") from exc
        rows_sent, response_us = conn.stream(target.statement)
        if method is ProfilingMethod.SHOW_PROFILE:
            stages = _show_profile_stages(conn, conn.time_limited(target.statement))
        else:
            stages = _performance_schema_stages(conn, target)
    return ProfileRun(response_us, stages, rows_sent)


def _show_profile_stages(conn: GuardedConnection, sent: str) -> tuple[Stage, ...]:
    # The statement just run (``sent``: as sent, its limits written in) is the newest entry
    # with its text: SHOW statements are not profiled, Quanta's session statements are.
    entries = conn.query("SHOW PROFILES")
    ours = [e for e in entries if _same_start(str(e.get("Query", "")), sent)]
    if not ours:
        raise FeatureUnavailable("SHOW PROFILES does not list the profiled statement")
    query_id = max(int(e["Query_ID"]) for e in ours)
    return stages_from_show_profile(conn.query(f"SHOW PROFILE FOR QUERY {query_id}"))


def _same_start(recorded: str, sent: str) -> bool:
    """Whether the server's record of a statement (SHOW PROFILES keeps 300 characters,
    performance_schema 1024) is of the text sent."""
    length = min(len(recorded), len(sent), _COMPARED_CHARS)
    return length > 0 and recorded[:length] == sent[:length]


def _performance_schema_stages(conn: GuardedConnection, target: _Target) -> tuple[Stage, ...]:
    # The newest finished statement of this thread with the text sent is the one just run
    # (MySQL: Quanta's limits, sent again before every statement, come after it).
    sent = conn.time_limited(target.statement)
    events = [
        event
        for event in conn.query(
            "SELECT EVENT_ID, SQL_TEXT FROM performance_schema.events_statements_history "
            "WHERE THREAD_ID = %s ORDER BY EVENT_ID DESC",
            (target.thread_id,),
        )
        if _same_start(str(event["SQL_TEXT"] or ""), sent)
    ]
    if not events:
        raise FeatureUnavailable(
            "performance_schema's events_statements_history has no entry for the run "
            "(is the consumer on?)"
        )
    stages = conn.query(
        "SELECT EVENT_NAME, TIMER_WAIT FROM performance_schema.events_stages_history_long "
        "WHERE THREAD_ID = %s AND NESTING_EVENT_ID = %s ORDER BY EVENT_ID",
        (target.thread_id, events[0]["EVENT_ID"]),
    )
    if not stages:
        raise FeatureUnavailable(
            "performance_schema recorded no stages for the run: enable the stage/% "
            "instruments and the events_stages_current and events_stages_history_long "
            "consumers"
        )
    return stages_from_performance_schema(stages)
