"""One story across surfaces (issue 41): what an instance's index plans did with its index
suggestions, and plan notes that name the suggestions chat already received.

Each open suggestion (add/replace, new or dismissed) gets a verdict from the plan of its table:
``planned`` (the plan adds its index, or a wider one holding its columns first), ``served``
(the plan serves its query with another index), ``left_out`` (the plan weighed its index and
left it out, with the plan's reason) or ``not_weighed`` (its query is not among the plan's,
or the plan's own advice for it differs). The verdict is stored on the suggestion
(quanta.advice.service.record_plan_verdicts) and shown on its query's Suggestions tab with a
link to the plan; the plan's note on a left-out index says which queries chat already
received it for.
"""

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from quanta.advice.service import PlannedSuggestion
from quanta.analysis.advisor import SchemaError
from quanta.analysis.advisor.engine import leads_with
from quanta.analysis.advisor.render import served_rows_text
from quanta.analysis.advisor.schema import Table, parse_table
from quanta.analysis.advisor.workload import ServedQuery, TablePlan, left_out_note
from quanta.indexplan.models import IndexPlan

__all__ = ["chat_notes", "verdicts"]

PLANNED, SERVED, LEFT_OUT, NOT_WEIGHED = "planned", "served", "left_out", "not_weighed"


def chat_notes(
    plan: TablePlan,
    suggestions: Sequence[PlannedSuggestion],
    in_chat: Collection[tuple[str, str]],
) -> TablePlan:
    """The plan with each left-out index marked with, and its note naming, the queries chat
    already received that index for (``in_chat``: their (query_id, DDL))."""
    if not plan.left_out:
        return plan
    plain = {left_out_note(item) for item in plan.left_out}
    told = tuple(
        replace(
            item,
            in_chat=tuple(
                sorted(
                    {
                        s.query_id
                        for s in suggestions
                        if s.table == plan.table
                        and s.columns == item.columns
                        and (s.query_id, s.ddl) in in_chat
                    }
                )
            ),
        )
        for item in plan.left_out
    )
    notes = (*(n for n in plan.notes if n not in plain), *(left_out_note(i) for i in told))
    return replace(plan, notes=notes, left_out=told)


def verdicts(
    rows: Sequence[IndexPlan],
    suggestions: Sequence[PlannedSuggestion],
    documents: Mapping[str, Mapping[str, Any]],
    now: datetime,
) -> dict[int, dict[str, Any]]:
    """Per open suggestion id, the verdict of its table's plan (see the module docstring):
    ``{"plan_id", "verdict", "index", "sentence", "computed_at"}``."""
    by_table = {row.table_name: row for row in rows}
    found: dict[int, dict[str, Any]] = {}
    for suggestion in suggestions:
        if not suggestion.asks_for_an_index:
            continue
        row = by_table.get(suggestion.table)
        table = _table(suggestion.table, documents.get(suggestion.table))
        verdict, index, sentence = _verdict(suggestion, row, table)
        found[suggestion.id] = {
            "plan_id": row.id if row is not None else None,
            "verdict": verdict,
            "index": index,
            "sentence": sentence,
            "computed_at": now.isoformat(),
        }
    return found


def _table(name: str, document: Mapping[str, Any] | None) -> Table | None:
    if document is None:
        return None
    try:
        return parse_table(name, document)
    except SchemaError:
        return None


def _verdict(
    suggestion: PlannedSuggestion, row: IndexPlan | None, table: Table | None
) -> tuple[str, str | None, str]:
    name = suggestion.table
    if row is None or suggestion.query_id not in row.plan["queries"]:
        return (
            NOT_WEIGHED,
            None,
            f"The index plan for {name} did not weigh this query: it is not among the "
            "instance's heaviest of the plan's window.",
        )
    plan = row.plan
    for add in plan["adds"]:
        columns = tuple(c["name"] for c in add["columns"])
        if columns == suggestion.columns:
            return (
                PLANNED,
                add["name"],
                f"The index plan for {name} adds this index as {add['name']}.",
            )
        if table is not None and leads_with(table, columns, suggestion.columns):
            return (
                PLANNED,
                add["name"],
                f"The index plan for {name} adds {add['name']} ({', '.join(columns)}), which "
                "holds this index's columns first, so it serves this query too.",
            )
    for add in plan["adds"]:
        for served in add["served"]:
            if served["query_id"] == suggestion.query_id:
                listed = ", ".join(c["name"] for c in add["columns"])
                rows = served_rows_text(_served(served))
                return (
                    SERVED,
                    add["name"],
                    f"The index plan for {name} serves this query with {add['name']} "
                    f"({listed}) instead: {rows}.",
                )
    for item in plan.get("left_out", []):
        if tuple(item["columns"]) == suggestion.columns:
            return (
                LEFT_OUT,
                None,
                f"The index plan for {name} left this index out: {item['reason']}.",
            )
    return (
        NOT_WEIGHED,
        None,
        f"The index plan for {name} weighed this query but not this index: its own advice "
        "for the query differs (advising the query again brings the two in line).",
    )


def _served(served: Mapping[str, Any]) -> ServedQuery:
    return ServedQuery(
        served["query_id"],
        float(served.get("load_share", 0.0)),
        served.get("rows_before"),
        served.get("rows_after"),
        bool(served.get("measured", False)),
        served.get("estimated_before"),
        served.get("estimated_after"),
    )
