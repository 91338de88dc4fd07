"""The chat announcement of changed table plans: one message per table whose plan changed
and has something to do (quanta.notify.publish.publish_plan, never the same plan twice)."""

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from quanta.core.config import Settings
from quanta.indexplan.models import IndexPlan
from quanta.indexplan.sandbox import CONFIRMED
from quanta.indexplan.store import load_share
from quanta.instances.models import Instance
from quanta.notify.events import PlanNotice
from quanta.notify.formats.common import shorten, size
from quanta.notify.publish import publish_plan

__all__ = ["announce"]

# A served query's line in a chat message: enough of the text to recognise it.
NOTICE_QUERY_CHARS = 120
NOTICE_QUERIES = 5


def announce(
    session: Session,
    settings: Settings,
    instance: Instance,
    rows: Sequence[IndexPlan],
    changed: Sequence[int],
    document: Mapping[str, Any],
) -> list[int]:
    """One chat message per table whose plan changed and has something to do, with the
    tables' sizes from the schema ``document``; the ids of the deliveries queued."""
    delivered: list[int] = []
    sizes = _table_sizes(document)
    for row in rows:
        if row.id not in changed or not row.ddl:
            continue
        queries = row.plan["queries"]
        served = sorted(
            {
                s["query_id"]
                for add in row.plan["adds"]
                for s in add["served"]
                if s["query_id"] in queries
            },
            key=lambda q: (-float(queries[q]["load_share"]), q),
        )
        lines = [
            f"{shorten(str(queries[q]['fingerprint']), NOTICE_QUERY_CHARS)} "
            f"({queries[q]['load_share'] * 100:.1f}%)"
            for q in served[:NOTICE_QUERIES]
        ]
        if len(served) > NOTICE_QUERIES:
            lines.append(f"and {len(served) - NOTICE_QUERIES} more")
        checks = [
            queries[q]["sandbox"] for q in served if "summary" in queries[q].get("sandbox", {})
        ]
        plans = [_before_after(str(c["summary"])) for c in checks]
        delivered += publish_plan(
            session=session,
            settings=settings,
            notice=PlanNotice(
                plan_id=row.id,
                instance_id=instance.id,
                instance=instance.name,
                table=row.table_name,
                load_share=load_share(row),
                calls=int(sum(float(queries[q]["calls"]) for q in served)),
                ddl=row.ddl,
                signature=row.signature,
                summary=_summary(row, len(served)),
                queries=lines,
                plan_before="\n".join(before for before, _ in plans) or None,
                plan_after="\n".join(after for _, after in plans) or None,
                window_start=row.window_start.isoformat(),
                window_end=row.window_end.isoformat(),
                table_sizes=[sizes[row.table_name]] if row.table_name in sizes else [],
            ),
        )
    return delivered


def _before_after(summary: str) -> tuple[str, str]:
    """A sandbox summary ("orders: ALL, 6,000 rows -> ref idx_o_phone, 2 rows") as the plan
    before ("orders: ALL, 6,000 rows") and after ("orders: ref idx_o_phone, 2 rows")."""
    before, _, after = summary.partition(" -> ")
    table = before.split(":", 1)[0]
    return before, f"{table}: {after}" if after else ""


def _summary(row: IndexPlan, served: int) -> str:
    """What the plan does in two sentences: its indexes, the queries, rows and writes."""
    plan = row.plan
    adds, drops = len(plan["adds"]), len(plan["drops"])
    parts = [f"{adds} new index{'es' if adds != 1 else ''}"]
    if drops:
        parts.append(f"{drops} dropped")
    text = (
        f"{', '.join(parts)} serving {served} quer{'ies' if served != 1 else 'y'}: estimated "
        f"rows examined {row.rows_before_per_s:,.0f}/s -> {plan['rows_after_per_s']:,.0f}/s, "
        f"{plan['write_entries_per_s']:,.1f} more index entries written/s."
    )
    verdicts = [a["validation"] for a in plan["adds"]]
    if verdicts and all(v == CONFIRMED for v in verdicts):
        text += " Confirmed on the sandbox copy."
    return text


def _table_sizes(document: Mapping[str, Any]) -> dict[str, str]:
    """ "shop.orders: 30,000 rows, 2.1 MB" by table, from the snapshots."""
    sizes = {}
    for name, table in (document.get("tables") or {}).items():
        rows = table.get("rows")
        data = [table.get("data_length"), table.get("index_length")]
        total = sum(d for d in data if isinstance(d, int)) if any(data) else None
        counted = f"{rows:,} rows" if isinstance(rows, int) else "rows unknown"
        sizes[name] = f"{name}: {counted}, {size(total)}"
    return sizes
