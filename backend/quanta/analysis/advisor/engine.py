"""The index rules: from one table access and the table's snapshot to the advice.

The order of the columns follows how a B-tree is used: equality columns first (reusing an
existing index's leading columns, then the most selective first), then at most one range
column, or instead the ORDER BY / GROUP BY columns (a range ends the part of an index that
can deliver order), then columns that make the index covering. An InnoDB secondary index
holds the primary key as an implicit suffix, so the key neither needs the primary key's
columns for covering nor benefits from repeating them (a suggestion never ends with them).

A candidate is dropped, with the reason, when it does not pay (:mod:`.cost`): it would still
read more than the scan share of the table, or it saves fewer than MIN_ROWS_SAVED rows per
call where an existing index already narrows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from quanta.analysis.advisor import cost
from quanta.analysis.advisor.cost import MAX_INDEX_COLUMNS
from quanta.analysis.advisor.model import (
    Action,
    AdviceColumn,
    Obstacle,
    ObstacleKind,
    Predicate,
    PredicateKind,
    Role,
    Rule,
    TableAccess,
    TableAdvice,
)
from quanta.analysis.advisor.schema import Index, IndexPart, Server, Table
from quanta.analysis.sqltext import quote_ident

__all__ = [
    "MAX_INDEX_COLUMNS",
    "access_rows",
    "add_index_clause",
    "advise_access",
    "alter_table_ddl",
    "effective_parts",
    "index_ddl",
    "index_name",
    "leads_with",
]

_MIN_MAX = ("min", "max")
# A column with this many distinct values or fewer matches about half the rows per value.
TWO_VALUES = 2
MAX_NAME_LENGTH = 64
BTREE = "btree"
_PLAIN_NAME_RE = re.compile(r"[a-z_][a-z0-9_$]*")
# Reserved words likely as column names; others are rare enough to quote by hand.
_RESERVED = frozenset(
    ("order", "group", "key", "keys", "index", "desc", "asc", "select", "from", "where",
     "table", "range", "rank", "row", "rows", "condition", "interval", "match", "option",
     "read", "release", "usage", "check", "default", "change", "column", "database")
)  # fmt: skip
_EQUALITY_KINDS = (PredicateKind.EQUALITY, PredicateKind.JOIN)


@dataclass(frozen=True)
class _Candidate:
    """An index to suggest before covering: equality columns then a range or a sort."""

    equalities: tuple[AdviceColumn, ...]
    tail: tuple[AdviceColumn, ...]
    # The range column is also the first sort column: the range scan returns rows in order.
    range_sorts: bool = False
    loose: bool = False  # read by a loose index scan: one entry per group
    implicit_extreme: str = ""  # the MIN()/MAX() column is the primary key InnoDB appends

    @property
    def columns(self) -> tuple[AdviceColumn, ...]:
        return self.equalities + self.tail

    @property
    def sorts(self) -> bool:
        return bool(self.tail) and self.tail[0].rule in (Rule.ORDER_BY, Rule.GROUP_BY)

    @property
    def in_order(self) -> bool:
        """Whether the index returns the rows in the wanted order (so a LIMIT stops it)."""
        return self.sorts or self.range_sorts


def advise_access(access: TableAccess, table: Table, server: Server) -> list[TableAdvice]:
    """Advise on one table access: one advice, or one per branch of an OR across columns.

    Args:
        access: What the statement asks of the table (see :mod:`.statement`).
        table: The table's snapshot, with its existing indexes.
        server: The server, for descending and functional index support.

    Returns:
        The advice; ``action`` is ``none`` with the reason when no new index helps.

    Example:
        >>> from quanta.analysis.advisor.schema import Column
        >>> table = Table("shop.t", "innodb", 1000, {"id": Column("id", "int"),
        ...     "a": Column("a", "int", distinct=500)}, ("id",), ())
        >>> equal_a = Predicate("a", PredicateKind.EQUALITY, "=")
        >>> access = TableAccess("shop.t", predicates=(equal_a,))
        >>> advise_access(access, table, Server("mysql", (8, 0, 36)))[0].ddl
        'ALTER TABLE shop.t ADD INDEX idx_t_a (a)'
    """
    predicates = _usable_predicates(access)
    if _joined_on_primary_key(predicates, table):
        reason = "Joined on its primary key: each row is one primary-key lookup already."
        return [TableAdvice(table.name, Action.NONE, reason=reason)]
    notes = _obstacle_notes(access, table, server)
    kept = _kept_set_columns(access)
    if kept:
        notes.append(_kept_set_columns_note(kept, access))
    left_out = [c for c in access.set_columns if c not in kept]
    if left_out:
        notes.append(_set_columns_note(left_out))
    if access.or_branches:
        if not predicates and not access.sort:
            return _advise_or(access, table, server, notes)
        notes.append("The OR is checked on the rows the other conditions find.")
    return [_advise_single(access, table, server, predicates, notes)]


def _joined_on_primary_key(predicates: Sequence[Predicate], table: Table) -> bool:
    joined = {p.column for p in predicates if p.kind is PredicateKind.JOIN}
    fixed = joined | {p.column for p in predicates if p.kind is PredicateKind.EQUALITY}
    return bool(joined) and bool(table.primary_key) and set(table.primary_key) <= fixed


def _usable_predicates(access: TableAccess) -> list[Predicate]:
    """Drop join columns of the driving table (not known yet) and columns the DML sets
    (but an equality that must lead an ORDER BY ... LIMIT: :func:`_kept_set_columns`).

    ``x IN (SELECT ...)`` stays: a semi-join may look x up from the subquery's rows.
    """
    kept = _kept_set_columns(access)
    return [
        p
        for p in access.predicates
        if not (p.kind is PredicateKind.JOIN and access.role is Role.DRIVING and p.operator != "IN")
        and (p.column not in access.set_columns or p.column in kept)
    ]


def _kept_set_columns(access: TableAccess) -> tuple[str, ...]:
    """The columns an UPDATE sets that still lead its index: fixed by an equality in an
    UPDATE with ORDER BY ... LIMIT (a queue's ``SET status = 'running' WHERE status =
    'queued' ORDER BY id LIMIT 1``). Left out, the index would walk the sort order through
    every row of the other values; kept, the statement moves at most LIMIT index entries."""
    if not (access.dml and access.sort and access.limit is not None):
        return ()
    fixed = {p.column for p in access.predicates if p.kind is PredicateKind.EQUALITY}
    return tuple(c for c in access.set_columns if c in fixed)


def _advise_single(
    access: TableAccess,
    table: Table,
    server: Server,
    predicates: Sequence[Predicate],
    notes: list[str],
) -> TableAdvice:
    sort, sort_note = _usable_sort(access, predicates, server)
    if sort_note:
        notes.append(sort_note)
    if access.sort_problem:
        notes.append(_sentence(access.sort_problem))
    extreme = _min_max_only(access, table, predicates)
    if extreme is not None:
        return _finish(extreme, access, table, notes, predicates)
    equalities, ranges = _split(predicates, sort)
    if not equalities and not ranges and not sort:
        return _nothing(table, notes, access)
    two_values = _two_value_columns(table, equalities, ranges)
    if two_values and not sort:
        return TableAdvice(
            table.name, Action.NONE, reason=_two_value_reason(two_values), notes=tuple(notes)
        )
    loose, loose_note = _loose_scan(access, table, predicates)
    if loose is not None:
        return _finish(loose, access, table, notes, predicates)
    if loose_note:
        notes.append(loose_note)
    ordered = _order_equalities(equalities, table)
    range_column = _most_selective(ranges, table)
    if range_column and len(ranges) > 1:
        notes.append(_stops_at_range_note(range_column, ranges))
    if range_column and sort and sort[0].name == range_column.name:
        # A range on the first sort column scans the index in that order: no sort, and no
        # competing candidate (EXPLAIN shows range with no filesort).
        tail = (range_column, *sort[1:])
        candidate = _Candidate(ordered, tail, range_sorts=True)
        return _finish(candidate, access, table, notes, predicates)
    if (
        range_column
        and sort
        and _row_limit(access) is not None
        and _is_in_list(range_column, predicates)
    ):
        return _weigh_in_list(ordered, range_column, sort, access, table, notes, predicates)
    if range_column and sort:
        by_range = _Candidate(ordered, (range_column,))
        by_sort = _Candidate(ordered, sort)
        primary = _finish(by_range, access, table, [], predicates)
        alternative = _finish(by_sort, access, table, [], predicates)
        if _same_index(primary, alternative):
            return replace(primary, notes=(*notes, *primary.notes))  # never an equal alternative
        notes.append(_competing_note(range_column, sort, access.sort_rule))
        return replace(primary, notes=(*notes, *primary.notes), alternative=alternative)
    tail = (range_column,) if range_column else sort
    return _finish(_Candidate(ordered, tail), access, table, notes, predicates)


def _is_in_list(column: AdviceColumn, predicates: Sequence[Predicate]) -> bool:
    found = [p for p in predicates if p.column == column.name]
    return bool(found) and all(p.kind is PredicateKind.IN_LIST for p in found)


def _weigh_in_list(
    equalities: tuple[AdviceColumn, ...],
    in_list: AdviceColumn,
    sort: tuple[AdviceColumn, ...],
    access: TableAccess,
    table: Table,
    notes: list[str],
    predicates: Sequence[Predicate],
) -> TableAdvice:
    """``a = ? AND b IN (...) ORDER BY c LIMIT n``: (a, b, c) or (a, c), whichever reads fewer.

    An IN list's values are equalities for finding rows, but an index is in c's order only
    within each value: (a, b, c) reads every row of the list's values and the server sorts
    them (c is there so that a list of one value, or the next query's, is served in order);
    (a, c) reads in order, checks b on each row and stops after n matches. The fewer rows
    wins, the other is the alternative (a tie goes to the one with no sort).
    """
    by_in = _Candidate(equalities, (replace(in_list, rule=Rule.IN_LIST), *sort))
    by_sort = _Candidate(equalities, sort)
    limit = _row_limit(access)
    rows_in = _rows_after(by_in, access, table, predicates, limit)
    rows_sort = _rows_after(by_sort, access, table, predicates, limit)
    chosen, other = (by_in, by_sort) if rows_in < rows_sort else (by_sort, by_in)
    why = _in_list_clause(chosen is by_in, in_list, sort, limit, rows_in, rows_sort, other)
    primary = _finish(chosen, access, table, notes, predicates, clause=why)
    alternative = _finish(other, access, table, [], predicates)
    if alternative.action is Action.NONE or _same_index(primary, alternative):
        return primary
    return replace(primary, alternative=alternative)


def _in_list_clause(
    in_list_wins: bool,
    in_list: AdviceColumn,
    sort: Sequence[AdviceColumn],
    limit: int | None,
    rows_in: int,
    rows_sort: int,
    other: _Candidate,
) -> str:
    """Why the IN list leads or is only checked, for the reason sentence."""
    other_columns = f"({', '.join(c.name for c in other.columns)})"
    if in_list_wins:
        return (
            f"an IN list breaks the sort order, so the server sorts what it reads, about "
            f"{_rows_text(rows_in)} per call, fewer than the {rows_sort:,} {other_columns} "
            f"would read in ORDER BY order before LIMIT {limit:,} is reached"
        )
    return (
        f"the IN list on {in_list.name} is checked on each row read, so with LIMIT {limit:,} "
        f"it reads about {_rows_text(rows_sort)} per call, fewer than the {rows_in:,} "
        f"{other_columns} would read and sort (an IN list breaks the sort order)"
    )


def _same_index(first: TableAdvice, second: TableAdvice) -> bool:
    return [c.name for c in first.columns] == [c.name for c in second.columns]


def _advise_or(
    access: TableAccess, table: Table, server: Server, notes: list[str]
) -> list[TableAdvice]:
    """One index per OR branch: the server merges them (index_merge union) or a UNION does."""
    advice = []
    count = len(access.or_branches)
    for number, branch in enumerate(access.or_branches, 1):
        # index_merge fetches every matching row anyway, so a branch index is never covering:
        # the access is treated like DML's, which reads the row.
        branch_access = replace(access, predicates=branch, or_branches=(), dml=True)
        single = _advise_single(branch_access, table, server, list(branch), list(notes))
        prefix = (
            f"OR branch {number} of {count} (one index per branch, merged by the server's "
            "index_merge union or written as a UNION)"
        )
        advice.append(replace(single, reason=f"{prefix}: {_lower_first(single.reason)}"))
    return advice


def _loose_scan(
    access: TableAccess, table: Table, predicates: Sequence[Predicate]
) -> tuple[_Candidate | None, str]:
    """The loose-index-scan candidate for GROUP BY / DISTINCT, or why there is none.

    MySQL and MariaDB read one entry per group ("Using index for group-by") when: one table;
    the GROUP BY (or DISTINCT) columns are a left-most prefix of the index; the only
    aggregates are MIN() and MAX() of one column, the index column right after; every other
    index column the query refers to is fixed by an equality (ranges are allowed on the
    grouped and the MIN/MAX columns); whole columns, no prefix. The reason is given only
    when the query has a MIN() or MAX() (the case a reader expects it).
    """
    if access.sort_rule is not Rule.GROUP_BY or not access.sort or access.dml:
        return None, ""
    if access.or_branches or access.obstacles or access.role is not Role.DRIVING:
        return None, ""
    extremes = [a for a in access.aggregates if a.function in _MIN_MAX]
    why = _no_loose_scan(access, table, predicates)
    if why:
        return None, (f"No loose index scan: {why}." if extremes else "")
    grouped = [k.column for k in access.sort]
    fixed = [
        p.column for p in predicates
        if p.kind in _EQUALITY_KINDS and p.column not in grouped
    ]  # fmt: skip
    fixed = sorted(dict.fromkeys(fixed), key=lambda name: -_distinct(table, name))
    if fixed:
        # Equalities first then the groups in order may read fewer entries than one per group.
        equal = [p for p in predicates if p.column in fixed]
        filtered = cost.rows_examined(table, fixed, equal)
        count = cost.groups(table, grouped)
        if filtered < count:
            note = (
                f"No loose index scan: the equality on {_names_text(fixed)} leaves about "
                f"{_rows_text(filtered)}, fewer than the {count:,} groups a loose index scan "
                "would read."
            )
            return None, (note if extremes else "")
    extreme = extremes[0].column if extremes else ""
    tail = [AdviceColumn(name, False, Rule.GROUP_BY) for name in grouped]
    tail += [AdviceColumn(name, False, Rule.EQUALITY) for name in fixed]
    # InnoDB appends a one-column primary key to every secondary index: MAX(id) needs no id.
    implicit = table.clustered and table.primary_key == (extreme,)
    if extreme and extreme not in grouped and extreme not in fixed and not implicit:
        tail.append(AdviceColumn(extreme, False, Rule.MIN_MAX))
    if len(tail) > MAX_INDEX_COLUMNS:
        note = f"No loose index scan: it would need a {len(tail)}-column index."
        return None, (note if extremes else "")
    return _Candidate((), tuple(tail), loose=True, implicit_extreme=extreme if implicit else ""), ""


def _min_max_only(
    access: TableAccess, table: Table, predicates: Sequence[Predicate]
) -> _Candidate | None:
    """``SELECT MAX(c) ... WHERE a = ?`` with no GROUP BY: (a, c) reads one entry per call.

    The server reads MIN()/MAX() from the edge of the index range ("Select tables optimized
    away") when: one table; only MIN()/MAX() of one column; the other conditions are
    equalities on the columns before it (a range only on the column itself).
    """
    if access.sort or access.sort_problem or access.dml or access.or_branches:
        return None
    if access.obstacles or not access.single_table or not access.aggregates:
        return None
    if any(a.function not in _MIN_MAX or not a.column or a.distinct for a in access.aggregates):
        return None
    columns = {a.column for a in access.aggregates}
    extreme = columns.pop()
    if columns or extreme not in table.columns or table.columns[extreme].is_lob:
        return None
    if any(p.kind not in _EQUALITY_KINDS and p.column != extreme for p in predicates):
        return None
    fixed = [p.column for p in predicates if p.kind in _EQUALITY_KINDS and p.column != extreme]
    if access.read_all or any(name not in (*fixed, extreme) for name in access.read_columns):
        return None
    equalities = [AdviceColumn(name, False, Rule.EQUALITY) for name in dict.fromkeys(fixed)]
    tail = (AdviceColumn(extreme, False, Rule.MIN_MAX),)
    return _Candidate(_order_equalities(equalities, table), tail, loose=True)


def _no_loose_scan(access: TableAccess, table: Table, predicates: Sequence[Predicate]) -> str:
    """Why a loose index scan cannot serve this GROUP BY, or "" when it can."""
    if not access.single_table:
        return "it reads a single table, and this query joins others"
    others = sorted({a.function.upper() for a in access.aggregates if a.function not in _MIN_MAX})
    if others:
        return (
            f"{_names_text([f + '()' for f in others])} needs every row of each group; only "
            "MIN() and MAX() can be read from one index entry per group"
        )
    if any(not a.column or a.distinct for a in access.aggregates):
        return "the argument of MIN()/MAX() is an expression, not a column"
    extremes = sorted({a.column for a in access.aggregates})
    if len(extremes) > 1:
        return (
            f"MIN()/MAX() read {_names_text(extremes)}; a loose index scan serves one column, "
            "the one right after the GROUP BY columns"
        )
    grouped = {k.column for k in access.sort}
    allowed_ranges = grouped | set(extremes)
    for predicate in predicates:
        if predicate.kind not in _EQUALITY_KINDS and predicate.column not in allowed_ranges:
            return (
                f"the condition on {predicate.column} is not an equality, and every index column "
                "other than the grouped and the MIN()/MAX() one must be fixed by one"
            )
    known = allowed_ranges | {p.column for p in predicates}
    extra = [name for name in access.read_columns if name not in known]
    if access.read_all or extra:
        what = "SELECT *" if access.read_all else _names_text(extra)
        return (
            f"the query reads {what}, which is neither grouped, fixed by an equality nor the "
            "MIN()/MAX() column"
        )
    lobs = [name for name in sorted(known) if name in table.columns and table.columns[name].is_lob]
    if lobs:
        return f"{_names_text(lobs)} is TEXT/BLOB, which an index holds only by a prefix"
    return ""


def _usable_sort(
    access: TableAccess, predicates: Sequence[Predicate], server: Server
) -> tuple[tuple[AdviceColumn, ...], str]:
    """The sort columns an index can deliver, and why not when it cannot."""
    if not access.sort or access.role is not Role.DRIVING:
        return (), ""
    fixed = {p.column for p in predicates if p.kind in _EQUALITY_KINDS}
    # A column fixed by an equality has one value: it does not change the order.
    keys = [k for k in access.sort if k.column not in fixed]
    if not keys:
        return (), ""
    directions = {k.desc for k in keys}
    if len(directions) == 1:
        # All DESC reads an ascending index backwards: no DESC needed.
        return tuple(AdviceColumn(k.column, False, access.sort_rule) for k in keys), ""
    if not server.descending_indexes:
        return (), (
            "The ORDER BY mixes ASC and DESC, which an index can only deliver on a server with "
            "descending indexes (MySQL 8.0+, MariaDB 10.8+), so it still needs a sort."
        )
    return tuple(AdviceColumn(k.column, k.desc, access.sort_rule) for k in keys), ""


def _split(
    predicates: Sequence[Predicate], sort: Sequence[AdviceColumn]
) -> tuple[list[AdviceColumn], list[AdviceColumn]]:
    """Equality columns and range columns; a multi-value IN is a range only before a sort."""
    equalities: dict[str, AdviceColumn] = {}
    ranges: dict[str, AdviceColumn] = {}
    for p in predicates:
        if p.kind in _EQUALITY_KINDS or (p.kind is PredicateKind.IN_LIST and not sort):
            rule = {PredicateKind.JOIN: Rule.JOIN, PredicateKind.IN_LIST: Rule.IN_LIST}.get(
                p.kind, Rule.EQUALITY
            )
            equalities.setdefault(p.column, AdviceColumn(p.column, False, rule))
        else:
            ranges.setdefault(p.column, AdviceColumn(p.column, False, Rule.RANGE))
    return list(equalities.values()), [r for r in ranges.values() if r.name not in equalities]


def _distinct(table: Table, column: str) -> int:
    """The distinct estimate, -1 when unknown (so unknown columns sort last)."""
    found = table.columns.get(column)
    return found.distinct if found and found.distinct is not None else -1


def _order_equalities(equalities: list[AdviceColumn], table: Table) -> tuple[AdviceColumn, ...]:
    """An existing index's leading equality columns first, then the most selective first."""
    by_name = {c.name: c for c in equalities}
    reused = _reusable_prefix(set(by_name), table)
    rest = sorted(
        (c for c in equalities if c.name not in reused),
        key=lambda c: -_distinct(table, c.name),  # stable: written order breaks ties
    )
    return tuple(by_name[name] for name in reused) + tuple(rest)


def _reusable_prefix(names: set[str], table: Table) -> tuple[str, ...]:
    """The columns of the widest secondary index made only of ``names``, in its order.

    Putting them first makes that index a left-most prefix of the new one, so it can go.
    """
    best: tuple[str, ...] = ()
    for index in table.indexes:
        columns = index.columns
        whole = all(p.sub_part is None and not p.desc for p in index.parts)
        if whole and not index.unique and set(columns) <= names and len(columns) > len(best):
            best = columns
    return best


def _most_selective(ranges: list[AdviceColumn], table: Table) -> AdviceColumn | None:
    if not ranges:
        return None
    return max(ranges, key=lambda c: _distinct(table, c.name))  # max keeps the first on ties


def _two_value_columns(
    table: Table, equalities: list[AdviceColumn], ranges: list[AdviceColumn]
) -> list[str]:
    """The filter columns, when every one of them has at most two values."""
    columns = [c.name for c in (*equalities, *ranges)]
    if not columns:
        return []
    low = [name for name in columns if 0 <= _distinct(table, name) <= TWO_VALUES]
    return low if len(low) == len(columns) else []


def _finish(
    candidate: _Candidate,
    access: TableAccess,
    table: Table,
    notes: list[str],
    predicates: Sequence[Predicate],
    *,
    clause: str = "",
) -> TableAdvice:
    """Check the candidate against the existing indexes, make it covering, write the DDL;
    or say why no index pays. ``clause`` ends the reason (why this candidate won)."""
    served = _served_by(candidate, table)
    if served is not None:
        return TableAdvice(
            table.name,
            Action.NONE,
            reason=_served_reason(served, candidate, table),
            notes=tuple(notes),
        )
    limit = _row_limit(access)
    existing = _best_existing(access, table, predicates, limit)
    # An inner table is looked up once per row of the table read first.
    per_lookup = _rows_after(candidate, access, table, predicates, limit)
    before, after = existing.rows * access.lookups, per_lookup * access.lookups
    covering, covers, covering_note = _covering_columns(candidate, access, table, after)
    if covering_note:
        notes = [*notes, covering_note]
    columns = candidate.columns + covering
    why_not = _scan_is_cheaper(candidate, covers, access, table, predicates, per_lookup)
    why_not = why_not or _saves_too_little(candidate, existing, before, after, table)
    if why_not:
        return TableAdvice(table.name, Action.NONE, reason=why_not, notes=tuple(notes))
    kept, implicit = _without_primary_key_suffix(columns, table)
    parts = tuple(IndexPart(c.name, c.desc) for c in kept)
    replaced = _replaced(parts, table)
    name = _index_name(table, kept)
    action = Action.REPLACE if replaced else Action.ADD
    reason = _reason(candidate, covering, covers, replaced, table, implicit, clause)
    return TableAdvice(
        table.name, action, kept, index_ddl(table.name, name, kept, replaced), reason,
        redundant=replaced, notes=tuple(notes), rows_before=before,
        rows_after=after, index_bytes=cost.index_bytes(table, parts),
    )  # fmt: skip


def _scan_is_cheaper(
    candidate: _Candidate,
    covers: bool,
    access: TableAccess,
    table: Table,
    predicates: Sequence[Predicate],
    per_lookup: int,
) -> str:
    """Why a full scan beats the candidate (it still reads more than the scan share of the
    table, each row a primary-key lookup), or "" (see :mod:`.cost`)."""
    filtered = {p.column for p in predicates}
    narrowing = [c.name for c in candidate.equalities if c.name in filtered]
    if candidate.tail and candidate.tail[0].rule is Rule.IN_LIST:
        narrowing.append(candidate.tail[0].name)
    # An index that only sorts narrows nothing: what it saves is a sort, not priced here.
    if covers or candidate.loose or not table.rows or not narrowing:
        return ""
    names = [c.name for c in candidate.columns]
    if cost.known_share(table, names, predicates) is None:
        return ""
    threshold = cost.scan_share(table)
    if per_lookup <= threshold * table.rows:
        return ""
    counts = _names_text([f"{name} ({_distinct(table, name):,} values)" for name in narrowing])
    where = "per call" if access.lookups == 1 else "per lookup"
    return (
        f"A full scan is cheaper: an index on {counts} would still read about "
        f"{_rows_text(per_lookup)} {where} ({per_lookup / table.rows:.0%} of the table), each a "
        f"primary-key lookup, and above {threshold:.0%} of this table a scan, which reads "
        f"{cost.rows_per_page(table):,} rows per page in order, costs less."
    )


def _saves_too_little(
    candidate: _Candidate, existing: _Existing, before: int, after: int, table: Table
) -> str:
    """Why the candidate is not worth changing the indexes for (an existing index already
    narrows and it saves fewer than MIN_ROWS_SAVED rows per call), or "" (see :mod:`.cost`)."""
    if existing.index is None or before - after >= cost.MIN_ROWS_SAVED:
        return ""
    columns = ", ".join(c.name for c in candidate.columns)
    saving = (
        f"would read as many ({after:,})"
        if after >= before
        else f"would read about {after:,}, saving {before - after:,}"
    )
    return (
        f"The existing {_described(existing.index, table)} already narrows this to about "
        f"{_rows_text(before)} per call; ({columns}) {saving}, fewer than the "
        f"{cost.MIN_ROWS_SAVED} rows per call that pay for an ALTER TABLE and one more index "
        "to maintain on every write."
    )


def _without_primary_key_suffix(
    columns: tuple[AdviceColumn, ...], table: Table
) -> tuple[tuple[AdviceColumn, ...], tuple[str, ...]]:
    """The columns without a tail InnoDB appends anyway (the primary key's columns the others
    lack, in order, ascending), and the tail's names: (email, id) is (email) on InnoDB."""
    if not table.clustered:
        return columns, ()
    for cut in range(1, len(columns)):
        kept, tail = columns[:cut], columns[cut:]
        appended = [c for c in table.primary_key if c not in {k.name for k in kept}]
        if [c.name for c in tail] == appended[: len(tail)] and not any(c.desc for c in tail):
            return kept, tuple(c.name for c in tail)
    return columns, ()


@dataclass(frozen=True)
class _Existing:
    """The best existing index for an access (None: a full scan) and its rows per lookup."""

    rows: int
    index: Index | None


def _row_limit(access: TableAccess) -> int | None:
    """The LIMIT, when it bounds this table's rows (one table, no grouping)."""
    if not access.single_table or access.aggregates or access.sort_rule is Rule.GROUP_BY:
        return None
    return access.limit


def _best_existing(
    access: TableAccess, table: Table, predicates: Sequence[Predicate], limit: int | None
) -> _Existing:
    """The best existing index (or a full scan) and its rows per call (per lookup)."""
    in_order = not access.sort
    scan = cost.rows_examined(table, (), predicates, limit=limit, in_order=in_order)
    best = _Existing(scan, None)
    for index in table.all_indexes:
        if index.kind != BTREE:
            continue
        names = [p.name for p in effective_parts(index, table)]
        rows = cost.rows_examined(table, names, predicates, limit=limit, in_order=in_order)
        if rows < best.rows:
            best = _Existing(rows, index)
    return best


def _rows_after(
    candidate: _Candidate,
    access: TableAccess,
    table: Table,
    predicates: Sequence[Predicate],
    limit: int | None,
) -> int:
    """Rows per call through the candidate: one entry per group for a loose index scan."""
    if candidate.loose:
        grouped = [c.name for c in candidate.tail if c.rule is Rule.GROUP_BY]
        fixed = [p for p in predicates if p.kind is not PredicateKind.RANGE]
        return min(cost.groups(table, grouped), cost.rows_examined(table, (), fixed))
    names = [c.name for c in candidate.columns]
    in_order = not access.sort or candidate.in_order
    return cost.rows_examined(table, names, predicates, limit=limit, in_order=in_order)


def effective_parts(index: Index, table: Table) -> tuple[IndexPart, ...]:
    """The parts an index really holds: an InnoDB secondary index ends with the primary key.

    Example:
        >>> table = Table("db.t", "innodb", None, {}, ("id",), ())
        >>> [p.name for p in effective_parts(Index("i", (IndexPart("a"),)), table)]
        ['a', 'id']
    """
    if index.name == "primary" or not table.clustered:
        return index.parts
    present = {p.name for p in index.parts if p.sub_part is None}
    return index.parts + tuple(IndexPart(c) for c in table.primary_key if c not in present)


def leads_with(table: Table, index: Sequence[str], wanted: Sequence[str]) -> bool:
    """Whether an index with these columns holds ``wanted`` as its left-most columns,
    counting the primary key InnoDB appends to it: on InnoDB (email) leads with (email, id).

    Example:
        >>> table = Table("db.t", "innodb", None, {}, ("id",), ())
        >>> leads_with(table, ["email"], ["email", "id"]), leads_with(table, ["a"], ["b"])
        (True, False)
    """
    held = [p.name for p in effective_parts(Index("i", tuple(IndexPart(c) for c in index)), table)]
    return held[: len(wanted)] == list(wanted)


def _served_by(candidate: _Candidate, table: Table) -> Index | None:
    """The existing index that already serves the candidate as a left-most prefix."""
    equal = {c.name for c in candidate.equalities}
    for index in table.all_indexes:
        if index.kind != BTREE:
            continue
        if index.unique and set(index.columns) <= equal:
            return index  # at most one row: nothing to gain
        parts = effective_parts(index, table)
        if _serves(parts, equal, candidate):
            return index
    return None


def _serves(parts: tuple[IndexPart, ...], equal: set[str], candidate: _Candidate) -> bool:
    count = len(equal)
    if len(parts) < count + len(candidate.tail):
        return False
    if {p.name for p in parts[:count]} != equal:
        return False
    tail = parts[count : count + len(candidate.tail)]
    if [p.name for p in tail] != [c.name for c in candidate.tail]:
        return False
    if not candidate.sorts:
        return True
    if any(p.sub_part is not None for p in tail):
        return False  # a prefix index does not hold the whole value, so not its order
    same = all(p.desc == c.desc for p, c in zip(tail, candidate.tail, strict=True))
    flipped = all(p.desc != c.desc for p, c in zip(tail, candidate.tail, strict=True))
    return same or flipped


def _covering_columns(
    candidate: _Candidate, access: TableAccess, table: Table, rows_read: int
) -> tuple[tuple[AdviceColumn, ...], bool, str]:
    """Columns to append so the index holds every column read; whether it then covers; why not.

    The primary key columns are never appended: InnoDB keeps them in every secondary index.
    Whether appending pays is :func:`.cost.covering_verdict`'s call.
    """
    if access.dml:
        return (), False, ""  # an UPDATE or DELETE reads the row anyway
    implicit = set(table.primary_key) if table.clustered else set()
    keyed = {c.name for c in candidate.columns} | implicit
    read = list(table.columns) if access.read_all else list(access.read_columns)
    missing = [name for name in read if name not in keyed]
    if not missing:
        return (), True, ""
    key = [c.name for c in candidate.columns]
    verdict = cost.covering_verdict(table, key, missing, rows_read, access)
    if not verdict.cover:
        return (), False, verdict.reason
    return tuple(AdviceColumn(name, False, Rule.COVERING) for name in missing), True, ""


def _replaced(parts: tuple[IndexPart, ...], table: Table) -> tuple[str, ...]:
    """Existing non-unique indexes that are a left-most prefix of the new one."""
    found = []
    for index in table.indexes:
        if index.unique or index.kind != BTREE or len(index.parts) > len(parts):
            continue
        if all(old == new for old, new in zip(index.parts, parts, strict=False)):
            found.append(index.name)
    return tuple(found)


def _index_name(table: Table, columns: Sequence[AdviceColumn]) -> str:
    short = table.name.split(".", 1)[1]
    base = "_".join(["idx", short, *(c.name for c in columns)])[:MAX_NAME_LENGTH]
    taken = {index.name for index in table.indexes}
    name, number = base, 2
    while name in taken:
        suffix = f"_{number}"
        name = base[: MAX_NAME_LENGTH - len(suffix)] + suffix
        number += 1
    return name


def quote_name(name: str) -> str:
    """Backtick a name only when it needs it, so the DDL reads like a DBA writes it."""
    if _PLAIN_NAME_RE.fullmatch(name) and name not in _RESERVED:
        return name
    # Lenient: the DDL is shown as advice too; what is sent goes through the guard, which
    # refuses a NUL anywhere in a statement.
    return quote_ident(name, lenient=True)


def index_ddl(
    table: str, name: str, columns: Sequence[AdviceColumn], drop: Sequence[str] = ()
) -> str:
    """The ALTER TABLE that adds the index (dropping the ones it replaces, in one statement).

    Example:
        >>> index_ddl("shop.orders", "idx_orders_a_b", [AdviceColumn("a", False, Rule.EQUALITY),
        ...     AdviceColumn("b", True, Rule.ORDER_BY)], ["idx_a"])
        'ALTER TABLE shop.orders DROP INDEX idx_a, ADD INDEX idx_orders_a_b (a, b DESC)'
    """
    return alter_table_ddl(table, [(name, columns)], drop)


def add_index_clause(name: str, columns: Sequence[AdviceColumn]) -> str:
    """``ADD INDEX name (a, b DESC)``, names quoted only where they need it.

    Example:
        >>> add_index_clause("idx_t_order", [AdviceColumn("order", False, Rule.EQUALITY)])
        'ADD INDEX idx_t_order (`order`)'
    """
    listed = ", ".join(quote_name(c.name) + (" DESC" if c.desc else "") for c in columns)
    return f"ADD INDEX {quote_name(name)} ({listed})"


def alter_table_ddl(
    table: str,
    adds: Sequence[tuple[str, Sequence[AdviceColumn]]],
    drop: Sequence[str] = (),
) -> str:
    """One ALTER TABLE with every drop then every add (one table rebuild, not several).

    Example:
        >>> alter_table_ddl("db.t", [("idx_t_a_b", [AdviceColumn("a", False, Rule.EQUALITY),
        ...     AdviceColumn("b", False, Rule.RANGE)]), ("idx_t_c", [AdviceColumn("c", False,
        ...     Rule.EQUALITY)])], ["ia"])
        'ALTER TABLE db.t DROP INDEX ia, ADD INDEX idx_t_a_b (a, b), ADD INDEX idx_t_c (c)'
    """
    qualified = ".".join(quote_name(part) for part in table.split(".", 1))
    clauses = [f"DROP INDEX {quote_name(old)}" for old in drop]
    clauses += [add_index_clause(name, columns) for name, columns in adds]
    return f"ALTER TABLE {qualified} " + ", ".join(clauses)


def index_name(table: Table, columns: Sequence[AdviceColumn]) -> str:
    """The name a new index gets: ``idx_<table>_<columns>``, unique among the table's indexes.

    Example:
        >>> index_name(Table("db.t", "innodb", None, {}, ("id",), ()),
        ...     [AdviceColumn("a", False, Rule.EQUALITY)])
        'idx_t_a'
    """
    return _index_name(table, columns)


def access_rows(
    access: TableAccess,
    table: Table,
    server: Server,
    columns: Sequence[AdviceColumn] = (),
) -> int:
    """Rows the access examines per call with the existing indexes and, if given, one more.

    The same estimate as a suggestion's ``rows_before`` (no ``columns``) and ``rows_after``
    (its own columns), for any index: the workload planner prices an index suggested for one
    query on every other query of the table with it. The index delivers the rows in the
    wanted order when its columns after those fixed by equalities are the usable sort.

    Example:
        >>> from quanta.analysis.advisor.schema import Column
        >>> table = Table("shop.t", "innodb", 1000, {"id": Column("id", "int"),
        ...     "a": Column("a", "int", distinct=500)}, ("id",), ())
        >>> equal_a = Predicate("a", PredicateKind.EQUALITY, "=")
        >>> access = TableAccess("shop.t", predicates=(equal_a,))
        >>> server = Server("mysql", (8, 0, 36))
        >>> access_rows(access, table, server), access_rows(access, table, server,
        ...     [AdviceColumn("a", False, Rule.EQUALITY)])
        (1000, 2)
    """
    predicates = _usable_predicates(access)
    if _joined_on_primary_key(predicates, table):
        return access.lookups
    limit = _row_limit(access)
    best = _best_existing(access, table, predicates, limit).rows
    if columns:
        parts = effective_parts(
            Index("new", tuple(IndexPart(c.name, c.desc) for c in columns)), table
        )
        sort, _ = _usable_sort(access, predicates, server)
        in_order = not access.sort or (bool(sort) and _delivers(parts, sort, predicates))
        names = [p.name for p in parts]
        rows = cost.rows_examined(table, names, predicates, limit=limit, in_order=in_order)
        # A MIN()/MAX() or GROUP BY the index can read one entry per call or per group of.
        for loose in (
            _min_max_only(access, table, predicates),
            _loose_scan(access, table, predicates)[0],
        ):
            if loose is not None and _leads_with(names, loose):
                rows = min(rows, _rows_after(loose, access, table, predicates, limit))
        best = min(best, rows)
    return best * access.lookups


def _leads_with(names: Sequence[str], candidate: _Candidate) -> bool:
    """The index starts with the candidate's equalities (in any order) then its tail."""
    count = len(candidate.equalities)
    tail = [c.name for c in candidate.tail]
    return (
        set(names[:count]) == {c.name for c in candidate.equalities}
        and list(names[count : count + len(tail)]) == tail
    )


def _delivers(
    parts: Sequence[IndexPart], sort: Sequence[AdviceColumn], predicates: Sequence[Predicate]
) -> bool:
    """Whether the index reads the rows in the sort's order after its equality columns.

    A range on the first sort column keeps the order (the range scan walks the index).
    """
    fixed = {p.column for p in predicates if p.kind in _EQUALITY_KINDS}
    position = 0
    while position < len(parts) and parts[position].name in fixed:
        position += 1
    tail = parts[position : position + len(sort)]
    if [p.name for p in tail] != [c.name for c in sort]:
        return False
    if any(p.sub_part is not None for p in tail):
        return False
    same = all(p.desc == c.desc for p, c in zip(tail, sort, strict=True))
    flipped = all(p.desc != c.desc for p, c in zip(tail, sort, strict=True))
    return same or flipped


# --------------------------------------------------------------------------- sentences


def _reason(
    candidate: _Candidate,
    covering: Sequence[AdviceColumn],
    covers: bool,
    replaced: Sequence[str],
    table: Table,
    implicit: Sequence[str] = (),
    clause: str = "",
) -> str:
    if candidate.loose:
        return _loose_reason(candidate, replaced, table)
    equalities = _names(candidate.equalities)
    first = candidate.tail[0] if candidate.tail and not candidate.sorts else None
    in_list = first is not None and first.rule is Rule.IN_LIST
    range_column = first.name if first is not None and not in_list else ""
    if in_list and first is not None:
        found = f"{equalities} and " if equalities else ""
        sorted_within = _names(candidate.tail[1:])
        clauses = [
            f"finds the rows by {found}the IN list on {first.name}, then holds {sorted_within} "
            f"(in order within each value of the list)"
        ]
    elif equalities and range_column:
        clauses = [f"finds the rows by {equalities}, then the range on {range_column}"]
    elif equalities or range_column:
        clauses = [f"finds the rows by {equalities or 'the range on ' + range_column}"]
    else:
        clauses = []
    if candidate.sorts or candidate.range_sorts:
        rule = candidate.tail[-1].rule if candidate.range_sorts else candidate.tail[0].rule
        clause_name = "GROUP BY" if rule is Rule.GROUP_BY else "ORDER BY"
        order = f"{clause_name} order ({_names(candidate.tail, directions=True)}), with no sort"
        clauses.append(f"returns them in {order}" if clauses else f"returns the rows in {order}")
    sentence = "The index " + " and ".join(clauses)
    if covering:
        sentence += f"; it holds {_names(covering)} too, so the rows are never read (covering)"
    elif covers:
        sentence += "; it holds every column the query reads (covering)"
    if implicit:
        sentence += (
            f"; {_names_text(list(implicit))} ends the primary key InnoDB appends to every "
            "secondary index, so it is not listed"
        )
    if replaced:
        sentence += f"; it extends {_names_text(replaced)}, which it replaces"
    if clause:
        sentence += f"; {clause}"
    return sentence + "."


def _loose_reason(candidate: _Candidate, replaced: Sequence[str], table: Table) -> str:
    grouped = [c for c in candidate.tail if c.rule is Rule.GROUP_BY]
    if not grouped:
        return _min_max_reason(candidate, replaced)
    fixed = [c for c in candidate.tail if c.rule is Rule.EQUALITY]
    extreme = [c for c in candidate.tail if c.rule is Rule.MIN_MAX]
    sentence = f"The index reads one entry per group of {_names(grouped)}"
    if fixed:
        sentence += f" with {_names(fixed)} fixed"
    sentence += ' (a loose index scan, "Using index for group-by")'
    if extreme or candidate.implicit_extreme:
        name = extreme[0].name if extreme else candidate.implicit_extreme
        appended = " (the primary key, which InnoDB appends)" if not extreme else ""
        sentence += f": the MIN()/MAX() of {name}{appended} is at the edge of each group"
    sentence += ", with no sort and no row read"
    rows = table.rows if table.rows is not None else cost.UNKNOWN_ROWS
    per_group = rows // max(1, cost.groups(table, [c.name for c in grouped]))
    if per_group < cost.LOOSE_SCAN_MIN_ROWS_PER_GROUP:
        sentence += (
            f"; with about {_rows_text(per_group)} per group the server may read the whole index "
            "instead, still with no sort"
        )
    if replaced:
        sentence += f"; it extends {_names_text(replaced)}, which it replaces"
    return sentence + "."


def _min_max_reason(candidate: _Candidate, replaced: Sequence[str]) -> str:
    extreme = candidate.tail[-1].name
    sentence = "The index "
    if candidate.equalities:
        sentence += f"finds the rows by {_names(candidate.equalities)} and "
    sentence += (
        f"reads the MIN()/MAX() of {extreme} from the edge of "
        f"{'them' if candidate.equalities else 'the index'}: one entry per call, no row read"
    )
    if replaced:
        sentence += f"; it extends {_names_text(replaced)}, which it replaces"
    return sentence + "."


def _rows_text(rows: int) -> str:
    return f"{rows:,} row" + ("" if rows == 1 else "s")


def _stops_at_range_note(chosen: AdviceColumn, ranges: Sequence[AdviceColumn]) -> str:
    others = [r.name for r in ranges if r.name != chosen.name]
    verb = "is" if len(others) == 1 else "are"
    return (
        f"The index stops at the range on {chosen.name} (the most selective): an index narrows "
        f"by one range column only, so {_names_text(others)} {verb} checked on the rows it finds."
    )


def _described(index: Index, table: Table) -> str:
    """``index idx_a (a, id)``, or ``primary key (id)``."""
    if index.name == "primary":
        return f"primary key ({', '.join(table.primary_key)})"
    return f"index {index.name} ({', '.join(p.name for p in effective_parts(index, table))})"


def _served_reason(index: Index, candidate: _Candidate, table: Table) -> str:
    described = _described(index, table)
    if index.unique and set(index.columns) <= {c.name for c in candidate.equalities}:
        return f"The conditions fix every column of the {described}, so at most one row is read."
    if candidate.loose and candidate.tail[0].rule is Rule.GROUP_BY:
        return (
            f"The existing {described} already serves this GROUP BY as a left-most prefix, "
            "with a loose index scan."
        )
    if candidate.loose:
        return f"The existing {described} already serves this MIN()/MAX() as a left-most prefix."
    what = "sort" if candidate.sorts else "filter"
    if candidate.range_sorts:
        what = "filter and sort"
    return f"The existing {described} already serves this {what} as a left-most prefix."


def _nothing(table: Table, notes: list[str], access: TableAccess) -> TableAdvice:
    if notes and (access.obstacles or access.set_columns):
        return TableAdvice(table.name, Action.NONE, reason=notes[0], notes=tuple(notes[1:]))
    reason = "Nothing here can use an index: no filter, join or sort on this table."
    if access.role is Role.DRIVING and any(p.kind is PredicateKind.JOIN for p in access.predicates):
        reason = (
            "This table is read first, so its join columns are not known yet and there is "
            "no filter or sort for an index to serve."
        )
    return TableAdvice(table.name, Action.NONE, reason=reason, notes=tuple(notes))


def _two_value_reason(columns: Sequence[str]) -> str:
    verb = "has" if len(columns) == 1 else "have"
    return (
        f"{_names_text(columns)} {verb} at most {TWO_VALUES} distinct values, so an index would "
        "still read about half the table and a full scan is as fast (unless one value is rare)."
    )


def _competing_note(range_column: AdviceColumn, sort: Sequence[AdviceColumn], rule: Rule) -> str:
    clause = "GROUP BY" if rule is Rule.GROUP_BY else "ORDER BY"
    return (
        f"The range on {range_column.name} and the {clause} on {_names(sort)} compete: after a "
        f"range an index is not in {clause} order, so this index still sorts; the alternative "
        "index avoids the sort but reads the whole range (better with a small LIMIT)."
    )


def _obstacle_notes(access: TableAccess, table: Table, server: Server) -> list[str]:
    return [_obstacle_sentence(o, table, server) for o in access.obstacles]


def _obstacle_sentence(obstacle: Obstacle, table: Table, server: Server) -> str:
    if obstacle.kind is ObstacleKind.FUNCTION:
        return _function_sentence(obstacle, table, server)
    if obstacle.kind is ObstacleKind.LEADING_WILDCARD:
        return (
            f"{obstacle.expression} starts with a wildcard, so no index on {obstacle.column} "
            "can narrow it; a FULLTEXT index or a search engine can."
        )
    if obstacle.kind is ObstacleKind.CONVERSION:
        return (
            f"{obstacle.expression} compares the string column {obstacle.column} to a number, "
            "so every row is converted and no index is used; compare it to a quoted string."
        )
    return (
        f"A branch of {obstacle.expression} has no condition an index can serve, so the whole "
        "OR reads every row; give each branch an indexable condition or split it into a UNION."
    )


def _function_sentence(obstacle: Obstacle, table: Table, server: Server) -> str:
    start = f"{obstacle.expression} hides {obstacle.column} from any index"
    if obstacle.rewrite:
        return f"{start}; rewrite it as {obstacle.rewrite}."
    if server.functional_indexes:
        ddl = f"ALTER TABLE {table.name} ADD INDEX (({obstacle.expression}))"
        return f"{start}; index the expression: {ddl}."
    return (
        f"{start}; add a generated column AS ({obstacle.expression}) VIRTUAL and index it, "
        "then query that column."
    )


def _set_columns_note(columns: Sequence[str]) -> str:
    many = len(columns) > 1
    return (
        f"{_names_text(columns)} {'are' if many else 'is'} changed by the statement, "
        f"so {'they stay' if many else 'it stays'} out of the index (every update would move "
        "the index entry)."
    )


def _kept_set_columns_note(columns: Sequence[str], access: TableAccess) -> str:
    many = len(columns) > 1
    return (
        f"{_names_text(columns)} {'are' if many else 'is'} changed by the statement but "
        f"{'lead' if many else 'leads'} the index: with ORDER BY ... LIMIT the equality finds "
        f"the rows in order, and each call moves at most {access.limit:,} index "
        f"{'entry' if access.limit == 1 else 'entries'}."
    )


def _names(columns: Sequence[AdviceColumn], *, directions: bool = False) -> str:
    def label(column: AdviceColumn) -> str:
        if column.rule is Rule.JOIN:
            return f"{column.name} (the join column)"
        return column.name + (" DESC" if directions and column.desc else "")

    return _names_text([label(c) for c in columns])


def _names_text(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _sentence(text: str) -> str:
    return _upper_first(text.rstrip(".")) + "."


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]
