"""Use cases of schema snapshots: take them from the monitored server, serve them as the
index advisor's JSON.

A snapshot is read through :func:`quanta.monitored.schema_snapshot` (information_schema and
SHOW INDEX in a read-only transaction, nothing else) and kept per (instance, table), replaced
by each refresh. Its ``content_hash`` covers the structure only (engine, columns, keys,
indexes): row estimates and cardinalities move every day and are not a schema change.
"""

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from quanta.analysis.ddl import changed_table
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.core.tasks import REFRESH_TABLES_TASK, enqueue_after_commit
from quanta.instances.models import Instance
from quanta.instances.service import find_instance, monitored_settings, require_connection
from quanta.monitored import schema_snapshot
from quanta.queries.service import QueryNotFound as QueryNotFound  # query_tables raises it
from quanta.queries.service import find_query
from quanta.tables import repository
from quanta.tables.models import TableSnapshot
from quanta.tables.schemas import QueryTableOut, QueryTablesOut, ServerOut, TableSnapshotOut


class TableNotSnapshotted(errors.NotFound):
    """No snapshot of this table was ever taken for this instance."""


class InvalidTableName(errors.InvalidRequest):
    """A table name that is not ``database.table``."""


@dataclass(frozen=True, slots=True)
class SnapshotRefresh:
    """What one refresh did, by ``db.table``.

    ``taken``: read from the server now; ``changed``: the ones whose structure differs from
    the previous snapshot, or that were snapshotted before and are gone now (a first
    snapshot is not a change); ``fresh``: younger than the maximum age, not read;
    ``missing``: not found on the server (a stored snapshot of one is deleted).
    """

    taken: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    fresh: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


def qualify_tables(tables: Iterable[str], default_db: str | None) -> list[str]:
    """``db.table`` names, lower case, sorted: unqualified ones get ``default_db``, or are
    left out when there is none (the server could not resolve them either)."""
    qualified: set[str] = set()
    for name in tables:
        parts = [part.strip("`") for part in name.split(".", 1)]
        if len(parts) == 2 and all(parts):
            qualified.add(f"{parts[0]}.{parts[1]}".lower())
        elif len(parts) == 1 and parts[0] and default_db:
            qualified.add(f"{default_db}.{parts[0]}".lower())
    return sorted(qualified)


def changed_tables(statements: Iterable[tuple[str, str | None]]) -> list[str]:
    """The ``db.table`` names whose structure these (statement, database) pairs change:
    ALTER TABLE, CREATE INDEX, DROP INDEX (quanta.analysis.ddl)."""
    names: set[str] = set()
    for sql, database in statements:
        table = changed_table(sql)
        if table is not None:
            names.update(qualify_tables([table], database))
    return sorted(names)


def refresh_soon(
    *,
    session: Session,
    settings: Settings,
    instance: Instance,
    tables: Sequence[str],
    first_snapshots: bool = False,
    now: datetime | None = None,
) -> dict[str, datetime]:
    """After the commit, queue a re-read of these tables' snapshots (and the re-evaluation of
    the suggestions on those that changed) when the instance has a DSN: a schema change just
    seen should not wait for the daily refresh. What ingest sees is hostile input (anyone who
    can reach the server can put a statement in its log), so:

    * only tables already snapshotted are re-read: a statement never makes Quanta read a
      table (or a database) it did not read before. ``first_snapshots``: tables never read
      are read too, for names the server's own counters gave (table statistics: a table
      someone read, not a name someone wrote), which their caller bounds per batch;
    * at most one re-read per table per QUANTA_SNAPSHOT_REFRESH_MIN_SECONDS: the first at
      once, one asked for sooner after it is queued for the end of the window
      (:func:`refresh_due`), and one already queued absorbs the rest.

    Returns when each queued table's re-read is due.
    """
    if not tables or instance.dsn_encrypted is None:
        return {}
    now = now or utcnow()
    window = timedelta(seconds=settings.snapshot_refresh_min_seconds)
    names = qualify_tables(tables, None)
    queued: dict[str, datetime] = {}
    rows = repository.lock_many(session, instance.id, names)
    for row in rows:
        due = refresh_due(taken_at=row.taken_at, queued=row.refresh_due_at, now=now, window=window)
        if due is not None:
            row.refresh_due_at = queued[row.table_name] = due
    if first_snapshots:
        queued.update(dict.fromkeys(set(names) - {row.table_name for row in rows}, now))
    by_due: dict[datetime, list[str]] = {}
    for name, due in sorted(queued.items()):
        by_due.setdefault(due, []).append(name)
    for due, names in by_due.items():
        _enqueue_refresh(session, settings, instance.id, names, (due - now).total_seconds())
    return queued


def refresh_due(
    *, taken_at: datetime, queued: datetime | None, now: datetime, window: timedelta
) -> datetime | None:
    """When a table's re-read asked for ``now`` is due, or None: one is queued already.

    ``queued`` is when the previous re-read asked for this way was due. One is queued when
    none is (or the one queued was lost: due a window ago and still not done), no sooner
    than a window after the previous one; a snapshot read for another reason (advice, the
    daily refresh) does not delay it: the first schema change seen is read at once.

    Example:
        >>> from datetime import datetime as dt
        >>> five = timedelta(minutes=5)
        >>> refresh_due(taken_at=dt(2026, 1, 2), queued=None, now=dt(2026, 1, 2, 0, 1), window=five)
        datetime.datetime(2026, 1, 2, 0, 1)
        >>> refresh_due(  # the previous one ran at 00:00:10
        ...     taken_at=dt(2026, 1, 2, 0, 0, 10), queued=dt(2026, 1, 2), now=dt(2026, 1, 2, 0, 1),
        ...     window=five)
        datetime.datetime(2026, 1, 2, 0, 5)
    """
    pending = queued is not None and queued > taken_at and queued > now - window
    if pending:
        return None
    return max(now, queued + window) if queued is not None else now


def _enqueue_refresh(
    session: Session, settings: Settings, instance_id: int, tables: list[str], delay: float
) -> None:
    enqueue_after_commit(
        session,
        settings,
        REFRESH_TABLES_TASK,
        [instance_id, tables],
        countdown=max(0.0, delay),
        otherwise="the daily refresh still reads them",
    )


def stored_documents(
    session: Session, instance_id: int, tables: Sequence[str]
) -> dict[str, Mapping[str, Any]]:
    """The stored snapshot documents of these tables (``db.table``), by name; none read."""
    stored = repository.find_many(session, instance_id, list(tables))
    return {name: stored[name].document for name in tables if name in stored}


def stale_tables(
    *,
    session: Session,
    settings: Settings,
    instance_id: int,
    tables: Iterable[str],
    now: datetime | None = None,
) -> list[str]:
    """Which of these tables (``db.table``) have no snapshot, or one older than
    QUANTA_SCHEMA_SNAPSHOT_MAX_AGE_HOURS: what a refresh would read (lower case, sorted)."""
    names = qualify_tables(tables, None)
    stored = repository.find_many(session, instance_id, names)
    cutoff = (now or utcnow()) - timedelta(hours=settings.schema_snapshot_max_age_hours)
    return [n for n in names if _is_stale(stored.get(n), cutoff)]


def _is_stale(row: TableSnapshot | None, cutoff: datetime) -> bool:
    return row is None or row.taken_at < cutoff


def snapshots_of(
    *, session: Session, instance_id: int, tables: Iterable[str]
) -> dict[str, TableSnapshotOut]:
    """The latest snapshots of these tables (``db.table``) by lower-case name; tables never
    snapshotted are absent."""
    stored = repository.find_many(session, instance_id, qualify_tables(tables, None))
    return {name: _snapshot_out(row) for name, row in stored.items()}


def refresh_if_plan_is_newer(
    *,
    session: Session,
    settings: Settings,
    instance: Instance,
    tables: Sequence[str],
    plan: Sequence[Mapping[str, Any]] | None,
) -> list[str]:
    """When a tabular EXPLAIN of a query on these tables (``db.table``) uses an index none of
    their stored snapshots has (it was created since), queue their refresh (refresh_soon,
    debounced); the tables queued. Tables never snapshotted are left to the advisor, which
    reads them."""
    used = {
        name.strip().lower()
        for row in plan or []
        if row.get("key")
        for name in str(row["key"]).split(",")
    }
    stored = repository.find_many(session, instance.id, list(tables))
    if not used or not stored:
        return []
    known = {
        name.lower() for snapshot in stored.values() for name, _ in indexes_of(snapshot.document)
    }
    if used <= known:
        return []
    return sorted(
        refresh_soon(session=session, settings=settings, instance=instance, tables=sorted(stored))
    )


def structure_hash(document: Mapping[str, Any]) -> str:
    """SHA-256 of a table document's structure: engine, columns (type, nullability), primary
    key and indexes (columns, direction, prefix, uniqueness, visibility); statistics ignored.

    Example:
        >>> a = {"engine": "InnoDB", "rows": 10, "columns": {"id": {"type": "int"}}}
        >>> structure_hash(a) == structure_hash({**a, "rows": 99})
        True
    """
    columns = document.get("columns") or {}
    structure = {
        "engine": str(document.get("engine") or "").lower(),
        "columns": {
            str(name).lower(): [str(c.get("type", "")), bool(c.get("nullable", True))]
            for name, c in columns.items()
        },
        "primary_key": [str(c).lower() for c in document.get("primary_key") or []],
        "indexes": sorted(
            _index_structure(index)
            for key in ("indexes", "functional_indexes")
            for index in document.get(key) or []
        ),
    }
    encoded = json.dumps(structure, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()


def _index_structure(index: Mapping[str, Any]) -> str:
    parts = []
    for part in index.get("columns") or []:
        if isinstance(part, Mapping):
            parts.append(
                [str(part.get("name")).lower(), bool(part.get("desc")), part.get("sub_part")]
            )
        else:
            parts.append([str(part).lower(), False, None])
    described = [
        str(index.get("name")).lower(),
        parts,
        bool(index.get("unique")),
        bool(index.get("visible", True)),
    ]
    return json.dumps(described, separators=(",", ":"))


def refresh_tables(
    *,
    session: Session,
    settings: Settings,
    instance_id: int,
    tables: Iterable[str],
    force: bool = False,
    now: datetime | None = None,
) -> SnapshotRefresh:
    """Snapshot the tables (``db.table``) whose snapshot is missing or older than
    QUANTA_SCHEMA_SNAPSHOT_MAX_AGE_HOURS (all of them with ``force``), in one read-only
    session on the instance's server.

    Raises:
        quanta.instances.service.InstanceNotFound, NoConnection, InstanceUnreachable: no
            such instance, no DSN, a DSN that cannot be used.
        quanta.monitored.MonitoredError: the server is unreachable or refused a read.
    """
    now = now or utcnow()
    names = qualify_tables(tables, None)
    stored = repository.find_many(session, instance_id, names)
    cutoff = now - timedelta(hours=settings.schema_snapshot_max_age_hours)
    stale = [n for n in names if force or _is_stale(stored.get(n), cutoff)]
    fresh = tuple(n for n in names if n not in stale)
    if not stale:
        return SnapshotRefresh(fresh=fresh)
    instance = find_instance(session=session, instance_id=instance_id)
    snapshot = schema_snapshot(
        require_connection(settings, instance), stale, settings=monitored_settings(settings)
    )
    server = snapshot["server"]
    changed: list[str] = []
    for name, document in sorted(snapshot["tables"].items()):
        digest = structure_hash(document)
        row = stored.get(name)
        if row is None:
            row = TableSnapshot(instance_id=instance_id, table_name=name, changed_at=now)
            session.add(row)
        elif row.content_hash != digest:
            row.changed_at = now
            changed.append(name)
        row.taken_at = now
        row.server_flavor = str(server["flavor"])
        row.server_version = str(server["version"])
        row.content_hash = digest
        row.document = document
    for name in snapshot["missing"]:
        gone = stored.get(name)
        if gone is not None:  # dropped or renamed on the server: advice on it is void
            session.delete(gone)
            changed.append(name)
    session.flush()
    return SnapshotRefresh(
        taken=tuple(sorted(snapshot["tables"])),
        changed=tuple(changed),
        fresh=fresh,
        missing=tuple(sorted(snapshot["missing"])),
    )


def schema_document(
    *, session: Session, instance_id: int, tables: Iterable[str] | None
) -> dict[str, Any]:
    """The stored snapshots of ``tables`` (None: all) as the advisor's JSON.

    The document is ``{"server", "tables"}``. Tables never snapshotted are absent; the
    server is the one of the newest snapshot, None when there is no snapshot at all.
    """
    rows = (
        repository.all_of(session, instance_id)
        if tables is None
        else repository.find_many(session, instance_id, qualify_tables(tables, None))
    )
    newest = max(rows.values(), key=lambda r: r.taken_at, default=None)
    server = {"flavor": newest.server_flavor, "version": newest.server_version} if newest else None
    return {"server": server, "tables": {name: row.document for name, row in rows.items()}}


def table_snapshot(*, session: Session, instance_id: int, table: str) -> TableSnapshotOut:
    """The latest snapshot of ``db.table`` on an instance, with when it was taken.

    Raises:
        InvalidTableName, quanta.instances.service.InstanceNotFound, TableNotSnapshotted.
    """
    names = qualify_tables([table], None)
    if len(names) != 1 or table.count(".") != 1:
        raise InvalidTableName(
            f"{table!r} is not a table name: use database.table, e.g. shop.orders."
        )
    find_instance(session=session, instance_id=instance_id)
    row = repository.find(session, instance_id, names[0])
    if row is None:
        raise TableNotSnapshotted(
            f"No snapshot of {names[0]} was taken on instance {instance_id} yet: snapshots are "
            "taken when a query touching the table is advised (POST "
            "/api/v1/queries/{query_id}/suggestions) and daily for the top queries."
        )
    return _snapshot_out(row)


def indexes_of(document: Mapping[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """(name, column names lower case) of every index of a table document, primary key first."""
    found: list[tuple[str, tuple[str, ...]]] = []
    primary = document.get("primary_key") or []
    if primary:
        found.append(("PRIMARY", tuple(str(c).lower() for c in primary)))
    for index in document.get("indexes") or []:
        columns = tuple(
            str(p.get("name") if isinstance(p, Mapping) else p).lower()
            for p in index.get("columns") or []
        )
        found.append((str(index.get("name")), columns))
    return found


def query_tables(*, session: Session, query_id: str) -> QueryTablesOut:
    """The tables a query references, each with its latest snapshot per instance.

    Raises:
        QueryNotFound: the query catalog has no such query (quanta.queries.service).
    """
    tables = list(find_query(session=session, query_id=query_id).tables or [])
    snapshots = repository.named(session, tables)
    out = []
    for name in tables:
        wanted = name.lower().strip("`")
        mine = [
            _snapshot_out(row)
            for row in snapshots
            if row.table_name == wanted or row.table_name.split(".", 1)[1] == wanted
        ]
        out.append(QueryTableOut(name=name, snapshots=mine))
    return QueryTablesOut(query_id=query_id, tables=out)


def _snapshot_out(row: TableSnapshot) -> TableSnapshotOut:
    return TableSnapshotOut(
        instance_id=row.instance_id,
        table=row.table_name,
        taken_at=row.taken_at,
        changed_at=row.changed_at,
        content_hash=row.content_hash,
        server=ServerOut(flavor=row.server_flavor, version=row.server_version),
        document=row.document,
    )
