"""Schema snapshots of the tables a query references, in the index advisor's format.

The document is exactly what :func:`quanta.analysis.advisor.parse_schema` reads, plus
fields it ignores and people want: per table ``data_length``, ``index_length`` and
``primary_key_parts``; per index column ``cardinality``; per index ``visible`` and
``comment``; functional indexes (MySQL 8) under ``functional_indexes`` (the advisor needs
column names); tables that were not found under ``missing``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from quanta.analysis.sqltext import quote_ident, unquote_ident
from quanta.monitored.connection import GuardedConnection
from quanta.monitored.errors import StatementRefused
from quanta.monitored.options import ConnectionOptions, MonitoredSettings

__all__ = ["schema_snapshot"]

PRIMARY = "PRIMARY"
DESCENDING = "D"
_NO = "NO"
_YES = "YES"


def schema_snapshot(
    options: ConnectionOptions,
    tables: Iterable[str],
    *,
    settings: MonitoredSettings | None = None,
) -> dict[str, Any]:
    """Read columns, keys, indexes and sizes of ``tables`` (``db.table``, or ``table`` in
    ``options.database``), all in one read-only transaction.

    ``distinct`` of a column is the cardinality SHOW INDEX gives for an index that starts
    with it (the largest when several do); columns no index starts with have none.

    Raises:
        StatementRefused: a table name has no database and ``options.database`` is unset.
        ConnectionFailed, ServerError: as for explain.
    """
    names = sorted({_qualified(name, options.database) for name in tables})
    with GuardedConnection(options, settings) as conn, conn.read_only():
        snapshot: dict[str, Any] = {
            "server": {"flavor": conn.flavor, "version": conn.version},
            "tables": {},
            "missing": [],
        }
        for database, table in names:
            described = _table(conn, database, table)
            key = f"{database}.{table}".lower()
            if described is None:
                snapshot["missing"].append(key)
            else:
                snapshot["tables"][key] = described
    return snapshot


def _qualified(name: str, default_db: str | None) -> tuple[str, str]:
    parts = [unquote_ident(part) for part in name.split(".", 1)]
    if len(parts) == 1:
        if not default_db:
            raise StatementRefused(f"table '{name}' has no database and no default is set")
        return default_db, parts[0]
    return parts[0], parts[1]


def _table(conn: GuardedConnection, database: str, table: str) -> dict[str, Any] | None:
    info = conn.query(
        "SELECT TABLE_TYPE, ENGINE, TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH "
        "FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
        (database, table),
    )
    if not info:
        return None
    row = info[0]
    columns = {
        str(c["COLUMN_NAME"]): {"type": str(c["COLUMN_TYPE"]), "nullable": c["IS_NULLABLE"] == _YES}
        for c in conn.query(
            "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION",
            (database, table),
        )
    }
    described: dict[str, Any] = {
        "engine": row["ENGINE"] or row["TABLE_TYPE"],
        "rows": _int(row["TABLE_ROWS"]),
        "data_length": _int(row["DATA_LENGTH"]),
        "index_length": _int(row["INDEX_LENGTH"]),
        "columns": columns,
    }
    qualified = f"{quote_ident(database)}.{quote_ident(table)}"
    described.update(_indexes(conn.query(f"SHOW INDEX FROM {qualified}")))
    _add_distinct(columns, described)
    return described


def _indexes(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """primary_key, primary_key_parts, indexes and functional_indexes from SHOW INDEX rows."""
    grouped: dict[str, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: (str(r["Key_name"]), int(r["Seq_in_index"]))):
        name = str(row["Key_name"])
        index = grouped.setdefault(name, _index_header(row))
        part: dict[str, Any] = {
            "name": row["Column_name"],
            "desc": row.get("Collation") == DESCENDING,
            "sub_part": _int(row.get("Sub_part")),
            "cardinality": _int(row.get("Cardinality")),
        }
        if row["Column_name"] is None:  # MySQL 8 functional key part
            part["name"] = f"({row.get('Expression')})"
            index["functional"] = True
        index["columns"].append(part)
    primary = grouped.pop(PRIMARY, None)
    functional = [i for i in grouped.values() if i.pop("functional", False)]
    return {
        "primary_key": [p["name"] for p in primary["columns"]] if primary else [],
        "primary_key_parts": primary["columns"] if primary else [],
        "indexes": [i for i in grouped.values() if i not in functional],
        "functional_indexes": functional,
    }


def _index_header(row: dict[str, Any]) -> dict[str, Any]:
    # MySQL 8 says Visible YES/NO; MariaDB 10.6+ says Ignored YES/NO.
    visible = row.get("Visible", _YES) == _YES and row.get("Ignored", _NO) == _NO
    return {
        "name": str(row["Key_name"]),
        "columns": [],
        "unique": not int(row["Non_unique"]),
        "type": str(row.get("Index_type") or "BTREE").lower(),
        "visible": visible,
        "comment": row.get("Index_comment") or "",
    }


def _add_distinct(columns: dict[str, dict[str, Any]], described: dict[str, Any]) -> None:
    """A column's distinct estimate: the cardinality of an index's first, whole column."""
    parts = [*described["primary_key_parts"][:1]]
    parts += [index["columns"][0] for index in described["indexes"]]
    for part in parts:
        column = columns.get(str(part["name"]))
        if column is None or part["sub_part"] is not None or part["cardinality"] is None:
            continue
        column["distinct"] = max(column.get("distinct", 0), part["cardinality"])


def _int(value: Any) -> int | None:
    return None if value is None else int(value)
