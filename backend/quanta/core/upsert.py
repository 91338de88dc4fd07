"""The generic upsert engine: add rows to a table, merging each into the stored row with the
same key, safely under concurrent writers, on PostgreSQL (COPY + set-based statements) and
SQLite (portable INSERT ... ON CONFLICT).

Used by the metric store (quanta.queries.writes) and the object statistics
(quanta.statistics.repository); it knows tables, keys and a ``combine`` function. Only its
``metrics`` mode knows a convention: columns ending in ``_min``/``_max`` merge as least and
greatest, the others add up, and a ``histogram`` column merges with analysis.histogram.
"""

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

from sqlalchemy import (
    JSON,
    Integer,
    Table,
    func,
    or_,
    select,
    text,
    tuple_,
    update,
)
from sqlalchemy import column as column_clause
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from quanta.analysis.histogram import merge_stored
from quanta.core.db import UTCDateTime

# Rows per INSERT/SELECT statement: keeps every statement under SQLite's 32766 parameters.
ROWS_PER_STATEMENT = 500

# combine(stored, new): the row to store when ``new`` meets the stored row of its key.
Combine = Callable[[Mapping[Any, Any], dict[str, Any]], dict[str, Any]]


def insert_for(session: Session) -> Any:
    """The dialect's INSERT construct (with on_conflict_do_*), PostgreSQL's or SQLite's."""
    # Both dialects speak INSERT ... ON CONFLICT with the same API.
    return postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert


def chunks(rows: Sequence[Any], size: int = ROWS_PER_STATEMENT) -> Iterator[Sequence[Any]]:
    """``rows`` in slices of ``size`` (one statement each)."""
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def merge_rows(
    session: Session,
    model: Any,
    key: Sequence[str],
    rows: Sequence[dict[str, Any]],
    combine: Combine,
    *,
    metrics: bool = False,
    merged_sql: Mapping[str, str] | None = None,
) -> None:
    """Add ``rows`` to ``model``'s table, merging each into the stored row with the same key.

    Insert the rows that are new (ON CONFLICT DO NOTHING; they are complete), lock the others
    (SELECT ... FOR UPDATE on PostgreSQL; SQLite serialises writers), merge them with
    ``combine(stored, new)`` and UPDATE them. Every step goes in key order, so concurrent
    workers take row locks in the same order and cannot deadlock; a concurrent insert of the
    same key waits for the other transaction and then finds the row, so no increment is lost.

    With ``metrics`` (rows of buckets or totals), PostgreSQL does not read the stored rows
    back to merge them: the UPDATE adds the metrics up itself (:func:`_merged_metric`, the
    same merge in SQL), and only their histograms, which SQL cannot merge, are merged here.
    ``merged_sql`` gives PostgreSQL the merge of other rows the same way: an SQL expression
    per column of the stored row ``t`` and the new one ``s`` (and ``s.draw``, a uniform
    random number per row), which ``combine`` computes on SQLite.
    """
    if not rows:
        return
    table: Table = model.__table__
    ordered = sorted(rows, key=key_getter(key))
    if not is_postgresql(session):
        _merge_rows_portable(session, model, key, ordered, combine)
    elif metrics:
        _merge_metrics_postgresql(session, table, key, ordered)
    elif merged_sql is not None:
        _merge_in_sql_postgresql(session, table, key, ordered, merged_sql)
    else:
        _merge_rows_postgresql(session, table, key, ordered, combine)


def _merge_in_sql_postgresql(
    session: Session,
    table: Table,
    key: Sequence[str],
    ordered: Sequence[dict[str, Any]],
    merged_sql: Mapping[str, str],
) -> None:
    """The rows whose key was stored already (see :func:`_stage_stored_keys`) merged by one
    UPDATE from the stage: nothing comes back to Python, and a column the merge keeps keeps
    its stored value as it is (long texts are not written again)."""
    stage = _stage_stored_keys(session, table, key, ordered)
    if stage is None:
        return
    session.execute(
        text(
            f"SELECT 1 FROM {table.name} AS t JOIN {stage} AS s ON {_match(key, 't', 's')} "
            f"ORDER BY {_columns_of(key, 't')} FOR UPDATE OF t"
        )
    )
    assignments = ", ".join(f"{name} = {expression}" for name, expression in merged_sql.items())
    session.execute(
        text(
            f"UPDATE {table.name} AS t SET {assignments} "
            f"FROM (SELECT *, random() AS draw FROM {stage}) AS s WHERE {_match(key, 't', 's')}"
        )
    )


def key_getter(key: Sequence[str]) -> Callable[[Mapping[Any, Any]], tuple[Any, ...]]:
    """A function giving a row's key as a tuple of the named values."""
    # A tuple whatever the number of names (itemgetter of one name gives the bare value).
    return itemgetter(*key) if len(key) > 1 else lambda row: (row[key[0]],)


def _merge_rows_portable(
    session: Session,
    model: Any,
    key: Sequence[str],
    ordered: Sequence[dict[str, Any]],
    combine: Combine,
) -> None:
    table: Table = model.__table__
    key_columns = [table.c[name] for name in key]
    key_of = key_getter(key)
    # executemany: SQLAlchemy sends the rows as multi-row INSERTs in order ("insertmanyvalues")
    # from one cached statement, within each database's parameter limit.
    insert_new = (
        insert_for(session)(table)
        .on_conflict_do_nothing(index_elements=list(key))
        .returning(*key_columns)
    )
    inserted = {tuple(r) for r in session.connection().execute(insert_new, ordered)}
    existing = [row for row in ordered if key_of(row) not in inserted]
    if not existing:
        return
    updates: list[dict[str, Any]] = []
    for chunk in chunks(existing):
        by_key = {key_of(row): row for row in chunk}
        stmt = (
            select(table)
            .where(tuple_(*key_columns).in_(list(by_key)))
            .order_by(*key_columns)
            .with_for_update()
        )
        for stored in session.execute(stmt).mappings():
            updates.append(combine(stored, by_key[key_of(stored)]))
    session.execute(update(model), updates)


def _merge_rows_postgresql(
    session: Session,
    table: Table,
    key: Sequence[str],
    ordered: Sequence[dict[str, Any]],
    combine: Combine,
) -> None:
    """The same merge in four statements, the rows sent with COPY (see
    :func:`_stage_stored_keys`); the rows whose key was stored already are locked, merged
    and updated, their new values sent as JSON (json_populate_recordset: a short fixed
    statement, the rows one parameter)."""
    stage = _stage_stored_keys(session, table, key, ordered)
    if stage is None:
        return
    # The columns by name, in the model's order: .columns() types the result by position.
    locked = session.execute(
        text(
            f"SELECT {_columns(table, 't')}, s.{STAGE_POSITION} FROM {table.name} AS t "
            f"JOIN {stage} AS s ON {_match(key, 't', 's')} "
            f"ORDER BY {_columns_of(key, 't')} FOR UPDATE OF t"
        ).columns(*table.c, column_clause(STAGE_POSITION, Integer))
    )
    updates = [combine(stored, ordered[stored[STAGE_POSITION]]) for stored in locked.mappings()]
    if not updates:
        return
    values = [column.name for column in table.c if column.name not in key]
    rows_of = f"json_populate_recordset(NULL::{table.name}, CAST(:rows AS json)) AS v"
    session.execute(
        text(
            f"UPDATE {table.name} AS t SET {', '.join(f'{n} = v.{n}' for n in values)} "
            f"FROM {rows_of} WHERE {_match(key, 't', 'v')}"
        ),
        {"rows": _json_rows(updates)},
    )


def _merge_metrics_postgresql(
    session: Session, table: Table, key: Sequence[str], ordered: Sequence[dict[str, Any]]
) -> None:
    """The metric merge: the rows whose key was stored already (see
    :func:`_stage_stored_keys`) are locked, their histograms merged here, and the stored
    rows updated from the stage by :func:`_merged_metric`."""
    stage = _stage_stored_keys(session, table, key, ordered)
    if stage is None:
        return
    with_histogram = HISTOGRAM in table.c
    histograms = f", t.{HISTOGRAM}, s.{HISTOGRAM}" if with_histogram else ""
    locked = session.execute(
        text(
            f"SELECT s.{STAGE_POSITION}{histograms} FROM {table.name} AS t "
            f"JOIN {stage} AS s ON {_match(key, 't', 's')} "
            f"ORDER BY {_columns_of(key, 't')} FOR UPDATE OF t"
        )
    ).all()
    if not locked:
        return
    merged = {
        row[0]: merge_stored(row[1], row[2])
        for row in locked
        if with_histogram and row[1] is not None and row[2] is not None
    }
    assignments = [
        f"{c.name} = {_merged_metric(c.name)}"
        for c in table.c
        if c.name not in key and c.name != HISTOGRAM
    ]
    joined = ""
    if with_histogram:
        # Merged where both have one; else the one there is.
        assignments.append(f"{HISTOGRAM} = COALESCE(h.{HISTOGRAM}, s.{HISTOGRAM}, t.{HISTOGRAM})")
        histograms = _copy_histograms(session, merged)
        joined = f"LEFT JOIN {histograms} AS h ON h.{STAGE_POSITION} = s.{STAGE_POSITION} "
    session.execute(
        text(
            f"UPDATE {table.name} AS t SET {', '.join(assignments)} FROM {stage} AS s "
            f"{joined}WHERE {_match(key, 't', 's')}"
        )
    )


def _copy_histograms(session: Session, merged: Mapping[int, bytes]) -> str:
    """Copy the merged histograms, by stage position, into this transaction's keyed staging
    table for them; its name.

    Joined as ``unnest`` of two bound arrays, they were a function scan the planner
    estimated at 100 rows and rescanned for each row updated, from a temporary file once
    they outgrew work_mem: at 500 servers an UPDATE of some thousands of hour rows took 80 s.
    """
    name = "stage_histograms"
    connection = session.connection()
    connection.exec_driver_sql(
        f"CREATE TEMP TABLE IF NOT EXISTS {name} "
        f"({STAGE_POSITION} integer PRIMARY KEY, {HISTOGRAM} bytea) ON COMMIT DELETE ROWS"
    )
    connection.exec_driver_sql(f"TRUNCATE {name}")
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    with cursor.copy(f"COPY {name} ({STAGE_POSITION}, {HISTOGRAM}) FROM STDIN") as copy:
        for row in merged.items():
            copy.write_row(row)
    return name


def _merged_metric(name: str) -> str:
    """SQL for a metric column of the stored row ``t`` merged with the new one ``s``: the
    least of minimums, the greatest of maximums, the sum of counts and sums; NULL (the
    source does not give the metric) and x give x."""
    if name.endswith("_min"):
        return f"LEAST(t.{name}, s.{name})"  # both ignore NULLs
    if name.endswith("_max"):
        return f"GREATEST(t.{name}, s.{name})"
    return f"COALESCE(t.{name} + s.{name}, t.{name}, s.{name})"


def _stage_stored_keys(
    session: Session, table: Table, key: Sequence[str], ordered: Sequence[dict[str, Any]]
) -> str | None:
    """Insert the rows whose key is new; leave the others in the staging table and return
    its name, or None when every row was new.

    The rows are copied into a temporary table of the same shape, numbered (COPY: psycopg
    writes them in C, PostgreSQL reads them without parsing SQL or JSON), and inserted from
    there; what was inserted leaves the stage, so the many new rows never come back to
    Python.
    """
    keys = ", ".join(key)
    stage = _copy_to_stage(session, table, ordered)
    inserted = session.execute(
        text(
            f"WITH inserted AS (INSERT INTO {table.name} ({_columns(table)}) "
            f"SELECT {_columns(table)} FROM {stage} "
            f"ORDER BY {keys} ON CONFLICT ({keys}) DO NOTHING RETURNING {keys}) "
            f"DELETE FROM {stage} AS s USING inserted AS t WHERE {_match(key, 's', 't')}"
        )
    )
    if inserted.rowcount == len(ordered):  # type: ignore[attr-defined]
        return None  # not even a look for stored rows then
    # The rows left are joined with the table: tell the planner how many there are (a
    # temporary table has no statistics; it planned a scan of the whole table instead of
    # a probe of its key per row), and how many the table holds.
    session.connection().exec_driver_sql(f"ANALYZE {stage}")
    _analyze_stale_partitions(session, table)
    return stage


# A partition's statistics are stale when more rows changed since its last ANALYZE than this
# many, or this share of the rows it had then (autovacuum's default share is 10%, looked at
# once a minute at best).
STALE_ROWS_CHANGED = 10_000
STALE_SHARE_CHANGED = 0.2


def _analyze_stale_partitions(session: Session, table: Table) -> None:
    """ANALYZE the partitions of ``table`` (or the table) whose statistics are stale.

    A roll-up's first round into a new month fills its hour partition with hundreds of
    thousands of rows before autovacuum looks at it; planned on the empty partition's
    statistics, the join with the stage probed the (query_id, bucket_start) index and
    filtered some 1,700 rows per stage row instead of looking up its key: 81 s for one
    statement of bench/capacity.py at 500 servers.
    """
    stale = session.scalars(
        text(
            "SELECT CAST(CAST(p.relid AS regclass) AS text) "
            "FROM pg_partition_tree(CAST(:table AS regclass)) AS p "
            "JOIN pg_class AS c ON c.oid = p.relid "
            "JOIN pg_stat_user_tables AS s ON s.relid = p.relid "
            "WHERE p.isleaf AND s.n_mod_since_analyze > "
            "GREATEST(:rows, :share * GREATEST(c.reltuples, 0))"
        ),
        {"table": table.name, "rows": STALE_ROWS_CHANGED, "share": STALE_SHARE_CHANGED},
    ).all()
    for name in stale:
        session.connection().exec_driver_sql(f"ANALYZE {name}")


HISTOGRAM = "histogram"

# The stage's extra column: the position of the row in the rows merged.
STAGE_POSITION = "stage_position"


def _columns(table: Table, alias: str | None = None) -> str:
    return _columns_of([c.name for c in table.c], alias)


def _columns_of(names: Sequence[str], alias: str | None = None) -> str:
    return ", ".join(f"{alias}.{name}" if alias else name for name in names)


def _match(key: Sequence[str], left: str, right: str) -> str:
    return " AND ".join(f"{left}.{name} = {right}.{name}" for name in key)


def insert_or_widen(
    session: Session,
    model: Any,
    key: Sequence[str],
    rows: Sequence[dict[str, Any]],
    *,
    least: Sequence[str] = (),
    greatest: Sequence[str] = (),
) -> None:
    """Insert ``rows``; where a row's key is stored, lower its ``least`` columns and raise
    its ``greatest`` ones to the row's values, and write nothing when they cover them.

    On PostgreSQL the rows go by COPY to the stage and one fixed statement merges them (a
    statement per row, or one large one psycopg parses afresh, cost a batch some 90 us a
    bucket for its catalog rows alone); in key order, as every writer.
    """
    if not rows:
        return
    table: Table = model.__table__
    ordered = sorted(rows, key=key_getter(key))
    if not is_postgresql(session):
        stmt = insert_for(session)(table)
        new = stmt.excluded
        stmt = stmt.on_conflict_do_update(
            index_elements=list(key),
            set_={
                **{name: func.min(table.c[name], new[name]) for name in least},
                **{name: func.max(table.c[name], new[name]) for name in greatest},
            },
            where=or_(
                *(new[name] < table.c[name] for name in least),
                *(new[name] > table.c[name] for name in greatest),
            ),
        )
        session.connection().execute(stmt, ordered)
        return
    stage = _copy_to_stage(session, table, ordered)
    names = _columns_of(list(ordered[0]))
    keys = ", ".join(key)
    assignments = [f"{name} = LEAST(t.{name}, excluded.{name})" for name in least] + [
        f"{name} = GREATEST(t.{name}, excluded.{name})" for name in greatest
    ]
    widened = [f"excluded.{name} < t.{name}" for name in least] + [
        f"excluded.{name} > t.{name}" for name in greatest
    ]
    session.execute(
        text(
            f"INSERT INTO {table.name} AS t ({names}) SELECT {names} FROM {stage} "
            f"ORDER BY {keys} ON CONFLICT ({keys}) DO UPDATE SET {', '.join(assignments)} "
            f"WHERE {' OR '.join(widened)}"
        )
    )


def append_rows(session: Session, model: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    """Add ``rows`` to ``model``'s table as they are: no key, no merge, nothing read back.

    PostgreSQL receives them by COPY; SQLite by one cached multi-row INSERT.
    """
    if not rows:
        return
    table: Table = model.__table__
    if is_postgresql(session):
        _copy_rows(session, table.name, table, rows, numbered=False)
    else:
        session.connection().execute(table.insert(), rows)


def _copy_to_stage(session: Session, table: Table, rows: Sequence[Mapping[str, Any]]) -> str:
    """Copy rows, numbered, into this transaction's empty staging table for ``table``; its
    name.

    The staging table is a temporary copy of the table's columns and STAGE_POSITION, made
    once per connection and emptied at every commit; it lives in the session's own schema,
    so concurrent workers never see each other's.
    """
    stage = f"stage_{table.name}"
    connection = session.connection()
    connection.exec_driver_sql(
        f"CREATE TEMP TABLE IF NOT EXISTS {stage} "
        f"(LIKE {table.name} INCLUDING DEFAULTS, {STAGE_POSITION} integer) "
        "ON COMMIT DELETE ROWS"
    )
    connection.exec_driver_sql(f"TRUNCATE {stage}")
    _copy_rows(session, stage, table, rows, numbered=True)
    return stage


def _copy_rows(
    session: Session,
    target: str,
    table: Table,
    rows: Sequence[Mapping[str, Any]],
    *,
    numbered: bool,
) -> None:
    """COPY rows with ``table``'s columns (those the rows have) into ``target``; with
    ``numbered``, each row's position too (STAGE_POSITION)."""
    names = [column.name for column in table.c if column.name in rows[0]]
    values_of = itemgetter(*names)
    columns = [table.c[name] for name in names]
    # COPY skips SQLAlchemy's bind processing: the store keeps naive UTC times (see
    # core.db.UTCDateTime) and JSON columns as text. A batch has few distinct times.
    times = [n for n, column in enumerate(columns) if isinstance(column.type, UTCDateTime)]
    documents = [n for n, column in enumerate(columns) if isinstance(column.type, JSON)]
    naive: dict[datetime, datetime] = {}
    connection = session.connection()
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    listed = ", ".join([*names, *([STAGE_POSITION] if numbered else [])])
    with cursor.copy(f"COPY {target} ({listed}) FROM STDIN") as copy:
        for position, row in enumerate(rows):
            values = [*values_of(row), position] if numbered else list(values_of(row))
            for n in times:
                if (time := values[n]) is not None:
                    values[n] = naive.get(time) or naive.setdefault(time, _naive_utc(time))
            for n in documents:
                if values[n] is not None:
                    values[n] = json.dumps(values[n])
            copy.write_row(values)


def _naive_utc(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None)


def _json_rows(rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows as a JSON array in the text forms PostgreSQL reads back into the columns' types."""
    # `default` is called only for what JSON has no form for: per value, not per row.
    return json.dumps(rows, default=_json_value)


def _json_value(value: Any) -> str:
    if isinstance(value, datetime):  # the store keeps naive UTC (see core.db.UTCDateTime)
        return _naive_utc(value).isoformat()
    if isinstance(value, bytes):
        return "\\x" + value.hex()  # bytea's hex input format
    raise TypeError(f"no JSON form for {type(value).__name__}")


def is_postgresql(session: Session) -> bool:
    """Whether the store is PostgreSQL (else SQLite): partitions and COPY are its alone."""
    return session.get_bind().dialect.name == "postgresql"
