"""The latest plan per (instance, table), stored with its evidence.

One row per planned table (tables no longer planned are deleted), with the plan as JSON:
adds with their served queries' facts and sandbox checks, drops, rejected, notes and
estimates. A row's ``signature`` changes with its DDL; the rows whose signature changed
are the ones chat hears about (quanta.indexplan.announce).
"""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quanta.indexplan import repository
from quanta.indexplan.models import IndexPlan
from quanta.indexplan.sandbox import NOT_CHECKED, CheckedPlan
from quanta.indexplan.workload import Workload

__all__ = ["load_share", "store"]


def store(
    session: Session,
    instance_id: int,
    checked: Sequence[CheckedPlan],
    workload: Workload,
    now: datetime,
) -> tuple[list[IndexPlan], list[int]]:
    """Upsert one row per planned table, delete the others; (rows, ids whose DDL changed)."""
    existing = repository.by_table(session, instance_id)
    planned = {c.plan.table for c in checked}
    repository.delete(session, [row for name, row in existing.items() if name not in planned])
    rows: list[IndexPlan] = []
    changed: list[IndexPlan] = []
    for item in checked:
        plan = item.plan
        row = existing.get(plan.table)
        if row is None:
            row = IndexPlan(instance_id=instance_id, table_name=plan.table, changed_at=now)
            session.add(row)
            changed.append(row)
        elif row.signature != plan.signature:
            row.changed_at = now
            changed.append(row)
        row.signature = plan.signature
        row.ddl = plan.ddl
        row.rows_before_per_s = plan.rows_before_per_s
        row.plan = _document(item, workload)
        row.validation = _run_facts(item.validation)
        row.window_start = workload.window.start
        row.window_end = workload.window.end
        row.computed_at = now
        rows.append(row)
    session.flush()
    rows.sort(key=lambda r: (-r.rows_before_per_s, r.table_name))
    return rows, [r.id for r in changed]


def load_share(row: IndexPlan) -> float:
    """Share of the instance's load of the queries the plan's adds serve (each once)."""
    served = {s["query_id"] for add in row.plan["adds"] for s in add["served"]}
    queries = row.plan["queries"]
    return min(1.0, sum(float(queries[q]["load_share"]) for q in served if q in queries))


def _run_facts(validation: dict[str, Any] | None) -> dict[str, Any] | None:
    """The sandbox run's own facts (the per-query plans are stored with each query)."""
    if validation is None:
        return None
    return {k: v for k, v in validation.items() if k != "queries"}


def _document(item: CheckedPlan, workload: Workload) -> dict[str, Any]:
    """The plan as stored: adds with their served queries' facts and sandbox checks."""
    plan = item.plan
    checks: dict[str, Any] = (item.validation or {}).get("queries") or {}
    touching = sorted(
        {s.query_id for a in plan.adds for s in a.served}
        | set(plan.unserved)
        | {q for q, f in workload.facts.items() if plan.table in f["tables"]}
    )
    return {
        "adds": [
            {
                "name": add.name,
                "definition": add.definition,
                "columns": [
                    {"name": c.name, "desc": c.desc, "rule": c.rule.value} for c in add.columns
                ],
                "width_bytes": add.width_bytes,
                "entries_per_s": add.entries_per_s,
                "served": [
                    {
                        "query_id": s.query_id,
                        "load_share": s.load_share,
                        "rows_before": s.rows_before,
                        "rows_after": s.rows_after,
                        "measured": s.measured,
                        "estimated_before": s.estimated_before,
                        "estimated_after": s.estimated_after,
                    }
                    for s in add.served
                ],
                "validation": item.verdicts.get(add.name, NOT_CHECKED),
            }
            for add in plan.adds
        ],
        "drops": [
            {"name": d.name, "reason": d.reason, "replaced_by": d.replaced_by} for d in plan.drops
        ],
        "rejected": item.rejected,
        "rows_after_per_s": plan.rows_after_per_s,
        "write_entries_per_s": plan.write_entries_per_s,
        "unserved": list(plan.unserved),
        "notes": list(plan.notes),
        "left_out": [
            {
                "name": item.name,
                "columns": list(item.columns),
                "query_ids": list(item.query_ids),
                "reason": item.reason,
                "in_chat": list(item.in_chat),
            }
            for item in plan.left_out
        ],
        "queries": {
            query_id: {
                key: workload.facts[query_id][key]
                for key in (
                    "fingerprint",
                    "calls",
                    "load_share",
                    "rows_examined_per_call",
                    "from_example",
                )
            }
            | ({"sandbox": _check(checks[query_id])} if query_id in checks else {})
            for query_id in touching
            if query_id in workload.facts
        },
    }


def _check(check: Mapping[str, Any]) -> dict[str, Any]:
    """A served query's sandbox result as stored: plans before/after and the verdict."""
    if "error" in check:
        return {"improved": None, "error": check["error"]}
    keys = ("before", "after", "improved", "worse", "summary", "rows_before", "rows_after")
    return {k: check.get(k) for k in keys}
