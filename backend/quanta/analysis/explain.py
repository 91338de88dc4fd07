"""Findings from a query plan: what in an EXPLAIN makes a query slow, one line each.

Two inputs, either or both: the tabular EXPLAIN rows (every MySQL and MariaDB version has
them) and the FORMAT=JSON document (MariaDB's, MySQL's format version 1, or MariaDB's
ANALYZE FORMAT=JSON with the measured ``r_rows``). Both are read into the same
:class:`Plan`; findings from both are merged, the tabular ones first.

Findings: full table scan (type ALL) and full index scan (type index) per table, filesort,
temporary table, no usable key, the key chosen against the possible keys, rows examined far
above rows sent, dependent subqueries.

Example:
    >>> rows = [{"id": 1, "select_type": "SIMPLE", "table": "orders", "type": "ALL",
    ...          "possible_keys": None, "key": None, "rows": "20000",
    ...          "Extra": "Using where; Using filesort"}]
    >>> [f.kind.value for f in explain_findings(rows=rows)]
    ['full_table_scan', 'no_usable_key', 'filesort']
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "Finding",
    "FindingKind",
    "Plan",
    "PlanTable",
    "Severity",
    "explain_findings",
    "findings_for_plan",
    "plan_from_json",
    "plan_from_rows",
]

# "Far above": more than this many rows read per row sent, and at least MIN_ROWS_EXAMINED
# read (reading 50 rows to return 1 is not worth a line).
EXAMINED_PER_SENT_RATIO = 10
MIN_ROWS_EXAMINED = 1000
FULL_PERCENT = 100.0
# Access types of EXPLAIN that read a whole table or a whole index.
ACCESS_FULL_SCAN = "all"
ACCESS_INDEX_SCAN = "index"
# MySQL's JSON says using_temporary_table for these operations (for unions and derived
# tables it is inherent, and the tabular EXPLAIN does not say "Using temporary" either).
_MYSQL_TEMPORARY_OPERATIONS = ("ordering_operation", "grouping_operation", "duplicates_removal")
# A UNION (not UNION ALL) always removes duplicates in a temporary table: nothing to report.
_UNION_PREFIX = "<union"
# MariaDB wraps a table joined through a join buffer in one of these.
_JOIN_BUFFER_KEYS = ("block-nl-join", "hash-join")
# Keys holding one table access; a union's result is read like a table too.
_TABLE_KEYS = ("table", "union_result")
# Keys under which a document nests another query block.
_SUBQUERY_KEYS = (
    "materialized",
    "materialized_from_subquery",
    "query_specifications",
    "subqueries",
    "attached_subqueries",
    "select_list_subqueries",
    "optimized_away_subqueries",
    "having_subqueries",
    "order_by_subqueries",
    "group_by_subqueries",
    "update_value_subqueries",
)


class FindingKind(enum.StrEnum):
    """What a finding is about."""

    FULL_TABLE_SCAN = "full_table_scan"
    FULL_INDEX_SCAN = "full_index_scan"
    NO_USABLE_KEY = "no_usable_key"
    KEY_CHOICE = "key_choice"
    FILESORT = "filesort"
    TEMPORARY_TABLE = "temporary_table"
    DEPENDENT_SUBQUERY = "dependent_subquery"
    ROWS_EXAMINED = "rows_examined"


class Severity(enum.StrEnum):
    """WARNING: likely costs time; INFO: worth knowing when reading the plan."""

    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Finding:
    """One observation about the plan, with the table it is about (if any)."""

    kind: FindingKind
    table: str | None
    severity: Severity
    message: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kind": self.kind.value,
            "table": self.table,
            "severity": self.severity.value,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class PlanTable:
    """One table access of a plan, in join order.

    ``rows`` is the optimizer's estimate per scan; ``actual_rows`` (ANALYZE) is what was
    read over all loops. ``filtered`` is the percentage of read rows that pass the
    conditions, estimated or (``actual_filtered``) measured.
    """

    select_id: int | None
    table: str
    access_type: str | None
    select_type: str = ""
    possible_keys: tuple[str, ...] = ()
    key: str | None = None
    rows: float | None = None
    filtered: float | None = None
    has_condition: bool = False
    filesort: bool = False
    temporary: bool = False
    dependent: bool = False
    actual_rows: float | None = None
    actual_filtered: float | None = None

    @property
    def is_placeholder(self) -> bool:
        """``<derived2>``, ``<union1,2>``, ``<subquery3>``: a result the server built."""
        return self.table.startswith("<")


@dataclass(frozen=True, slots=True)
class Plan:
    """The table accesses of a plan; ``analyzed`` when they carry measured rows."""

    tables: tuple[PlanTable, ...]
    analyzed: bool = False
    blocks: tuple[tuple[PlanTable, ...], ...] = field(default=(), repr=False)


def plan_from_rows(rows: Iterable[Mapping[str, Any]]) -> Plan:
    """Read tabular EXPLAIN rows (as dicts keyed by column name) into a Plan.

    Args:
        rows: The rows of ``EXPLAIN stmt``: id, select_type, table, type, possible_keys,
            key, rows, filtered (MySQL) and Extra.

    Returns:
        The plan, one PlanTable a row.

    Example:
        >>> plan = plan_from_rows([{"id": 1, "select_type": "SIMPLE", "table": "t",
        ...     "type": "ref", "possible_keys": "a,b", "key": "a", "rows": "3"}])
        >>> plan.tables[0].possible_keys, plan.tables[0].rows
        (('a', 'b'), 3.0)
    """
    tables = []
    for row in rows:
        fields = {str(k).lower(): v for k, v in row.items()}
        name = fields.get("table")
        if not name:  # "No tables used", "Impossible WHERE": nothing was accessed
            continue
        extra = {part.strip().lower() for part in str(fields.get("extra") or "").split(";")}
        select_type = str(fields.get("select_type") or "").upper()
        tables.append(
            PlanTable(
                select_id=_int(fields.get("id")),
                table=str(name),
                access_type=_lower(fields.get("type")),
                select_type=select_type,
                possible_keys=_keys(fields.get("possible_keys")),
                key=_str(fields.get("key")),
                rows=_float(fields.get("rows")),
                filtered=_float(fields.get("filtered")),
                has_condition="using where" in extra
                or any(e.startswith("using join buffer") for e in extra),
                filesort="using filesort" in extra,
                temporary="using temporary" in extra,
                dependent=select_type.startswith("DEPENDENT"),
            )
        )
    return _plan(tables)


def plan_from_json(document: Mapping[str, Any]) -> Plan:
    """Read an EXPLAIN FORMAT=JSON (or MariaDB ANALYZE FORMAT=JSON) document into a Plan.

    Args:
        document: The decoded JSON, MariaDB's or MySQL's format version 1.

    Returns:
        The plan; ``analyzed`` when the document has measured rows (``r_rows``).

    Example:
        >>> plan = plan_from_json({"query_block": {"select_id": 1, "table": {
        ...     "table_name": "t", "access_type": "ALL", "rows_examined_per_scan": 10}}})
        >>> plan.tables[0].access_type, plan.tables[0].rows
        ('all', 10.0)
    """
    tables = list(_walk(document, _Context()))
    return _plan(tables, analyzed=any(t.actual_rows is not None for t in tables))


def findings_for_plan(
    plan: Plan, *, rows_sent: float | None = None, rows_examined: float | None = None
) -> list[Finding]:
    """Derive the findings of one plan.

    Args:
        plan: From :func:`plan_from_rows` or :func:`plan_from_json`.
        rows_sent: Rows the query returns per execution when known (the query's metrics);
            otherwise the plan's own estimate (or measurement, after ANALYZE) is used.
        rows_examined: Rows read per execution when known, likewise.

    Returns:
        Findings in plan order, then the rows-examined finding.

    Example:
        >>> plan = plan_from_rows([{"id": 1, "table": "t", "type": "ref",
        ...     "possible_keys": "a", "key": "a", "rows": "5"}])
        >>> findings_for_plan(plan, rows_sent=1, rows_examined=50_000)[0].kind.value
        'rows_examined'
    """
    findings: list[Finding] = []
    for table in plan.tables:
        findings.extend(_table_findings(table))
    examined = _rows_examined_finding(plan, rows_sent, rows_examined)
    if examined:
        findings.append(examined)
    return _unique(findings)


def explain_findings(
    *,
    rows: Iterable[Mapping[str, Any]] = (),
    document: Mapping[str, Any] | None = None,
    rows_sent: float | None = None,
    rows_examined: float | None = None,
) -> list[Finding]:
    """Findings from the tabular rows and the JSON document together, without duplicates.

    The rows-examined figure comes from the best source at hand: the arguments, then a
    measured (ANALYZE) document, then the JSON estimate, then the tabular one.

    Args:
        rows: Tabular EXPLAIN rows (may be empty).
        document: The FORMAT=JSON or ANALYZE FORMAT=JSON document, if any.
        rows_sent: Rows returned per execution, when known from the query's metrics.
        rows_examined: Rows read per execution, when known from the query's metrics.

    Returns:
        Tabular findings first, then what only the document shows.

    Example:
        >>> doc = {"query_block": {"select_id": 1, "nested_loop": [{"table": {
        ...     "table_name": "t", "access_type": "ALL", "rows": 10}}]}}
        >>> [f.message for f in explain_findings(document=doc)]
        ['full table scan of t: every row is read (type ALL, about 10 rows)']
    """
    tabular = plan_from_rows(rows)
    plans = [tabular]
    if document is not None:
        plans.append(plan_from_json(document))
    findings = [f for plan in plans for table in plan.tables for f in _table_findings(table)]
    # The document's numbers are the better ones (filtered, measured rows): it goes first.
    by_quality = sorted(plans, key=lambda plan: plan is tabular)
    examined = next(
        (_rows_examined_finding(p, rows_sent, rows_examined) for p in by_quality if p.blocks),
        None,
    )
    return _unique([*findings, *([examined] if examined else [])])


# --------------------------------------------------------------------------- per table


def _table_findings(table: PlanTable) -> Iterator[Finding]:
    name = table.table
    if table.dependent and not table.is_placeholder:
        block = f" (select #{table.select_id})" if table.select_id is not None else ""
        yield Finding(
            FindingKind.DEPENDENT_SUBQUERY,
            name,
            Severity.WARNING,
            f"dependent subquery on {name}: it runs again for every row of the outer query{block}",
        )
    if not table.is_placeholder:
        yield from _access_findings(table)
    if table.filesort:
        yield Finding(
            FindingKind.FILESORT,
            name,
            Severity.WARNING,
            f"filesort on {name}: rows are sorted after they are read, because no index "
            "gives the ORDER BY or GROUP BY order",
        )
    if table.temporary and not table.table.startswith(_UNION_PREFIX):
        yield Finding(
            FindingKind.TEMPORARY_TABLE,
            name,
            Severity.WARNING,
            f"temporary table for {name}: GROUP BY, DISTINCT or ORDER BY needs an "
            "intermediate table (on disk when it grows large)",
        )


def _access_findings(table: PlanTable) -> Iterator[Finding]:
    name, access = table.table, table.access_type
    if access == ACCESS_FULL_SCAN:
        about = f", about {_count(table.rows)} rows" if table.rows is not None else ""
        yield Finding(
            FindingKind.FULL_TABLE_SCAN,
            name,
            Severity.WARNING,
            f"full table scan of {name}: every row is read (type ALL{about})",
        )
    elif access == ACCESS_INDEX_SCAN:
        yield Finding(
            FindingKind.FULL_INDEX_SCAN,
            name,
            Severity.INFO,
            f"full index scan of {name}: all of index {table.key} is read (type index)",
        )
    scans = access in (ACCESS_FULL_SCAN, ACCESS_INDEX_SCAN)
    if scans and not table.possible_keys and table.has_condition:
        yield Finding(
            FindingKind.NO_USABLE_KEY,
            name,
            Severity.WARNING,
            f"no usable key on {name}: no index matches its conditions or joins "
            "(possible_keys is empty)",
        )
    choice = _key_choice(table)
    if choice:
        yield choice


def _key_choice(table: PlanTable) -> Finding | None:
    name, key, possible = table.table, table.key, table.possible_keys
    listed = ", ".join(possible)
    if possible and key is None:
        return Finding(
            FindingKind.KEY_CHOICE,
            name,
            Severity.WARNING,
            f"no key used on {name}: possible keys {listed} were considered, "
            "but reading the table looked cheaper",
        )
    if key is not None and possible and key not in possible:
        return Finding(
            FindingKind.KEY_CHOICE,
            name,
            Severity.INFO,
            f"key chosen on {name}: {key}, not one of the possible keys {listed} "
            "(used for its order or to cover the columns)",
        )
    if key is not None and len(possible) > 1:
        return Finding(
            FindingKind.KEY_CHOICE,
            name,
            Severity.INFO,
            f"key chosen on {name}: {key} out of the possible keys {listed}",
        )
    return None


# --------------------------------------------------------------------------- rows examined


def _rows_examined_finding(
    plan: Plan, rows_sent: float | None, rows_examined: float | None
) -> Finding | None:
    estimate_examined, estimate_sent = _plan_rows(plan)
    examined = rows_examined if rows_examined is not None else estimate_examined
    sent = rows_sent if rows_sent is not None else estimate_sent
    if examined is None or sent is None:
        return None
    # Strictly above: MySQL guesses 10% for a condition it has no statistics for, and that
    # guess alone is no finding.
    if examined < MIN_ROWS_EXAMINED or examined <= EXAMINED_PER_SENT_RATIO * max(sent, 1.0):
        return None
    measured = plan.analyzed or (rows_examined is not None and rows_sent is not None)
    source = "measured" if measured else "estimated"
    ratio = examined / max(sent, 1.0)
    return Finding(
        FindingKind.ROWS_EXAMINED,
        None,
        Severity.WARNING,
        f"rows examined far above rows sent: about {_count(examined)} rows read to return "
        f"{_count(sent)} ({_count(ratio)} per row sent, {source})",
    )


def _plan_rows(plan: Plan) -> tuple[float | None, float | None]:
    """(rows read in all blocks, rows the first block produces), or Nones if unknown."""
    if not plan.blocks:
        return None, None
    examined = 0.0
    produced: list[float] = []
    for block in plan.blocks:
        block_examined, block_produced = (
            _measured_block(block) if plan.analyzed else _estimated_block(block)
        )
        if block_examined is None:
            return None, None
        examined += block_examined
        produced.append(block_produced)
    return examined, produced[0]


def _estimated_block(block: Sequence[PlanTable]) -> tuple[float | None, float]:
    """Nested loop: each table is read once per row the tables before it produce."""
    prefix, examined = 1.0, 0.0
    for table in block:
        if table.rows is None:
            return None, 0.0
        examined += prefix * table.rows
        prefix *= table.rows * _percent(table.filtered) / FULL_PERCENT
    return examined, prefix


def _measured_block(block: Sequence[PlanTable]) -> tuple[float | None, float]:
    examined = 0.0
    for table in block:
        if table.actual_rows is None:
            return None, 0.0
        examined += table.actual_rows
    last = block[-1]
    assert last.actual_rows is not None  # checked in the loop
    return examined, last.actual_rows * _percent(last.actual_filtered) / FULL_PERCENT


# --------------------------------------------------------------------------- JSON walk


@dataclass(frozen=True, slots=True)
class _Context:
    """Where the walk is. ``marks`` is shared by a sort or temporary node's whole subtree
    and emptied by the first table read under it: the one the sort applies to, as the
    tabular EXPLAIN shows it."""

    select_id: int | None = None
    dependent: bool = False
    join_buffer: bool = False
    marks: set[str] = field(default_factory=set)

    def mark(self, *marks: str) -> _Context:
        return replace(self, marks={*self.marks, *marks})


def _walk(node: Any, ctx: _Context) -> Iterator[PlanTable]:
    """Depth-first over the document, tables in join order."""
    if isinstance(node, list):
        for item in node:
            yield from _walk(item, ctx)
        return
    if not isinstance(node, Mapping):
        return
    ctx = _node_context(node, ctx)
    for key, value in node.items():
        if key in _TABLE_KEYS and isinstance(value, Mapping) and "table_name" in value:
            yield _json_table(value, ctx)
            ctx.marks.clear()
            yield from _walk(value, replace(ctx, join_buffer=False))
        elif isinstance(value, Mapping | list):
            yield from _walk(value, _child_context(key, value, ctx))


def _node_context(node: Mapping[str, Any], ctx: _Context) -> _Context:
    if "select_id" in node:  # a query block of its own
        ctx = replace(ctx, select_id=_int(node.get("select_id")))
    if node.get("dependent") is True:  # MySQL: a subquery that refers to the outer query
        ctx = replace(ctx, dependent=True)
    if node.get("using_filesort") is True:  # MySQL: ordering/grouping operations
        ctx = ctx.mark(FindingKind.FILESORT)
    return ctx


def _child_context(key: str, value: Any, ctx: _Context) -> _Context:
    if key == "filesort":  # MariaDB
        return ctx.mark(FindingKind.FILESORT)
    if key == "temporary_table":  # MariaDB
        return ctx.mark(FindingKind.TEMPORARY_TABLE)
    if key in _MYSQL_TEMPORARY_OPERATIONS and value.get("using_temporary_table") is True:
        return ctx.mark(FindingKind.TEMPORARY_TABLE)
    if key == "expression_cache":
        # MariaDB caches the results of correlated subqueries only: this one is dependent.
        return replace(ctx, dependent=True)
    if key in _JOIN_BUFFER_KEYS:
        return replace(ctx, join_buffer=True)
    if key in _SUBQUERY_KEYS:
        # A new subquery: not dependent until it says so, and no sort of the outer block.
        return replace(ctx, dependent=False, join_buffer=False, marks=set())
    return ctx


def _json_table(data: Mapping[str, Any], ctx: _Context) -> PlanTable:
    actual = _float(data.get("r_rows"))
    loops = _float(data.get("r_loops"))
    rows = data.get("rows", data.get("rows_examined_per_scan"))
    return PlanTable(
        select_id=ctx.select_id,
        table=str(data.get("table_name")),
        access_type=_lower(data.get("access_type")),
        possible_keys=tuple(str(k) for k in data.get("possible_keys") or ()),
        key=_str(data.get("key")),
        rows=_float(rows),
        filtered=_float(data.get("filtered")),
        has_condition="attached_condition" in data
        or ctx.join_buffer
        or bool(data.get("using_join_buffer")),
        filesort=FindingKind.FILESORT in ctx.marks,
        temporary=FindingKind.TEMPORARY_TABLE in ctx.marks,
        dependent=ctx.dependent,
        actual_rows=actual * (loops if loops is not None else 1.0) if actual is not None else None,
        actual_filtered=_float(data.get("r_filtered")),
    )


# --------------------------------------------------------------------------- helpers


def _plan(tables: list[PlanTable], *, analyzed: bool = False) -> Plan:
    blocks: dict[int | None, list[PlanTable]] = {}
    for table in tables:
        blocks.setdefault(table.select_id, []).append(table)
    return Plan(tuple(tables), analyzed, tuple(tuple(b) for b in blocks.values()))


def _unique(findings: Iterable[Finding]) -> list[Finding]:
    seen: set[tuple[FindingKind, str | None]] = set()
    unique = []
    for finding in findings:
        key = (finding.kind, finding.table)
        if key not in seen:
            seen.add(key)
            unique.append(finding)
    return unique


def _percent(value: float | None) -> float:
    return FULL_PERCENT if value is None else value


def _count(value: float | None) -> str:
    return f"{value or 0:,.0f}"


def _keys(value: Any) -> tuple[str, ...]:
    if not value:
        return ()
    return tuple(part.strip() for part in str(value).split(",") if part.strip())


def _str(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _lower(value: Any) -> str | None:
    text = _str(value)
    return text.lower() if text is not None else None


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
