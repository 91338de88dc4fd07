"""The chat announcement of a query's new or changed suggestions (quanta.notify)."""

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from quanta.advice.models import Suggestion
from quanta.advice.work import DAILY_WINDOW
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.instances.service import find_instance
from quanta.notify.events import SuggestionNotice
from quanta.notify.formats.common import size
from quanta.notify.publish import publish_suggestion
from quanta.queries import service as queries_service
from quanta.queries.window import BucketFilter, TimeWindow
from quanta.tables import service as tables_service

__all__ = ["announce"]


def announce(session: Session, settings: Settings, rows: Sequence[Suggestion]) -> None:
    """Queue one chat message about a query's new or changed suggestions (every table's
    index in it) for every channel whose filters match (quanta.notify; a channel gets the
    same content once), with the query's share of its instance's load, its calls and cost
    per call over the last day, the tables' sizes and the sandbox plans when there are
    some."""
    if not rows:
        return
    first = rows[0]
    instance = find_instance(session=session, instance_id=first.instance_id)
    now = utcnow()
    window = TimeWindow(now - DAILY_WINDOW, now)
    detail = queries_service.query_detail(
        session=session,
        settings=settings,
        window=window,
        query_id=first.query_id,
        flt=BucketFilter(instances=(instance.name,)),
    )
    per_call = {m.name: m.avg for m in detail.metrics}
    plans_before = [_plan_text((r.validation or {}).get("before")) for r in rows]
    plans_after = [_plan_text((r.validation or {}).get("after")) for r in rows]
    plan_before = "\n".join(p for p in plans_before if p) or None
    plan_after = "\n".join(p for p in plans_after if p) or None
    several = len(rows) > 1
    notice_hash = hashlib.sha256(
        json.dumps([[r.content_hash for r in rows], plan_before, plan_after]).encode()
    ).hexdigest()
    publish_suggestion(
        session=session,
        settings=settings,
        notice=SuggestionNotice(
            suggestion_id=min(r.id for r in rows),
            query_id=first.query_id,
            fingerprint=detail.fingerprint,
            instance=instance.name,
            table=", ".join(r.table_name for r in rows),
            load_share=detail.share,
            calls=detail.count,
            ddl=";\n".join(r.ddl for r in rows) + (";" if several else ""),
            reason=" ".join(f"{r.table_name}: {r.reason}" if several else r.reason for r in rows),
            content_hash=notice_hash,
            plan_before=plan_before,
            plan_after=plan_after,
            window_start=window.start.isoformat(),
            window_end=window.end.isoformat(),
            rows_examined_per_call=per_call.get("rows_examined"),
            rows_sent_per_call=per_call.get("rows_sent"),
            latency_avg=per_call.get("query_time"),
            table_sizes=_table_sizes(session, instance.id, [r.table_name for r in rows]),
        ),
    )


def _table_sizes(session: Session, instance_id: int, tables: Sequence[str]) -> list[str]:
    """ "shop.orders: 30,000 rows, 2.1 MB" per table, from its snapshot (how heavy the ALTER
    is); a table without a snapshot is left out."""
    sizes = []
    for name, document in tables_service.stored_documents(session, instance_id, tables).items():
        rows = document.get("rows")
        data = [document.get("data_length"), document.get("index_length")]
        total = sum(d for d in data if isinstance(d, int)) if any(data) else None
        counted = f"{rows:,} rows" if isinstance(rows, int) else "rows unknown"
        sizes.append(f"{name}: {counted}, {size(total)}")
    return sizes


def _plan_text(plan: Any) -> str | None:
    """A tabular EXPLAIN as short lines: ``orders: ref idx_orders_phone, 2 rows``."""
    if not isinstance(plan, list) or not plan:
        return None
    return "\n".join(
        f"{row.get('table')}: {row.get('type')}"
        + (f" {row['key']}" if row.get("key") else "")
        + f", {row.get('rows')} rows"
        for row in plan
    )
