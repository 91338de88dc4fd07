"""What an instance's index plan weighs: its heaviest query classes of a window with their
facts, the schema snapshots of the tables they name and the tables' write rates.

Each query class comes from its newest usable example or else its fingerprint (the text
per-query advice uses: quanta.advice.service.advised_statement), Quanta's own statements
left out (quanta.queries.service.instance_top_queries). A table's write rate is the agent's
table statistics where there are some (quanta.statistics.service.table_write_rates), else
the rows affected by the window's write statements on that one table.
"""

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quanta.advice import service as advice_service
from quanta.analysis.advisor.workload import TableWrites, WorkloadQuery
from quanta.analysis.statement import written_table
from quanta.core.config import Settings
from quanta.instances.models import Instance
from quanta.instances.service import NoConnection
from quanta.monitored import MonitoredError
from quanta.queries import service as queries_service
from quanta.queries.window import TimeWindow
from quanta.statistics import service as statistics_service
from quanta.tables import service as tables_service

__all__ = ["Workload", "gather_workload"]

log = logging.getLogger(__name__)

# Statement types whose rows_affected are rows written to their target table.
WRITE_KINDS = {
    "insert": "inserted",
    "replace": "inserted",
    "update": "updated",
    "delete": "deleted",
}


@dataclass(frozen=True, slots=True)
class Workload:
    """What an instance's plan weighs: its queries of the window, their tables' schema
    document and the tables' write rates; ``facts`` keeps per query what the UI shows."""

    window: TimeWindow
    queries: tuple[WorkloadQuery, ...]
    tables: tuple[str, ...]
    document: dict[str, Any]
    writes: dict[str, TableWrites]
    facts: dict[str, dict[str, Any]]


def gather_workload(
    *,
    session: Session,
    settings: Settings,
    instance: Instance,
    window: TimeWindow,
    refresh: bool = False,
    now: datetime | None = None,
) -> Workload:
    """The instance's heaviest queries of the window, their tables' snapshots (refreshed
    first with ``refresh``; a server that cannot be read leaves the stored ones) and the
    tables' write rates."""
    top = queries_service.instance_top_queries(
        session=session,
        settings=settings,
        instance=instance.name,
        window=window,
        limit=settings.index_plan_max_queries,
    )
    queries: list[WorkloadQuery] = []
    facts: dict[str, dict[str, Any]] = {}
    tables: set[str] = set()
    writers: dict[str, tuple[str, str]] = {}  # query_id -> (table, kind)
    for row in top:
        if not row.count:
            continue
        statement = advice_service.advised_statement(
            session=session,
            query_id=row.query_id,
            instance_id=instance.id,
            fingerprint=row.fingerprint,
        )
        named = tables_service.qualify_tables(row.tables, statement.default_db)
        tables.update(named)
        kind = (row.statement_type or "").lower()
        written = written_table(row.fingerprint) if kind in WRITE_KINDS else None
        target = tables_service.qualify_tables([written], statement.default_db) if written else []
        if target:
            writers[row.query_id] = (target[0], WRITE_KINDS[kind])
        queries.append(
            WorkloadQuery(
                query_id=row.query_id,
                sql=statement.sql,
                default_db=statement.default_db,
                calls=float(row.count),
                load=row.query_time,
                # Measured where a source reported it: the plan weighs it over its estimates.
                rows_examined=float(row.rows_examined) if row.rows_examined is not None else None,
                load_share=row.share,
            )
        )
        facts[row.query_id] = {
            "fingerprint": row.fingerprint,
            "calls": row.count,
            "load_share": row.share,
            "rows_examined_per_call": (
                row.rows_examined / row.count if row.rows_examined is not None else None
            ),
            "from_example": statement.from_example,
            "sql": statement.sql if statement.from_example else None,
            "default_db": statement.default_db,
            "tables": named,
        }
    names = sorted(tables)
    if refresh and names:
        try:
            tables_service.refresh_tables(
                session=session, settings=settings, instance_id=instance.id, tables=names, now=now
            )
        except (MonitoredError, NoConnection) as exc:
            log.warning("snapshots for the index plan of %s: %s", instance.name, exc)
    document = tables_service.schema_document(
        session=session, instance_id=instance.id, tables=names
    )
    writes = _write_rates(session, settings, instance, window, names, writers)
    return Workload(
        window=window,
        queries=tuple(queries),
        tables=tuple(names),
        document=document,
        writes=writes,
        facts=facts,
    )


def _write_rates(
    session: Session,
    settings: Settings,
    instance: Instance,
    window: TimeWindow,
    tables: Sequence[str],
    writers: Mapping[str, tuple[str, str]],
) -> dict[str, TableWrites]:
    """Per table: the agent's table statistics, else the rows the window's write statements
    on that table affected per second (quanta.analysis.statement.written_table: a
    multi-table UPDATE or DELETE is not counted, which of its tables it wrote is unknown)."""
    measured = statistics_service.table_write_rates(session=session, instance_id=instance.id)
    rates = {t: measured[t] for t in tables if t in measured}
    missing = {q: w for q, w in writers.items() if w[0] not in rates}
    affected = queries_service.rows_affected_by_query(
        session=session,
        settings=settings,
        instance=instance.name,
        window=window,
        query_ids=sorted(missing),
    )
    derived: dict[str, dict[str, float]] = {}
    for query_id, (table, kind) in missing.items():
        if query_id in affected:
            per_table = derived.setdefault(table, {})
            per_table[kind] = per_table.get(kind, 0.0) + affected[query_id] / window.seconds
    for table, kinds in derived.items():
        rates[table] = TableWrites(
            table,
            inserted_per_s=kinds.get("inserted", 0.0),
            updated_per_s=kinds.get("updated", 0.0),
            deleted_per_s=kinds.get("deleted", 0.0),
        )
    return rates
