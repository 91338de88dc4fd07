"""Response bodies of the schema snapshot endpoint."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


class ServerOut(BaseModel):
    """The server a snapshot was read from."""

    flavor: str = Field(description="mariadb or mysql (Percona Server is mysql here).")
    version: str


class TableSnapshotOut(BaseModel):
    """The latest snapshot of one table, in the index advisor's per-table format."""

    instance_id: int
    table: str = Field(description="db.table, lower case.")
    taken_at: datetime = Field(description="When the snapshot was read from the server.")
    changed_at: datetime = Field(description="When its structure (columns, keys) last changed.")
    content_hash: str = Field(description="Changes exactly when the structure changes.")
    server: ServerOut
    document: dict[str, Any] = Field(
        description="engine, rows, data_length, index_length, columns, primary_key, "
        "primary_key_parts, indexes (with cardinality, sub_part, desc, visible), "
        "functional_indexes."
    )


class QueryTableOut(BaseModel):
    """A table a query references, with its latest snapshot on each instance that has one."""

    name: str = Field(description="As the query writes it (db.table or table).")
    snapshots: list[TableSnapshotOut]


class QueryTablesOut(BaseModel):
    """The tables a query references (from its fingerprint, parsed with sqlglot)."""

    query_id: str
    tables: list[QueryTableOut]
