"""The workload of an instance by table and by account over a time range: the agents'
table and account statistics summed from their buckets, next to what the query store knows
(the query classes naming each table, each account's statements) and the latest snapshots.
"""

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from quanta.core.config import Settings
from quanta.instances.models import Instance
from quanta.instances.service import find_instance, monitoring_user
from quanta.queries import groups as queries_groups
from quanta.queries import service as queries_service
from quanta.queries.schemas import QueryRow
from quanta.queries.window import BucketFilter, TimeWindow, read_plan
from quanta.statistics import repository
from quanta.statistics.counters import CHANGE_COUNTERS, READ_COUNTERS, first_of
from quanta.statistics.coverage import BREAKS, Window
from quanta.statistics.schemas import (
    CoverageOut,
    TableQueryOut,
    TablesOut,
    TableWorkloadOut,
    UsersOut,
    UserWorkloadOut,
)
from quanta.statistics.service import instance_coverage
from quanta.statistics.user_figures import user_columns
from quanta.tables import service as tables_service

# The query classes looked at per schema (heaviest first), and the schemas looked at (those
# of the most read tables): bounds on the reads one page costs.
QUERIES_PER_SCHEMA = 200
QUERY_SCHEMAS = 20
QUERIES_PER_TABLE = 20
MAX_USERS = 1000


def table_workload(
    *, session: Session, settings: Settings, instance_id: int, window: TimeWindow
) -> TablesOut:
    """Per table with statistics in the window: rows read and changed, their rates and
    shares, the query classes naming it with their load, and its snapshot's size.

    Raises:
        quanta.instances.service.InstanceNotFound: no such instance.
    """
    instance = find_instance(session=session, instance_id=instance_id)
    coverage = instance_coverage(session=session, instance_id=instance_id)
    seconds = _covered_seconds(window, coverage)
    sums = repository.sums(
        session, instance_id, "table", read_plan(settings=settings, window=window)
    )
    names = {f"{r['schema_name']}.{r['object_name']}": r for r in sums}
    total_read = sum(_int(first_of(r, READ_COUNTERS)) or 0 for r in sums)
    total_changed = sum(_int(first_of(r, CHANGE_COUNTERS)) or 0 for r in sums)
    snapshots = tables_service.snapshots_of(session=session, instance_id=instance_id, tables=names)
    queries = _queries_by_table(session, settings, instance, window, list(names))
    tables = []
    for name, row in names.items():
        read, changed = _int(first_of(row, READ_COUNTERS)), _int(first_of(row, CHANGE_COUNTERS))
        snapshot = snapshots.get(name.lower())
        document = snapshot.document if snapshot else {}
        tables.append(
            TableWorkloadOut(
                table=name,
                rows_read=read,
                rows_changed=changed,
                rows_inserted=_int(row["count_insert"]),
                rows_updated=_int(row["count_update"]),
                rows_deleted=_int(row["count_delete"]),
                rows_changed_x_indexes=_int(row["rows_changed_x_indexes"]),
                io_wait_s=row["sum_timer_wait"],
                rows_read_per_s=_rate(read, seconds),
                rows_changed_per_s=_rate(changed, seconds),
                read_share=(read or 0) / total_read if total_read else 0.0,
                changed_share=(changed or 0) / total_changed if total_changed else 0.0,
                row_estimate=_int(document.get("rows")),
                data_bytes=_int(document.get("data_length")),
                index_bytes=_int(document.get("index_length")),
                snapshot_taken_at=snapshot.taken_at if snapshot else None,
                queries=queries.get(name.lower(), [])[:QUERIES_PER_TABLE],
            )
        )
    tables.sort(key=lambda t: (-(t.rows_read or 0), -(t.rows_changed or 0), t.table))
    return TablesOut(
        instance_id=instance.id,
        instance=instance.name,
        from_=window.start,
        to=window.end,
        seconds=seconds,
        source=coverage.origin if coverage else None,
        since=coverage.first_seen if coverage else None,
        coverage=coverage_out(coverage),
        tables=tables,
    )


def coverage_out(coverage: Window | None) -> CoverageOut | None:
    """The coverage as the API shows it, the break's reason in words."""
    if coverage is None:
        return None
    return CoverageOut(
        source=coverage.origin,
        first_seen=coverage.first_seen,
        since=coverage.since,
        until=coverage.until,
        broken_at=coverage.broken_at,
        break_reason=BREAKS.get(coverage.break_reason or "", coverage.break_reason),
    )


def _covered_seconds(window: TimeWindow, coverage: Window | None) -> float:
    """The seconds of the window the statistics cover (rates are per covered second)."""
    if coverage is None:
        return 0.0
    start, end = max(window.start, coverage.first_seen), min(window.end, coverage.until)
    return max((end - start).total_seconds(), 0.0)


def _queries_by_table(
    session: Session,
    settings: Settings,
    instance: Instance,
    window: TimeWindow,
    tables: Sequence[str],
) -> dict[str, list[TableQueryOut]]:
    """The query classes naming each table (lower-case ``db.table``), heaviest first.

    A class names a table as ``db.t`` or as ``t`` in the schema it ran in; the store knows
    the schema per bucket, so unqualified names are read per schema (of the tables at hand),
    qualified ones from the instance's whole list.
    """
    wanted = {name.lower() for name in tables}
    if not wanted:
        return {}
    everything = _top(session, settings, instance, window, None)
    total_load = sum(row.load for row in everything)
    # Per table, per (query, schema it ran in or None for a qualified name): its rows.
    found: dict[str, dict[tuple[str, str | None], QueryRow]] = defaultdict(dict)
    for row in everything:
        qualified = [name for name in row.tables if "." in name]
        for name in tables_service.qualify_tables(qualified, None):
            if name in wanted:
                found[name][(row.query_id, None)] = row
    schemas = list(dict.fromkeys(name.split(".", 1)[0] for name in tables))[:QUERY_SCHEMAS]
    for schema in schemas:
        for row in _top(session, settings, instance, window, schema):
            bare = [name for name in row.tables if "." not in name]
            for name in tables_service.qualify_tables(bare, schema):
                if name in wanted:
                    found[name][(row.query_id, schema)] = row
    return {
        table: sorted(
            (_table_query(row, schema, total_load) for (_, schema), row in rows.items()),
            key=lambda q: (-q.load, q.query_id),
        )
        for table, rows in found.items()
    }


def _top(
    session: Session,
    settings: Settings,
    instance: Instance,
    window: TimeWindow,
    schema: str | None,
) -> list[QueryRow]:
    return queries_service.top_queries(
        session=session,
        settings=settings,
        window=window,
        limit=QUERIES_PER_SCHEMA,
        offset=0,
        sparkline_points=1,
        flt=BucketFilter(instances=(instance.name,), schema=schema),
    ).rows


def _table_query(row: QueryRow, schema: str | None, total_load: float) -> TableQueryOut:
    """A query class's figures on a table: over the instance, or in the schema it ran in."""
    return TableQueryOut(
        query_id=row.query_id,
        fingerprint=row.fingerprint,
        schema_=schema,
        calls=row.count,
        load=row.load,
        share=row.load / total_load if total_load else 0.0,
    )


def user_workload(
    *, session: Session, settings: Settings, instance_id: int, window: TimeWindow
) -> UsersOut:
    """Per account: USER_STATISTICS' figures summed over the window where the server keeps
    them (mapped from MariaDB's or Percona Server's columns), else what its query classes
    did (statements, query time, rows examined and sent); both where both are known.

    Raises:
        quanta.instances.service.InstanceNotFound: no such instance.
    """
    instance = find_instance(session=session, instance_id=instance_id)
    mapping = user_columns()
    stats = {
        row["object_name"]: row
        for row in repository.sums(
            session, instance_id, "user", read_plan(settings=settings, window=window)
        )
    }
    userstat = any(mapping.layout_of(row) for row in stats.values())
    queries = {
        group.value: group
        for group in queries_groups.top_groups(
            session=session,
            settings=settings,
            window=window,
            group_by="user",
            limit=MAX_USERS,
            offset=0,
            sparkline_points=1,
            flt=BucketFilter(instances=(instance.name,)),
        ).groups
        or []
    }
    own = monitoring_user(settings, instance)
    users = []
    for name in sorted(set(stats) | set(queries)):
        figures = mapping.figures_of(stats.get(name, {}))
        group = queries.get(name)
        if not userstat and group is not None:  # the store's rows stand in for the server's
            figures["rows_read"], figures["rows_sent"] = group.rows_examined, group.rows_sent
        users.append(
            UserWorkloadOut(
                user=name,
                own=name == own,
                **_typed(figures),
                calls=group.count if group else None,
                query_time_s=group.query_time if group else None,
                load_share=group.share if group else None,
            )
        )
    users.sort(key=lambda u: (-(u.cpu_time_s or 0), -(u.query_time_s or 0), u.user))
    return UsersOut(
        instance_id=instance.id,
        instance=instance.name,
        from_=window.start,
        to=window.end,
        seconds=window.seconds,
        source="userstat" if userstat else "queries",
        users=users,
    )


def _typed(figures: Mapping[str, float | None]) -> dict[str, Any]:
    """Counts as integers, seconds (``_s``) as they are."""
    return {
        name: value if name.endswith("_s") or value is None else int(value)
        for name, value in figures.items()
    }


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _rate(value: int | None, seconds: float) -> float | None:
    return None if value is None or seconds <= 0 else value / seconds
