"""The schema snapshot the advisor works from: tables, columns, indexes and the server.

A snapshot is plain JSON, as the worker builds it from ``information_schema`` and
``SHOW INDEX``::

    {"server": {"flavor": "mariadb", "version": "10.11.6"},
     "tables": {"shop.orders": {"engine": "InnoDB", "rows": 10000000,
       "columns": {"id": {"type": "int", "nullable": false, "distinct": 10000000}},
       "primary_key": ["id"],
       "indexes": [{"name": "idx_customer", "columns": ["customer_id"], "unique": false}]}}}

``distinct`` is an estimate and may be missing. An index column is a name or
``{"name": "a", "desc": true, "sub_part": 10}``. Names are case-insensitive in MySQL for
columns and indexes, so they are lower-cased here; table keys are lower-cased too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Column",
    "Index",
    "IndexPart",
    "Schema",
    "SchemaError",
    "Server",
    "Table",
    "parse_schema",
    "type_width",
]

PRIMARY = "primary"
DEFAULT_ENGINE = "innodb"
# (flavor, first version with descending indexes): older servers parse DESC and ignore it.
DESC_INDEX_SINCE = {"mysql": (8, 0, 0), "mariadb": (10, 8, 0)}
# MySQL 8.0.13 added functional key parts; MariaDB needs a generated column instead.
FUNCTIONAL_INDEX_SINCE = {"mysql": (8, 0, 13)}
FLAVORS = ("mysql", "mariadb")
# Types an index cannot hold whole (TEXT/BLOB need a prefix), so never covering columns.
_LOB_TYPE_RE = re.compile(r"(tiny|medium|long)?(text|blob)\b|json|geometry|point|polygon")
_STRING_TYPE_RE = re.compile(r"(var)?char|(tiny|medium|long)?text|enum|set\b")
_VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
# Bytes per value by type (the MySQL manual's "Data Type Storage Requirements"; MariaDB's are
# the same). Strings count one byte per character, as for ASCII data: a utf8mb4 column may
# take up to four times that, so the widths are a lower bound for text.
_FIXED_BYTES = {
    "tinyint": 1, "bool": 1, "boolean": 1, "smallint": 2, "mediumint": 3, "int": 4,
    "integer": 4, "bigint": 8, "float": 4, "double": 8, "real": 8, "year": 1, "date": 3,
    "time": 3, "datetime": 5, "timestamp": 4, "uuid": 16, "inet6": 16, "inet4": 4,
}  # fmt: skip
# An off-page TEXT/BLOB/JSON keeps a 20-byte pointer in the row (DYNAMIC row format).
LOB_ROW_BYTES = 20
# A type the table above does not know: as wide as a BIGINT.
UNKNOWN_TYPE_BYTES = 8
_TYPE_RE = re.compile(r"([a-z0-9]+)\s*(?:\(([^)]*)\))?")
# Bytes of a DECIMAL by leftover digits (each full group of 9 digits takes 4 bytes).
_DECIMAL_LEFTOVER_BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


class SchemaError(ValueError):
    """The snapshot is not in the expected shape; the message says where."""


@dataclass(frozen=True)
class Server:
    """The server the snapshot comes from: what its optimizer and DDL support."""

    flavor: str
    version: tuple[int, int, int]

    @property
    def descending_indexes(self) -> bool:
        """Whether ``DESC`` in an index definition is honoured (MySQL 8.0+, MariaDB 10.8+)."""
        return self.version >= DESC_INDEX_SINCE[self.flavor]

    @property
    def functional_indexes(self) -> bool:
        """Whether an index may hold an expression (MySQL 8.0.13+)."""
        since = FUNCTIONAL_INDEX_SINCE.get(self.flavor)
        return since is not None and self.version >= since


@dataclass(frozen=True)
class Column:
    """One column: its type as written (``varchar(64)``), nullability, distinct estimate."""

    name: str
    type: str
    nullable: bool = True
    distinct: int | None = None

    @property
    def is_lob(self) -> bool:
        """TEXT, BLOB, JSON or spatial: not usable whole in a B-tree index."""
        return bool(_LOB_TYPE_RE.match(self.type))

    @property
    def width(self) -> int:
        """Bytes a value takes in a row or an index entry (see ``_FIXED_BYTES``).

        Example:
            >>> [Column("a", t).width for t in ("int", "decimal(10,2)", "varchar(20)", "text")]
            [4, 5, 21, 20]
        """
        return type_width(self.type)

    @property
    def is_string(self) -> bool:
        """A character type: compared to a number, every row is converted, so no index."""
        return bool(_STRING_TYPE_RE.match(self.type))


def type_width(column_type: str) -> int:
    """Bytes one value of a column type takes (strings: one byte per character)."""
    match = _TYPE_RE.match(column_type.strip())
    if not match:
        return UNKNOWN_TYPE_BYTES
    name, arguments = match.group(1), [a.strip() for a in (match.group(2) or "").split(",")]
    fractional = int(arguments[0]) if arguments[0].isdigit() else 0
    if name in ("datetime", "timestamp", "time"):
        return _FIXED_BYTES[name] + (fractional + 1) // 2
    if name in _FIXED_BYTES:
        return _FIXED_BYTES[name]
    if _LOB_TYPE_RE.match(name):
        return LOB_ROW_BYTES
    if name in ("decimal", "numeric", "dec", "fixed"):
        precision = int(arguments[0]) if arguments[0].isdigit() else 10
        scale = int(arguments[1]) if len(arguments) > 1 and arguments[1].isdigit() else 0
        return _decimal_bytes(precision - scale) + _decimal_bytes(scale)
    if name in ("char", "binary"):
        return int(arguments[0]) if arguments[0].isdigit() else 1
    if name in ("varchar", "varbinary"):
        length = int(arguments[0]) if arguments[0].isdigit() else 255
        return length + (1 if length < 256 else 2)
    if name == "bit":
        return ((int(arguments[0]) if arguments[0].isdigit() else 1) + 7) // 8
    if name == "enum":
        return 1 if len(arguments) < 256 else 2
    if name == "set":
        return min(8, (len(arguments) + 7) // 8)
    return UNKNOWN_TYPE_BYTES


def _decimal_bytes(digits: int) -> int:
    return digits // 9 * 4 + _DECIMAL_LEFTOVER_BYTES[digits % 9]


@dataclass(frozen=True)
class IndexPart:
    """One column of an index, with its direction and prefix length."""

    name: str
    desc: bool = False
    sub_part: int | None = None


@dataclass(frozen=True)
class Index:
    """An existing index. The primary key is an Index named ``primary``, unique."""

    name: str
    parts: tuple[IndexPart, ...]
    unique: bool = False
    kind: str = "btree"

    @property
    def columns(self) -> tuple[str, ...]:
        """The column names, in order."""
        return tuple(part.name for part in self.parts)


@dataclass(frozen=True)
class Table:
    """A table of the snapshot, named ``db.table``."""

    name: str
    engine: str
    rows: int | None
    columns: Mapping[str, Column]
    primary_key: tuple[str, ...]
    indexes: tuple[Index, ...]

    @property
    def clustered(self) -> bool:
        """InnoDB: every secondary index holds the primary key as an implicit suffix."""
        return self.engine == DEFAULT_ENGINE and bool(self.primary_key)

    @property
    def primary(self) -> Index | None:
        """The primary key as an Index, or None."""
        if not self.primary_key:
            return None
        return Index(PRIMARY, tuple(IndexPart(c) for c in self.primary_key), unique=True)

    @property
    def row_bytes(self) -> int:
        """The bytes of one row: the sum of its columns' widths (TEXT/BLOB as a pointer)."""
        return sum(column.width for column in self.columns.values())

    @property
    def all_indexes(self) -> tuple[Index, ...]:
        """The primary key (if any) followed by the secondary indexes."""
        primary = self.primary
        return (primary, *self.indexes) if primary else self.indexes


@dataclass(frozen=True)
class Schema:
    """A snapshot: the server and the tables by lower-cased ``db.table``."""

    server: Server
    tables: Mapping[str, Table]

    def find_table(self, name: str, default_db: str | None = None) -> Table | None:
        """Look a table up by ``db.t`` or ``t`` (in ``default_db``, else if unique by name).

        Example:
            >>> schema = parse_schema({"server": {"flavor": "mysql", "version": "8.0.36"},
            ...     "tables": {"shop.t": {"columns": {"id": {"type": "int"}}}}})
            >>> schema.find_table("t").name
            'shop.t'
        """
        key = name.lower()
        if "." in key:
            return self.tables.get(key)
        if default_db:
            return self.tables.get(f"{default_db.lower()}.{key}")
        matches = [t for full, t in self.tables.items() if full.split(".", 1)[1] == key]
        return matches[0] if len(matches) == 1 else None


def parse_schema(data: Any) -> Schema:
    """Build a Schema from a decoded JSON snapshot, checking its shape.

    Args:
        data: The decoded JSON (see the module docstring).

    Returns:
        The snapshot with names lower-cased.

    Raises:
        SchemaError: a required field is missing or of the wrong type.

    Example:
        >>> schema = parse_schema({"server": {"flavor": "mariadb", "version": "10.6.12"},
        ...     "tables": {"shop.t": {"columns": {"id": {"type": "int"}},
        ...                           "primary_key": ["id"]}}})
        >>> schema.server.descending_indexes, schema.tables["shop.t"].clustered
        (False, True)
    """
    root = _mapping(data, "snapshot")
    server = _parse_server(_mapping(root.get("server"), "server"))
    tables = _mapping(root.get("tables"), "tables")
    parsed: dict[str, Table] = {}
    for name, table in tables.items():
        if not isinstance(name, str) or name.count(".") != 1:
            raise SchemaError(f"table key {name!r} must be 'database.table'")
        parsed[name.lower()] = _parse_table(name.lower(), _mapping(table, f"tables[{name!r}]"))
    return Schema(server, parsed)


def parse_table(name: str, data: Any) -> Table:
    """Build one Table from its snapshot document (``db.table`` and its JSON, as in
    :func:`parse_schema`'s ``tables``).

    Raises:
        SchemaError: a required field is missing or of the wrong type.

    Example:
        >>> parse_table("Shop.T", {"columns": {"id": {"type": "int"}}, "primary_key": ["id"]}).name
        'shop.t'
    """
    return _parse_table(name.lower(), _mapping(data, f"tables[{name!r}]"))


def _parse_server(data: Mapping[str, Any]) -> Server:
    flavor = str(data.get("flavor", "")).lower()
    if flavor not in FLAVORS:
        raise SchemaError(f"server.flavor must be one of {', '.join(FLAVORS)}, not {flavor!r}")
    match = _VERSION_RE.match(str(data.get("version", "")))
    if not match:
        raise SchemaError(f"server.version {data.get('version')!r} is not like '10.11.6'")
    major, minor, patch = (int(part or 0) for part in match.groups())
    return Server(flavor, (major, minor, patch))


def _parse_table(name: str, data: Mapping[str, Any]) -> Table:
    where = f"tables[{name!r}]"
    columns = {
        column.lower(): _parse_column(column.lower(), _mapping(spec, f"{where}.columns.{column}"))
        for column, spec in _mapping(data.get("columns"), f"{where}.columns").items()
    }
    primary_key = tuple(c.lower() for c in _strings(data.get("primary_key", []), where))
    indexes = tuple(
        _parse_index(_mapping(index, f"{where}.indexes"), where)
        for index in _sequence(data.get("indexes", []), f"{where}.indexes")
    )
    for column in (*primary_key, *(p.name for i in indexes for p in i.parts)):
        if column not in columns:
            raise SchemaError(f"{where}: index column {column!r} is not among its columns")
    rows = data.get("rows")
    if rows is not None and not isinstance(rows, int):
        raise SchemaError(f"{where}.rows must be an integer")
    engine = str(data.get("engine", DEFAULT_ENGINE)).lower()
    return Table(name, engine, rows, columns, primary_key, indexes)


def _parse_column(name: str, data: Mapping[str, Any]) -> Column:
    column_type = data.get("type")
    if not isinstance(column_type, str):
        raise SchemaError(f"column {name!r} needs a string 'type'")
    distinct = data.get("distinct")
    if distinct is not None and not isinstance(distinct, int):
        raise SchemaError(f"column {name!r}: 'distinct' must be an integer")
    return Column(name, column_type.lower(), bool(data.get("nullable", True)), distinct)


def _parse_index(data: Mapping[str, Any], where: str) -> Index:
    name = data.get("name")
    if not isinstance(name, str):
        raise SchemaError(f"{where}: every index needs a 'name'")
    parts = tuple(
        _parse_part(part, f"{where}.{name}")
        for part in _sequence(data.get("columns"), f"{where}.{name}.columns")
    )
    if not parts:
        raise SchemaError(f"{where}.{name}: an index needs columns")
    kind = str(data.get("type", "btree")).lower()
    return Index(name.lower(), parts, bool(data.get("unique", False)), kind)


def _parse_part(data: Any, where: str) -> IndexPart:
    if isinstance(data, str):
        return IndexPart(data.lower())
    part = _mapping(data, where)
    name = part.get("name")
    sub_part = part.get("sub_part")
    if not isinstance(name, str) or not (sub_part is None or isinstance(sub_part, int)):
        raise SchemaError(f"{where}: an index column is a name or {{'name', 'desc', 'sub_part'}}")
    return IndexPart(name.lower(), bool(part.get("desc", False)), sub_part)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SchemaError(f"{where} must be an object")
    return value


def _sequence(value: Any, where: str) -> Sequence[Any]:
    if not isinstance(value, list):
        raise SchemaError(f"{where} must be a list")
    return value


def _strings(value: Any, where: str) -> list[str]:
    items = _sequence(value, where)
    if not all(isinstance(item, str) for item in items):
        raise SchemaError(f"{where}: primary_key must be a list of column names")
    return list(items)
