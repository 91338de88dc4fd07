"""Check a table's whole index plan on a sandbox server: every statement it serves explained
before and after the plan's adds and drops, on one copy of the tables.

The same checks and limits as one statement's (quanta.advice.validate_index): statements
the classifier refuses are reported, not explained; only user tables they name are copied;
the sandbox must be none of the monitored servers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from quanta.advice.isolation import MonitoredServer
from quanta.advice.plans import compare_plans, explain
from quanta.advice.sandbox_statement import (
    aliases,
    explained_text,
    is_system,
    named_tables,
    rewritten,
)
from quanta.advice.table_copy import SandboxCopy, sandbox_copy
from quanta.advice.validate_index import Candidate
from quanta.analysis.advisor.engine import index_ddl, quote_name
from quanta.analysis.sqlkind import classify_statement
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.sandbox import SandboxError, SandboxRefused

__all__ = ["PlanStatement", "validate_plan"]


@dataclass(frozen=True, slots=True)
class PlanStatement:
    """One statement a table's index plan serves: its key (the query_id), a real example and
    the database its unqualified names are in."""

    key: str
    sql: str
    default_db: str | None


def validate_plan(
    *,
    monitored: ConnectionOptions,
    sandbox: ConnectionOptions,
    instances: Sequence[MonitoredServer],
    limits: MonitoredSettings,
    table: str,
    adds: Sequence[Candidate],
    drops: Sequence[str],
    statements: Sequence[PlanStatement],
    sample_rows: int,
) -> dict[str, Any]:
    """Plans of every statement before and after a table's whole index plan, on one copy.

    The tables the statements name are copied once (same checks and limits as
    :func:`quanta.advice.validate_index.validate_indexes`); every statement is explained,
    then the plan's indexes are added and its drops made on the copy of ``table`` (``db.t``),
    and every statement is explained again. The indexes are really added and dropped: the
    copy is this session's own and dropped at the end, so no other session's plan can
    change, which is what MySQL's invisible and MariaDB's ignored indexes would otherwise be
    needed for, and it works on every version.

    Returns ``{"sandbox", "sample_rows", "queries"}`` where ``queries`` maps each statement's
    key to ``{"before", "after", "improved", "worse", "keys", "summary"}`` (``keys``: the
    indexes the table's plan rows use after) or to ``{"error"}`` when that statement could
    not be explained (refused by the classifier, or the sandbox refused its EXPLAIN).

    Raises:
        quanta.monitored.MonitoredError: reading the monitored server failed.
        SandboxRefused: the sandbox or a table is refused, or no statement can be checked.
        SandboxError: a step on the sandbox other than a statement's EXPLAIN failed.
    """
    queries: dict[str, dict[str, Any]] = {}
    accepted: list[tuple[PlanStatement, str]] = []
    named: set[str] = {table.lower()}
    for statement in statements:
        classification = classify_statement(statement.sql)
        if not classification.explainable:
            queries[statement.key] = {
                "error": f"not explained in the sandbox: {classification.explain_refusal}"
            }
            continue
        accepted.append((statement, explained_text(classification, statement.sql)))
        named |= named_tables(statement.sql, statement.default_db)
    if not accepted:
        raise SandboxRefused("no statement of the plan can be explained in the sandbox")
    # Only user tables the statements themselves name, never a system schema's.
    copied = sorted(t for t in named if not is_system(t))
    not_copied = sorted(t for t in named if is_system(t))
    with sandbox_copy(
        monitored=monitored,
        sandbox=sandbox,
        instances=instances,
        limits=limits,
        tables=copied,
        sample_rows=sample_rows,
    ) as copy:
        if table.lower() not in copy.copies:
            raise SandboxError(f"{table} is not copied to the sandbox")
        texts = {s.key: rewritten(text, s.default_db, copy.scratch) for s, text in accepted}
        before = {s.key: _explain_in(copy, s, texts[s.key]) for s, _ in accepted}
        target, quoted = copy.scratch_table(table)
        for dropped in drops:
            copy.session.send(f"ALTER TABLE {quoted} DROP INDEX {quote_name(dropped)}")
        for add in adds:
            copy.session.send(index_ddl(target, add.index_name, add.columns))
        after = {s.key: _explain_in(copy, s, texts[s.key]) for s, _ in accepted}
        sample = copy.sample_rows()
    for statement, _text in accepted:
        old, new = before[statement.key], after[statement.key]
        if isinstance(old, str) or isinstance(new, str):
            queries[statement.key] = {"error": old if isinstance(old, str) else new}
            continue
        named_as = aliases(statement.sql, statement.default_db, table)
        queries[statement.key] = compare_plans(table.lower(), named_as, old, new)
    return {
        "sandbox": sandbox.address,
        "sample_rows": sample,
        "queries": queries,
    } | ({"not_copied": not_copied} if not_copied else {})


def _explain_in(
    copy: SandboxCopy, statement: PlanStatement, text: str
) -> list[dict[str, Any]] | str:
    """The statement's plan in its default database's scratch copy, or why there is none
    (one statement the sandbox refuses does not stop the others)."""
    try:
        copy.use_default(statement.default_db)
        return explain(copy.session, text)
    except SandboxRefused:
        raise
    except SandboxError as exc:
        return str(exc)
