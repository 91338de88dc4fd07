"""Advice as JSON-ready data and as text a DBA can paste into a client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from quanta.analysis.advisor.existing import IndexFinding
from quanta.analysis.advisor.model import Action, TableAdvice
from quanta.analysis.advisor.workload import PlannedIndex, ServedQuery, TablePlan, rate_text

__all__ = [
    "advice_to_json",
    "numbers_text",
    "render_plan_text",
    "render_text",
    "served_rows_text",
]


def advice_to_json(
    advice: Sequence[TableAdvice], findings: Sequence[IndexFinding] = ()
) -> list[dict[str, Any]]:
    """The advice as a list of JSON objects, one per table access.

    Each object has ``table``, ``action``, ``columns`` (``name``, ``desc``, ``rule``),
    ``ddl``, ``reason``, ``redundant``, ``notes``, ``rows_before`` and ``rows_after`` (the
    estimated rows examined per call with the best existing index and with the suggested one,
    null when nothing is suggested), ``index_bytes`` (the suggested index's width per row)
    and ``alternative`` (an object of the same shape or null); the first object of a table
    also lists the ``existing`` indexes that can go.

    Example:
        >>> advice_to_json([TableAdvice("db.t", Action.NONE, reason="Nothing.")])[0]["action"]
        'none'
    """
    listed: set[str] = set()
    result = []
    for item in advice:
        entry = _entry(item)
        if item.table not in listed:
            listed.add(item.table)
            entry["existing"] = [_finding(f) for f in findings if f.table == item.table]
        result.append(entry)
    return result


def _entry(item: TableAdvice) -> dict[str, Any]:
    return {
        "table": item.table,
        "action": item.action.value,
        "columns": [{"name": c.name, "desc": c.desc, "rule": c.rule.value} for c in item.columns],
        "ddl": item.ddl,
        "reason": item.reason,
        "redundant": list(item.redundant),
        "notes": list(item.notes),
        "rows_before": item.rows_before,
        "rows_after": item.rows_after,
        "index_bytes": item.index_bytes,
        "alternative": _entry(item.alternative) if item.alternative else None,
    }


def _finding(finding: IndexFinding) -> dict[str, Any]:
    return {
        "index": finding.index,
        "kind": finding.kind.value,
        "covered_by": finding.covered_by,
        "ddl": finding.ddl,
        "reason": finding.reason,
    }


def render_text(advice: Sequence[TableAdvice], findings: Sequence[IndexFinding] = ()) -> str:
    """The advice as SQL comments and statements, ready to paste.

    Example:
        >>> print(render_text([TableAdvice("db.t", Action.NONE, reason="Nothing to do.")]), end="")
        -- db.t: no new index. Nothing to do.
    """
    lines: list[str] = [] if advice else ["-- The statement reads no table rows: nothing to index."]
    for item in advice:
        lines += _advice_lines(item)
        if item.alternative is not None and item.alternative.action is not Action.NONE:
            lines.append("-- Alternative, to avoid the sort instead:")
            lines += ["-- " + line for line in _advice_lines(item.alternative)]
    if findings:
        lines.append("-- Existing indexes that can go:")
        for finding in findings:
            lines.append(
                f"-- {finding.table}.{finding.index} ({finding.kind.value}): {finding.reason}"
            )
            lines.append(f"{finding.ddl};")
    return "".join(line + "\n" for line in lines)


def numbers_text(item: TableAdvice) -> str:
    """The rows examined per call of a suggestion as one sentence, saying which figures are
    measured and which estimated; empty when nothing is suggested.

    With ``rows_measured`` (this access's share of the rows examined per call the server
    measured for the query) the figure with the index is the measured one cut by the
    estimated saving.

    Example:
        >>> item = TableAdvice("db.t", Action.ADD, rows_before=1000, rows_after=10,
        ...     index_bytes=12)
        >>> numbers_text(item)[:66]
        'Rows examined per call, estimated: about 1,000 now, about 10 with '
        >>> from dataclasses import replace
        >>> numbers_text(replace(item, rows_measured=500))[:64]
        'Rows examined per call: 500 measured now, about 5 with the index'
    """
    if item.rows_after is None:
        return ""
    width = f"the index takes {item.index_bytes} bytes per row."
    before = item.rows_before or 0
    measured = item.rows_measured
    if measured is None:
        return (
            f"Rows examined per call, estimated: about {before:,} now, about "
            f"{item.rows_after:,} with the index; {width}"
        )
    after = min(measured, measured * item.rows_after / before if before else 0.0)
    return (
        f"Rows examined per call: {_rows(measured)} measured now, about {_rows(after)} with the "
        f"index (the measured figure cut by the estimated saving; the statistics estimate "
        f"{before:,} now and {item.rows_after:,} with it); {width}"
    )


def _rows(value: float) -> str:
    """Rows per call for a sentence: whole rows, and 'under 1' for a fraction of one."""
    return "under 1" if 0 < value < 0.5 else f"{value:,.0f}"


def _advice_lines(item: TableAdvice) -> list[str]:
    if item.action is Action.NONE:
        lines = [f"-- {item.table}: no new index. {item.reason}"]
    else:
        columns = ", ".join(
            f"{c.name}{' DESC' if c.desc else ''} ({c.rule.value})" for c in item.columns
        )
        lines = [f"-- {item.table}: {item.action.value} index on {columns}.", f"-- {item.reason}"]
    lines += [f"--   {note}" for note in item.notes]
    numbers = numbers_text(item)
    if numbers:
        lines.append(f"--   {numbers}")
    if item.ddl:
        lines.append(f"{item.ddl};")
    return lines


def render_plan_text(plans: Sequence[TablePlan]) -> str:
    """Workload index plans as SQL comments (the evidence) and one ALTER TABLE per table.

    Example:
        >>> plan = TablePlan("db.t", (), (), "", 120.0, 120.0, 0.0, ("Q1",), ())
        >>> print(render_plan_text([plan]), end="")
        -- db.t: no change; about 120 rows examined/s.
        --   No new index helps: Q1.
    """
    lines: list[str] = [] if plans else ["-- No query reads a table of the snapshot."]
    for plan in plans:
        lines += _plan_lines(plan)
    return "".join(line + "\n" for line in lines)


def _plan_lines(plan: TablePlan) -> list[str]:
    if not plan.ddl:
        rows = rate_text(plan.rows_before_per_s)
        lines = [f"-- {plan.table}: no change; about {rows} rows examined/s."]
    else:
        before, after = rate_text(plan.rows_before_per_s), rate_text(plan.rows_after_per_s)
        lines = [
            f"-- {plan.table}: {_count(len(plan.adds), 'new index', 'new indexes')}, "
            f"{_count(len(plan.drops), 'drop', 'drops')}; rows examined about {before}/s now, "
            f"about {after}/s with the plan; {rate_text(plan.write_entries_per_s)} more index "
            "entries/s to maintain."
        ]
    for add in plan.adds:
        lines += _add_lines(add)
    for drop in plan.drops:
        lines.append(f"--   - {drop.name}: {drop.reason}")
    if plan.unserved:
        lines.append(f"--   No new index helps: {', '.join(plan.unserved)}.")
    lines += [f"--   {note}" for note in plan.notes]
    if plan.ddl:
        lines.append(f"{plan.ddl};")
    return lines


def _add_lines(add: PlannedIndex) -> list[str]:
    columns = ", ".join(c.name + (" DESC" if c.desc else "") for c in add.columns)
    lines = [
        f"--   + {add.name} ({columns}): {add.width_bytes} bytes per row, "
        f"{rate_text(add.entries_per_s)} index entries/s to maintain"
    ]
    for served in add.served:
        lines.append(
            f"--       serves {served.query_id} ({_share(served.load_share)} of the load): "
            + served_rows_text(served)
        )
    return lines


def served_rows_text(served: ServedQuery) -> str:
    """A served query's rows examined per call now and with the plan, saying which figures
    are measured and which estimated.

    Example:
        >>> served_rows_text(ServedQuery("Q1", .5, 1000, 10))
        'about 1,000 rows examined per call now, 10 with it (estimated)'
        >>> served_rows_text(ServedQuery("Q1", .5, 120, 1, True, 8000000, 80))
        '120 rows examined per call now (measured), about 1 with it (estimated: 8,000,000 -> 80)'
    """
    before, after = served.rows_before or 0, served.rows_after or 0
    if not served.measured:
        return f"about {before:,} rows examined per call now, {after:,} with it (estimated)"
    return (
        f"{before:,} rows examined per call now (measured), about {after:,} with it "
        f"(estimated: {served.estimated_before or 0:,} -> {served.estimated_after or 0:,})"
    )


def _share(share: float) -> str:
    """A load share as a percentage; a share that rounds to 0.0% says it is below 0.1%."""
    return "<0.1%" if 0 < share < 0.0005 else f"{share:.1%}"


def _count(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"
