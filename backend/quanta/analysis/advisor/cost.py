"""The numbers behind index advice: rows examined per call, index width, the covering trade.

Every estimate comes from the snapshot's cardinalities, as the optimizer's own statistics
would: an equality keeps ``rows / distinct`` rows, an IN list of unknown length
:data:`IN_LIST_VALUES` times that, a range :data:`RANGE_FRACTION` of them (the optimizer's
default guess), and a LIMIT stops an index that delivers the rows in the wanted order once
enough rows matched. The same function prices the best existing index (rows before) and the
suggested one (rows after), so the two numbers are comparable.

The covering policy (:func:`covering_verdict`): appending the columns a query reads saves
one primary-key lookup per row read through the index, and costs width in every index entry
(storage, buffer pool, write amplification) for every row of the table. It pays only when

1. the query reads at least :data:`MIN_ROWS_TO_COVER` rows per call through the index:
   a hundred primary-key lookups from the buffer pool take well under a millisecond, so below
   that the saving does not pay for a wider index on every write; and
2. the added columns are few (:data:`MAX_COVERING_ADDED_COLUMNS`, and the index stays within
   :data:`MAX_INDEX_COLUMNS`), none is TEXT/BLOB, and the index stays narrow next to the row
   (at most :data:`MAX_INDEX_ROW_SHARE` of the row's bytes, unless at most
   :data:`MAX_NARROW_ADDED_COLUMNS` columns of :data:`NARROW_COLUMN_BYTES` bytes or less are
   added); never the whole row, unless a single narrow column completes it.

The checks run in that order (TEXT/BLOB first) and the first that fails gives the reason.

When an index does not pay (issue 41):

* A full scan is cheaper than an index that still reads more than :func:`scan_share` of the
  table, one primary-key lookup per row. The share is the cost model of MariaDB up to 10.11
  and MySQL 5.7: a row fetched through a secondary index costs one random page read
  (:data:`RANDOM_READ_COST`), a scan one sequential page read per page of rows, and either
  compares the row (:data:`ROW_COMPARE_COST`, 1/TIME_FOR_COMPARE), so the break-even share is
  ``(1 / rows_per_page + 0.2) / (1 + 0.2)``: about 17% for rows of 100 bytes, 19% for 400.
  MariaDB 10.11 switches from ``ref`` to a full scan at exactly that share of its own row
  estimate (a 200,000-row table: 140-byte rows between 17.3% and 18.9%, 430-byte rows
  between 18.9% and 23.7%). The rule binds only when the share is known, i.e. the index
  narrows by equalities and IN lists on columns with a distinct count (a range's third is a
  guess), and not for a covering index (it reads index entries, not rows) or one a LIMIT
  stops early.
* A new index (added, or replacing one) where an existing index already narrows the access
  must save at least :data:`MIN_ROWS_SAVED` rows examined per call: below that the saving is
  a few dozen buffer-pool lookups (well under a millisecond), while the change costs an
  ALTER TABLE and an index maintained on every write.

Measured beats estimated (issue 41): where the server measured a query's rows examined per
call, :func:`split_measured` splits that figure across the query's table accesses, and an
index's saving on an access is the share of its rows the estimates say the index saves. The
estimates only split the measured total, never multiply past it: a join's inner table is
estimated per lookup times the rows the first table finds, which with unknown cardinalities
can be thousands of times what the server reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from quanta.analysis.advisor.model import Predicate, PredicateKind, TableAccess
from quanta.analysis.advisor.schema import IndexPart, Table

__all__ = [
    "IN_LIST_VALUES",
    "LOOSE_SCAN_MIN_ROWS_PER_GROUP",
    "MAX_COVERING_ADDED_COLUMNS",
    "MAX_INDEX_COLUMNS",
    "MAX_INDEX_ROW_SHARE",
    "MIN_ROWS_SAVED",
    "MIN_ROWS_TO_COVER",
    "NARROW_COLUMN_BYTES",
    "RANGE_FRACTION",
    "UNKNOWN_ROWS",
    "covering_verdict",
    "groups",
    "index_bytes",
    "known_share",
    "rows_examined",
    "rows_per_page",
    "scan_share",
    "split_measured",
]

# An index wider than this costs more on every write than a covering read saves.
MAX_INDEX_COLUMNS = 5
# At most this many columns are appended only to make an index covering.
MAX_COVERING_ADDED_COLUMNS = 3
# A covering index at most this share of the row's bytes; wider is a second copy of the table.
MAX_INDEX_ROW_SHARE = 0.5
# A column this narrow or narrower (an INT, a DATETIME) is cheap to add: up to
# MAX_NARROW_ADDED_COLUMNS of them pass the width bound, and one may complete a whole-row index.
NARROW_COLUMN_BYTES = 8
MAX_NARROW_ADDED_COLUMNS = 2
# Covering pays when the query reads at least this many rows per call through the index.
MIN_ROWS_TO_COVER = 1000
# A loose index scan pays when a group holds at least this many rows; with fewer the server
# may read the whole index instead (still in order, with no row read), and the reason says so.
LOOSE_SCAN_MIN_ROWS_PER_GROUP = 10
# The optimizer's guesses where the snapshot is silent.
RANGE_FRACTION = 1 / 3
IN_LIST_VALUES = 3
UNKNOWN_ROWS = 1000
UNKNOWN_EQUALITY_ROWS = 10  # rows per value of a column without a distinct estimate
# The scan share (see the module doc): MariaDB <= 10.11's and MySQL 5.7's cost units.
RANDOM_READ_COST = 1.0  # one page read per row fetched through a secondary index
ROW_COMPARE_COST = 0.2  # one row checked against the WHERE (1 / TIME_FOR_COMPARE)
PAGE_BYTES = 16384  # an InnoDB page
PAGE_FILL = 15 / 16  # InnoDB leaves a sixteenth of a page free for updates
ROW_OVERHEAD_BYTES = 18  # record header (5), DB_TRX_ID (6) and DB_ROLL_PTR (7) per row
# A change to the indexes where an existing one already narrows must save this many rows
# examined per call (see the module doc).
MIN_ROWS_SAVED = 100


def _table_rows(table: Table) -> float:
    return float(table.rows if table.rows is not None else UNKNOWN_ROWS)


def _selectivity(table: Table, predicate: Predicate) -> float:
    """The fraction of the table one condition keeps."""
    rows = _table_rows(table)
    column = table.columns.get(predicate.column)
    if predicate.kind is PredicateKind.RANGE:
        return RANGE_FRACTION
    distinct = column.distinct if column is not None and column.distinct else None
    per_value = 1 / distinct if distinct else min(1.0, UNKNOWN_EQUALITY_ROWS / max(rows, 1))
    if predicate.kind is PredicateKind.IN_LIST:
        return min(1.0, per_value * IN_LIST_VALUES)
    return per_value


def rows_examined(
    table: Table,
    parts: Sequence[str],
    predicates: Sequence[Predicate],
    *,
    limit: int | None = None,
    in_order: bool = False,
) -> int:
    """Rows an index with these leading columns reads per call (per lookup when joined).

    The index narrows by its equality columns from the left and by at most one range column
    after them; the other conditions filter the rows read. With ``in_order`` (the index
    delivers the rows in the wanted order, or no order is wanted) a LIMIT stops the scan
    once ``limit`` rows passed the other conditions.

    Example:
        >>> from quanta.analysis.advisor.schema import Column
        >>> t = Table("d.t", "innodb", 1000, {"a": Column("a", "int", distinct=100)}, (), ())
        >>> rows_examined(t, ["a"], [Predicate("a", PredicateKind.EQUALITY, "=")])
        10
    """
    by_column: dict[str, list[Predicate]] = {}
    for predicate in predicates:
        by_column.setdefault(predicate.column, []).append(predicate)
    fraction = 1.0
    used: set[str] = set()
    for name in parts:
        found = by_column.get(name)
        if not found:
            break
        best = min(found, key=lambda p: _selectivity(table, p))
        fraction *= _selectivity(table, best)
        used.add(name)
        if best.kind is PredicateKind.RANGE:
            break  # an IN list is several equalities: the next column still narrows
    rows = max(1.0, _table_rows(table) * fraction)
    if limit is not None and in_order:
        residual = 1.0
        for name, found in by_column.items():
            if name not in used:
                residual *= min(_selectivity(table, p) for p in found)
        rows = min(rows, max(1.0, limit / residual))
    return round(rows)


def rows_per_page(table: Table) -> int:
    """Rows in one page of the table (its columns' widths plus the row overhead)."""
    return max(1, int(PAGE_BYTES * PAGE_FILL / (table.row_bytes + ROW_OVERHEAD_BYTES)))


def scan_share(table: Table) -> float:
    """The share of the table above which a full scan is cheaper than an index that reads
    the rows one primary-key lookup each (see the module doc).

    Example:
        >>> from quanta.analysis.advisor.schema import Column
        >>> t = Table("d.t", "innodb", 10**6, {"a": Column("a", "varchar(100)")}, (), ())
        >>> round(scan_share(t), 3)
        0.173
    """
    sequential = 1 / rows_per_page(table) + ROW_COMPARE_COST
    return sequential / (RANDOM_READ_COST + ROW_COMPARE_COST)


def known_share(
    table: Table, parts: Sequence[str], predicates: Sequence[Predicate]
) -> float | None:
    """The share of the table an index with these leading columns narrows to, when it
    narrows by equalities and IN lists on columns with a known distinct count only; None
    when a range (whose share is a guess) or a column of unknown count narrows it.

    Example:
        >>> from quanta.analysis.advisor.schema import Column
        >>> t = Table("d.t", "innodb", 1000, {"a": Column("a", "int", distinct=5)}, (), ())
        >>> known_share(t, ["a"], [Predicate("a", PredicateKind.EQUALITY, "=")])
        0.2
    """
    by_column: dict[str, list[Predicate]] = {}
    for predicate in predicates:
        by_column.setdefault(predicate.column, []).append(predicate)
    share = 1.0
    for name in parts:
        found = by_column.get(name)
        if not found:
            break
        best = min(found, key=lambda p: _selectivity(table, p))
        column = table.columns.get(name)
        if best.kind is PredicateKind.RANGE or column is None or not column.distinct:
            return None
        share *= _selectivity(table, best)
    return share


def split_measured(measured: float, estimates: Sequence[tuple[float, bool]]) -> list[float]:
    """Split a query's measured rows examined per call across its table accesses.

    ``estimates`` holds, per access, its estimated rows per call and whether it is read first
    (not looked up per row of another table). Those read first take their estimates first
    (scaled down together if they pass the measured total: nothing multiplies them, so they
    are the better part of the estimates); the accesses looked up per row of another share
    what is left in proportion to their estimates. The parts sum to ``measured``.

    Example:
        >>> split_measured(1_000_000, [(50_000, True), (8_300_000_000, False)])
        [50000.0, 950000.0]
        >>> split_measured(1, [(10, True)])
        [1.0]
    """
    if not estimates:
        return []
    first = [(i, max(0.0, e)) for i, (e, read_first) in enumerate(estimates) if read_first]
    looked_up = [(i, max(0.0, e)) for i, (e, read_first) in enumerate(estimates) if not read_first]
    parts = [0.0] * len(estimates)
    first_total = sum(e for _, e in first)
    looked_up_total = sum(e for _, e in looked_up)
    if not first:
        taken = 0.0
    elif looked_up_total <= 0:  # no looked-up access (or one estimated at nothing)
        taken = measured
    else:
        taken = min(first_total, measured)
    for group, total, amount in (
        (first, first_total, taken),
        (looked_up, looked_up_total, measured - taken),
    ):
        for i, estimate in group:
            parts[i] = amount * (estimate / total if total > 0 else 1 / len(group))
    return parts


def groups(table: Table, columns: Iterable[str]) -> int:
    """The number of distinct combinations of the columns (at most the table's rows)."""
    rows = _table_rows(table)
    count = 1.0
    for name in columns:
        column = table.columns.get(name)
        known = column.distinct if column is not None else None
        count *= known or UNKNOWN_EQUALITY_ROWS
    return round(max(1.0, min(rows, count)))


def index_bytes(table: Table, parts: Sequence[IndexPart]) -> int:
    """Bytes per index entry: the key columns plus the primary key InnoDB appends."""
    sub_parts = {p.name: p.sub_part for p in parts}
    names = [p.name for p in parts]
    if table.clustered:
        names += [c for c in table.primary_key if c not in names]
    total = 0
    for name in names:
        column = table.columns.get(name)
        width = column.width if column is not None else 0
        prefix = sub_parts.get(name)
        total += width if prefix is None else min(width, prefix + 2)
    return total


@dataclass(frozen=True)
class CoveringVerdict:
    """Whether to append the missing columns, and the one sentence when not."""

    cover: bool
    reason: str = ""


def covering_verdict(
    table: Table,
    key: Sequence[str],
    missing: Sequence[str],
    rows_read: int,
    access: TableAccess,
) -> CoveringVerdict:
    """Decide whether appending ``missing`` to the index ``key`` pays (see the module doc).

    Args:
        table: The table's snapshot.
        key: The index's columns before covering.
        missing: The columns the query reads that the index lacks (primary key excluded).
        rows_read: Rows per call the index reads (see :func:`rows_examined`).
        access: The table access (``read_all`` for ``SELECT *``).

    Returns:
        ``cover`` True to append them; else the reason, starting "Not covering:".
    """
    columns = [table.columns[name] for name in missing if name in table.columns]
    lobs = [c.name for c in columns if c.is_lob]
    if lobs:
        why = f"{_names_text(lobs)} is TEXT/BLOB, which an index cannot hold whole"
        return CoveringVerdict(False, f"Not covering: {why}.")
    total_columns = len(key) + len(missing)
    if rows_read < MIN_ROWS_TO_COVER:
        lookups = (
            "1 primary-key lookup costs"
            if rows_read == 1
            else f"{rows_read:,} primary-key lookups cost"
        )
        return CoveringVerdict(
            False,
            f"Not covering: the query is estimated to read about {rows_read:,} "
            f"{'row' if rows_read == 1 else 'rows'} per call through the index; {lookups} less "
            f"than a {total_columns}-column index.",
        )
    implicit = set(table.primary_key) if table.clustered else set()
    whole_row = set(table.columns) <= set(key) | set(missing) | implicit
    narrow = all(c.width <= NARROW_COLUMN_BYTES for c in columns)
    width = index_bytes(table, [IndexPart(n) for n in (*key, *missing)])
    if whole_row and not (len(missing) == 1 and narrow):
        what = "SELECT * reads" if access.read_all else "the query reads"
        return CoveringVerdict(
            False,
            f"Not covering: {what} every column, so a covering index would be a second copy "
            f"of the table ({width} of its {table.row_bytes} bytes per row), sorted differently.",
        )
    if len(missing) > MAX_COVERING_ADDED_COLUMNS or total_columns > MAX_INDEX_COLUMNS:
        return CoveringVerdict(
            False,
            f"Not covering: the query reads {len(missing)} more columns, which would make a "
            f"{total_columns}-column index (more than {MAX_COVERING_ADDED_COLUMNS} added or "
            f"{MAX_INDEX_COLUMNS} in all costs more on every write than the lookups it saves).",
        )
    few_narrow = narrow and len(missing) <= MAX_NARROW_ADDED_COLUMNS
    if not (whole_row or few_narrow) and width > MAX_INDEX_ROW_SHARE * table.row_bytes:
        return CoveringVerdict(
            False,
            f"Not covering: adding {_names_text(missing)} would make the index {width} of the "
            f"row's {table.row_bytes} bytes, more than {MAX_INDEX_ROW_SHARE:.0%}: nearly a "
            "second copy of the table.",
        )
    return CoveringVerdict(True)


def _names_text(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]
