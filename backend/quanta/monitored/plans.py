"""EXPLAIN of a real example on a monitored server, and the findings of its plan.

EXPLAIN never executes the statement and is all that runs on the monitored server: DML is
explained as its equivalent SELECT
(:attr:`~quanta.analysis.sqlkind.Classification.explain_text`). Each EXPLAIN (tabular, then
FORMAT=JSON) runs in a READ ONLY transaction of its own, right after what the example
reaches was resolved and checked in it (:func:`~quanta.monitored.objects.check_reached`:
views recursively, generated columns, DEFAULTs), and that check is made again before the
transaction ends: an object changed in between fails the run. One statement per
transaction: the metadata locks EXPLAIN takes are held no longer than that statement, so a
concurrent ALTER TABLE waits at most the statement's time limit. MariaDB's ANALYZE, which
executes the SELECT, runs only when the caller passes an execution target, and only on a
session that verified it read-only as it opened
(:class:`~quanta.monitored.target.TargetConnection`), checked the same way.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from quanta.analysis.explain import Finding, explain_findings
from quanta.analysis.sqlkind import Classification, StatementKind, classify_statement
from quanta.monitored.connection import GuardedConnection
from quanta.monitored.errors import ServerError, StatementRefused
from quanta.monitored.objects import ObjectRefused, check_reached
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.target import TargetConnection

__all__ = ["ExplainResult", "checked_query", "explain", "explain_on"]

# A \' not preceded by another backslash (an even run of backslashes is escaped backslashes).
_QUOTE_ESCAPE_RE = re.compile(r"(?<!\\)((?:\\\\)*)\\'")
# EXPLAIN's rows, EXPLAIN FORMAT=JSON's document (None where the server has none), notes.
_Plans = tuple[list[dict[str, Any]], dict[str, Any] | None, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class ExplainResult:
    """What EXPLAIN said about one example, and the findings drawn from it.

    Attributes:
        kind: ``select`` or ``dml``.
        verb: The statement's verb (select, update, delete, insert, replace).
        explained: The SELECT that was explained (DML's equivalent SELECT).
        server_version: VERSION() of the server that explained it.
        tabular: The tabular EXPLAIN rows, JSON-safe.
        document: EXPLAIN FORMAT=JSON, or None where the server has no JSON EXPLAIN.
        analyze: MariaDB's ANALYZE FORMAT=JSON (it executed the SELECT), or None.
        findings: Derived from the plan (the measured one when there is one).
        notes: Why a part is missing (ANALYZE not allowed, JSON not supported...).
    """

    kind: StatementKind
    verb: str
    explained: str
    server_version: str
    tabular: list[dict[str, Any]]
    document: dict[str, Any] | None
    analyze: dict[str, Any] | None
    findings: list[Finding]
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, to store with the query."""
        return {
            "kind": self.kind.value,
            "verb": self.verb,
            "explained": self.explained,
            "server_version": self.server_version,
            "tabular": self.tabular,
            "document": self.document,
            "analyze": self.analyze,
            "findings": [finding.to_dict() for finding in self.findings],
            "notes": list(self.notes),
        }


def explain(
    options: ConnectionOptions,
    sql: str,
    *,
    execute_on: ConnectionOptions | None = None,
    settings: MonitoredSettings | None = None,
    truncated: bool = False,
    rows_sent: float | None = None,
    rows_examined: float | None = None,
) -> ExplainResult:
    """EXPLAIN a real example (never a fingerprint) and derive the findings of its plan.

    The example is classified first (:func:`~quanta.analysis.sqlkind.classify_statement`);
    what is sent is its ``explain_text``: the SELECT itself, or a DML statement's equivalent
    SELECT. EXPLAIN and EXPLAIN FORMAT=JSON run on ``options`` in a READ ONLY transaction.
    With ``execute_on``, on MariaDB, ANALYZE FORMAT=JSON (which executes the SELECT, under
    the statement time limit) runs there and never on ``options``.

    Args:
        options: The monitored server; ``database`` is the example's default database.
        sql: The example, as the server saw it.
        execute_on: The instance's execution target (a replica or sandbox), with the
            example's default database; the ANALYZE session verifies it read-only as it
            opens. None: no ANALYZE.
        settings: Session limits.
        truncated: The collector marked the example as cut short.
        rows_sent: Rows the query returns per execution, from its metrics, when known.
        rows_examined: Rows it reads per execution, from its metrics, when known.

    Raises:
        StatementRefused: the example is refused (the message says why).
        ConnectionFailed: a server cannot be reached or refuses the account.
        ServerError: a server refused the statement (privileges, syntax, time limit).
        TargetNotReadOnly: ANALYZE was due, but the target is not read-only for the account.
    """
    classification, statement = _explainable(sql, truncated)
    with GuardedConnection(options, settings) as conn:
        plans = _explain_both(conn, statement)
        version, mariadb = conn.version, conn.is_mariadb
    # Not connected yet: the target's session opens (and is verified) only if ANALYZE is due.
    target = TargetConnection(execute_on, settings) if execute_on is not None else None
    return _result(
        classification,
        statement,
        plans,
        version=version,
        mariadb=mariadb,
        target=target,
        rows_sent=rows_sent,
        rows_examined=rows_examined,
    )


def explain_on(
    conn: GuardedConnection,
    sql: str,
    *,
    execute_on: TargetConnection | None = None,
    truncated: bool = False,
    rows_sent: float | None = None,
    rows_examined: float | None = None,
) -> ExplainResult:
    """:func:`explain` on open sessions the caller keeps: EXPLAIN on ``conn``; on MariaDB,
    ANALYZE FORMAT=JSON on ``execute_on``, an execution target's session (verified read-only
    as it opened; it may be ``conn`` itself). So a run whose caller checked the account on
    the same session reaches each server once.

    Raises:
        StatementRefused, ServerError: as for :func:`explain`.
    """
    classification, statement = _explainable(sql, truncated)
    plans = _explain_both(conn, statement)
    # The caller's session: entering the null context neither opens nor closes it.
    target = contextlib.nullcontext(execute_on) if execute_on is not None else None
    return _result(
        classification,
        statement,
        plans,
        version=conn.version,
        mariadb=conn.is_mariadb,
        target=target,
        rows_sent=rows_sent,
        rows_examined=rows_examined,
    )


def _explainable(sql: str, truncated: bool) -> tuple[Classification, str]:
    """The example's classification and the text to explain (DML's equivalent SELECT);
    StatementRefused when it may not be explained."""
    classification = classify_statement(_one_statement(sql), truncated=truncated)
    if not classification.explainable or classification.explain_text is None:
        raise StatementRefused(f"not explained: {classification.explain_refusal}")
    return classification, classification.explain_text


def _result(
    classification: Classification,
    statement: str,
    plans: _Plans,
    *,
    version: str,
    mariadb: bool,
    target: contextlib.AbstractContextManager[GuardedConnection] | None,
    rows_sent: float | None,
    rows_examined: float | None,
) -> ExplainResult:
    """The plans, MariaDB's ANALYZE on the execution target (``target``, entered only when
    the statement may be executed) and the findings."""
    tabular, document, notes = plans
    analyze, why_not = None, None
    if mariadb:
        analyze, why_not = _analyze(target, statement, classification)
    findings = explain_findings(
        rows=tabular,
        document=analyze or document,
        rows_sent=rows_sent,
        rows_examined=rows_examined,
    )
    noted = (classification.explain_note, *notes, why_not)
    return ExplainResult(
        kind=classification.kind,
        verb=classification.verb,
        explained=statement,
        server_version=version,
        tabular=tabular,
        document=document,
        analyze=analyze,
        findings=findings,
        notes=tuple(note for note in noted if note),
    )


def _one_statement(sql: str) -> str:
    # A trailing ";" is how logs end statements; "EXPLAIN x;" is still one statement.
    return sql.strip().rstrip(";").rstrip()


def _explain_both(conn: GuardedConnection, statement: str) -> _Plans:
    tabular = [_json_safe(row) for row in checked_query(conn, f"EXPLAIN {statement}", statement)]
    try:
        document = _document(checked_query(conn, f"EXPLAIN FORMAT=JSON {statement}", statement))
    except ServerError as exc:
        if exc.abandoned or exc.stopped:  # a time limit, a lost answer: the run failed
            raise
        # Servers before MySQL 5.6 / MariaDB 10.1 have no JSON plan.
        return tabular, None, (f"EXPLAIN FORMAT=JSON failed: {exc}",)
    return tabular, document, ()


def checked_query(conn: GuardedConnection, sql: str, statement: str) -> list[dict[str, Any]]:
    """``sql`` (EXPLAIN or ANALYZE of ``statement``) in a read-only transaction of its own,
    after what ``statement`` reaches was checked in it, and checked again before it ends.

    Raises:
        StatementRefused: something it reaches may not be evaluated ("not explained: ..."),
            or changed while the statement ran.
        ServerError: as for any statement.
    """
    with conn.read_only():
        try:
            reached = check_reached(conn, statement)
        except ObjectRefused as exc:
            raise StatementRefused(f"not explained: {exc}") from exc
        rows = conn.query(sql)
        # The statement's metadata locks are held now: what it opened cannot change until
        # the transaction ends. Different from before: swapped in between, so not vouched for.
        if check_reached(conn, statement) != reached:
            raise ServerError(
                f"{conn.options.address}: what the example reaches (a view, a table) changed "
                "while it was explained: the run is not trusted"
            )
    return rows


def _analyze(
    target: contextlib.AbstractContextManager[GuardedConnection] | None,
    statement: str,
    classification: Classification,
) -> tuple[dict[str, Any] | None, str | None]:
    if target is None:
        return None, "ANALYZE skipped: no execution target is configured for this instance"
    if not classification.executable:
        return None, f"ANALYZE skipped: {classification.execute_refusal}"
    with target as conn:
        if not conn.is_mariadb:
            return None, "ANALYZE skipped: the execution target is not MariaDB"
        analyzed = checked_query(conn, f"ANALYZE FORMAT=JSON {statement}", statement)
    try:
        return _document(analyzed), None
    except ServerError as exc:
        return None, f"ANALYZE failed: {exc}"


def _document(rows: list[dict[str, Any]]) -> dict[str, Any]:
    (value,) = rows[0].values()
    try:
        decoded = json.loads(value)
    except json.JSONDecodeError:
        # MariaDB writes a quote in a string constant as \' (not JSON): undo that escape.
        try:
            decoded = json.loads(_QUOTE_ESCAPE_RE.sub(r"\1'", value))
        except json.JSONDecodeError as exc:
            raise ServerError("EXPLAIN FORMAT=JSON did not return valid JSON") from exc
    if not isinstance(decoded, dict):
        raise ServerError("EXPLAIN FORMAT=JSON did not return a JSON object")
    return decoded


def _json_safe(row: Mapping[str, Any]) -> dict[str, Any]:
    return {str(key): _plain(value) for key, value in row.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value
