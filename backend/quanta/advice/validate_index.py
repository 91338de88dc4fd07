"""Check suggested indexes of one statement on a sandbox server: EXPLAIN before, add each
index, EXPLAIN after.

Everything that writes happens on the instance's sandbox, a separate server an admin
registered as scratch space, and only after these checks, in this order:

1. The example is classified (:func:`quanta.analysis.sqlkind.classify_statement`); one that
   may not be explained is refused before any server is contacted, with the reason.
2. Only user tables the example itself names are copied (quanta.advice.sandbox_statement),
   at most ``QUANTA_ADVICE_SANDBOX_SAMPLE_ROWS`` rows each (quanta.advice.table_copy).
3. The sandbox must not be a monitored server (quanta.advice.isolation).

The sandbox session is :class:`quanta.monitored.sandbox.SandboxSession`: the same guard,
lexer, sql_mode and per-statement limits as every session Quanta opens on a customer server,
with the sandbox's write forms declared next to the others (quanta.monitored.guard). What is
explained is the classifier's ``explain_text`` where it gives one (DML as its equivalent
SELECT), else the example, in a READ ONLY transaction always rolled back, after what it
reaches was checked (views, generated columns) as on the monitored server.

The statement is explained, each index added, the statement explained again, the index
dropped. MySQL 8: the index is added INVISIBLE, so the first plan is unchanged, and the
second EXPLAIN runs with ``optimizer_switch='use_invisible_indexes=on'``. A ``replace`` is
checked by adding the new index next to the one it replaces (the optimizer picks the
better), so nothing has to be restored between candidates. The verdict is
quanta.advice.plans'.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from quanta.advice.isolation import MonitoredServer
from quanta.advice.plans import compare_index, explain
from quanta.advice.sandbox_statement import aliases, explained_text, rewritten, tables_to_copy
from quanta.advice.table_copy import SandboxCopy, sandbox_copy
from quanta.analysis.advisor import AdviceColumn
from quanta.analysis.advisor.engine import index_ddl, quote_name
from quanta.analysis.sqlkind import classify_statement
from quanta.analysis.sqltext import unquote_ident
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.sandbox import SandboxRefused

__all__ = ["Candidate", "validate_indexes"]

_ADD_INDEX_RE = re.compile(r"ADD INDEX (`(?:[^`]|``)+`|\S+) \(")
_MYSQL = "mysql"


@dataclass(frozen=True, slots=True)
class Candidate:
    """One suggested index to try: its table (``db.t``), columns and DDL as advised."""

    key: int
    table: str
    columns: tuple[AdviceColumn, ...]
    ddl: str

    @property
    def index_name(self) -> str:
        """The index name the DDL adds."""
        match = _ADD_INDEX_RE.search(self.ddl)
        return unquote_ident(match.group(1)) if match else "quanta_candidate"


def validate_indexes(
    *,
    monitored: ConnectionOptions,
    sandbox: ConnectionOptions,
    instances: Sequence[MonitoredServer],
    limits: MonitoredSettings,
    sql: str,
    default_db: str | None,
    tables: Sequence[str],
    candidates: Sequence[Candidate],
    sample_rows: int,
) -> dict[int, dict[str, Any]]:
    """Plans before and after each candidate index on a sandbox copy, by candidate key.

    Each result is ``{"sandbox", "sample_rows", "before", "after", "improved", "summary"}``
    (plus ``"not_copied"``, the named tables left out, when there are some): ``before`` /
    ``after`` are the tabular EXPLAIN rows, ``summary`` one line such as
    ``"orders: ALL, 6000 rows -> ref idx_orders_phone, 2 rows"``. ``instances`` are every
    registered instance with a DSN: the sandbox must be none of their servers.

    Raises:
        quanta.monitored.MonitoredError: reading the monitored server failed.
        SandboxRefused: the example, the sandbox or a table is refused (the reason says).
        SandboxError: a step on the sandbox failed.
    """
    classification = classify_statement(sql)
    if not classification.explainable:
        raise SandboxRefused(f"not explained in the sandbox: {classification.explain_refusal}")
    copied, not_copied = tables_to_copy(sql, default_db, tables)
    with sandbox_copy(
        monitored=monitored,
        sandbox=sandbox,
        instances=instances,
        limits=limits,
        tables=copied,
        sample_rows=sample_rows,
    ) as copy:
        statement = rewritten(explained_text(classification, sql), default_db, copy.scratch)
        copy.use_default(default_db)
        before = explain(copy.session, statement)
        results: dict[int, dict[str, Any]] = {}
        extra = {
            "sandbox": sandbox.address,
            "sample_rows": copy.sample_rows(),
        } | ({"not_copied": not_copied} if not_copied else {})
        for candidate in candidates:
            if candidate.table.lower() not in copy.copies:
                results[candidate.key] = extra | {
                    "error": f"{candidate.table} is not copied to the sandbox",
                    "improved": None,
                }
                continue
            after = _explain_with(copy, candidate, statement)
            named = aliases(sql, default_db, candidate.table)
            results[candidate.key] = compare_index(candidate.table, named, before, after) | extra
    return results


def _explain_with(copy: SandboxCopy, candidate: Candidate, statement: str) -> list[dict[str, Any]]:
    """EXPLAIN with the candidate index in place, then take it away again."""
    session = copy.session
    target, quoted = copy.scratch_table(candidate.table)
    index = candidate.index_name
    drop = f"ALTER TABLE {quoted} DROP INDEX {quote_name(index)}"
    if session.flavor == _MYSQL:
        # MySQL 8: an invisible index changes no other plan; only this session sees it.
        session.send(index_ddl(target, index, candidate.columns) + " INVISIBLE")
        session.send("SET SESSION optimizer_switch = 'use_invisible_indexes=on'")
        try:
            return explain(session, statement)
        finally:
            session.send("SET SESSION optimizer_switch = 'use_invisible_indexes=off'")
            session.send(drop)
    session.send(index_ddl(target, index, candidate.columns))
    try:
        return explain(session, statement)
    finally:
        session.send(drop)
