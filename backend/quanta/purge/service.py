"""Delete every stored trace of one query class (privacy requests, leaked literals).

Its own package because it reaches across the store: the tables of every domain that hold a
query_id, and the raw batch payloads of ingest (which itself writes into queries).
"""

from sqlalchemy import Table, delete, func, select
from sqlalchemy.orm import Session

from quanta.core import errors
from quanta.core.db import Base
from quanta.ingest.service import drop_processed_payloads

QUERY_ID_COLUMN = "query_id"


class NothingToPurge(errors.NotFound):
    """No table holds rows for that query_id."""


def tables_with_query_id() -> list[Table]:
    """Every table with a query_id column, children before the parents they reference.

    Read from the metadata rather than listed by hand, so buckets of every resolution,
    examples, the catalog row and whatever a domain adds later (runs, suggestions, ...) are
    all covered without a change here.
    """
    import quanta.models  # noqa: F401  (every model registered on Base.metadata)

    found = [t for t in Base.metadata.sorted_tables if QUERY_ID_COLUMN in t.c]
    return list(reversed(found))


def purge_query(*, session: Session, query_id: str) -> dict[str, int]:
    """Delete all rows of ``query_id`` from every table; returns the rows deleted per table.

    Raw batch payloads hold the query's statements too: every payload no longer queued is
    dropped (counted as ``ingest_batches``), so nothing of the query is left behind.
    """
    deleted: dict[str, int] = {}
    for table in tables_with_query_id():
        column = table.c[QUERY_ID_COLUMN]
        # Count first: rowcount is not reliable for every dialect and partitioned table.
        count = session.execute(
            select(func.count()).select_from(table).where(column == query_id)
        ).scalar_one()
        if count:
            session.execute(delete(table).where(column == query_id))
            deleted[table.name] = count
    if not deleted:
        raise NothingToPurge(f"No stored data for query_id '{query_id}'.")
    payloads = drop_processed_payloads(session=session)
    if payloads:
        deleted["ingest_batches"] = payloads
    session.flush()
    return deleted
