"""EXPLAIN on the sandbox, and the verdict on two plans of a table: better, worse, which
keys, and the one-line summary.

The plans are of a sample, so their row estimates are the sample's; what matters is the
comparison: a plan counts as an improvement when the table's access type gets better
(ALL < index < range < ref < eq_ref < const) or, at the same type, fewer rows are estimated.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from quanta.monitored.sandbox import SandboxSession

__all__ = ["ACCESS_ORDER", "access_rank", "compare_index", "compare_plans", "explain"]

# Access types from worst to best (EXPLAIN's `type`); unknown ones rank as a full scan.
ACCESS_ORDER = (
    "ALL",
    "index",
    "index_merge",
    "range",
    "ref_or_null",
    "fulltext",
    "ref",
    "eq_ref",
    "const",
    "system",
)
NUMERIC_PLAN_FIELDS = ("id", "rows")


def access_rank(access_type: str | None) -> int:
    """Position of an EXPLAIN access type from worst (0, ALL) to best.

    Example:
        >>> access_rank("ALL") < access_rank("range") < access_rank("ref")
        True
    """
    try:
        return ACCESS_ORDER.index(access_type or "ALL")
    except ValueError:
        return 0


def explain(session: SandboxSession, statement: str) -> list[dict[str, Any]]:
    """Tabular EXPLAIN rows as JSON primitives; ``rows`` and ``id`` as numbers (MariaDB
    sends them as text)."""
    plan = [{k: _plain(v) for k, v in row.items()} for row in session.explain(statement)]
    for row in plan:
        for key in NUMERIC_PLAN_FIELDS:
            if isinstance(row.get(key), str) and row[key].isdigit():
                row[key] = int(row[key])
    return plan


def compare_index(
    table: str, aliases: set[str], before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> dict[str, Any]:
    """One candidate index's verdict on ``table`` (``db.t``): the plans, whether it
    improved, and the summary."""
    old_type, old_rows = _access(before, aliases)
    new_type, new_rows = _access(after, aliases)
    old_rank, new_rank = access_rank(old_type), access_rank(new_type)
    improved = new_rank > old_rank or (new_rank == old_rank and new_rows < old_rows)
    keys = sorted({str(r.get("key")) for r in after if _alias(r) in aliases and r.get("key")})
    used = f" {', '.join(keys)}" if keys else ""
    name = table.split(".", 1)[1]
    summary = f"{name}: {old_type}, {old_rows:,} rows -> {new_type}{used}, {new_rows:,} rows"
    return {"before": before, "after": after, "improved": improved, "summary": summary}


def compare_plans(
    table: str, aliases: set[str], before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> dict[str, Any]:
    """One statement's plans on ``table`` (``db.t``) before and after: better, worse, the
    keys used, and the summary."""
    name = table.split(".", 1)[1]
    old_type, old_rows = _access(before, aliases)
    new_type, new_rows = _access(after, aliases)
    old_rank, new_rank = access_rank(old_type), access_rank(new_type)
    keys = sorted(
        {
            key.strip()
            for r in after
            if _alias(r) in aliases and r.get("key")
            for key in str(r["key"]).split(",")
        }
    )
    used = f" {', '.join(keys)}" if keys else ""
    return {
        "before": before,
        "after": after,
        "improved": new_rank > old_rank or (new_rank == old_rank and new_rows < old_rows),
        "worse": new_rank < old_rank or (new_rank == old_rank and new_rows > old_rows),
        "keys": keys,
        "rows_before": old_rows,
        "rows_after": new_rows,
        "summary": f"{name}: {old_type}, {old_rows:,} rows -> {new_type}{used}, {new_rows:,} rows",
    }


def _access(plan: list[dict[str, Any]], aliases: set[str]) -> tuple[str, int]:
    """The worst access type and the summed row estimate of the table's plan rows."""
    rows = [r for r in plan if _alias(r) in aliases]
    if not rows:
        return "ALL", 0
    worst = min((str(r.get("type") or "ALL") for r in rows), key=access_rank)
    return worst, sum(int(r.get("rows") or 0) for r in rows)


def _alias(row: Mapping[str, Any]) -> str:
    return str(row.get("table") or "").lower()


def _plain(value: Any) -> Any:
    """EXPLAIN values as JSON primitives."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, datetime | date | time | timedelta):
        return str(value)
    return str(value)
