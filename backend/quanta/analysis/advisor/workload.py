"""Workload index plan: per table, the fewest indexes that serve the most load.

Per-query advice gives one index per statement; a table read by twenty query shapes gets up to
twenty suggestions, several of them prefixes of each other, none weighed against the cost of
maintaining it on every write. The planner takes every query class of a window with its
calls, the schema snapshot and the measured write rate per table, and picks per table the set
of new indexes that minimises the load-weighted rows examined plus the write overhead, under
the rules a DBA sets (:class:`PlanRules`). The primary key is never touched.

Measured beats estimated (issue 41): a query whose rows examined the server measured is
weighed by them, split across its table accesses by the estimates
(:func:`quanta.analysis.advisor.cost.split_measured`); an index saves on an access the share
of its rows the estimates say it saves. The floor every new index must clear is a share of
the workload's rows examined per second, measured where it was measured. Served queries and
notes say which figures are measured and which are estimates.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from quanta.analysis.advisor import cost, weigh_accesses
from quanta.analysis.advisor.engine import (
    BTREE,
    access_rows,
    add_index_clause,
    alter_table_ddl,
    effective_parts,
    index_name,
)
from quanta.analysis.advisor.model import (
    Action,
    AdviceColumn,
    AdviceError,
    Rule,
    TableAccess,
    TableAdvice,
)
from quanta.analysis.advisor.schema import Index, IndexPart, Schema, Server, Table
from quanta.analysis.advisor.statement import MAX_PARSE_CHARS

__all__ = [
    "DEFAULT_MIN_GAIN_SHARE",
    "DEFAULT_WINDOW_SECONDS",
    "DEFAULT_WRITE_ENTRY_COST",
    "SOLVER_TIME_LIMIT_S",
    "WALL_CLOCK_FACTOR",
    "DroppedIndex",
    "LeftOut",
    "PlanRules",
    "PlannedIndex",
    "ServedQuery",
    "TablePlan",
    "TableWrites",
    "WorkloadQuery",
    "left_out_note",
    "plan_workload",
    "rate_text",
]

DEFAULT_WRITE_ENTRY_COST = 10.0
DEFAULT_MIN_GAIN_SHARE = 0.005
# The window the queries' calls were counted over when the caller does not say.
DEFAULT_WINDOW_SECONDS = 3600.0
# CP-SAT's limit per table, in its deterministic time (so that a limit reached gives the same
# plan on any machine and load); a table's model is small (tens of candidates) and solves to
# optimality well within it: the limit only bounds a pathological input. Wall-clock time is
# bounded too, at WALL_CLOCK_FACTOR times the limit, in case a slow machine stretches it.
SOLVER_TIME_LIMIT_S = 5.0
WALL_CLOCK_FACTOR = 4.0
# Merged candidates per table at most (the query's own suggestions always count).
MAX_CANDIDATES = 120
# The objective's integer scale: every term is a share of the workload's rows examined per
# second in billionths, so CP-SAT's integers neither overflow nor round a real gain to zero,
# and the width tie-break (one unit per byte) never outweighs a real gain.
OBJECTIVE_SCALE = 1_000_000_000
_EQUALITY_RULES = (Rule.EQUALITY, Rule.IN_LIST, Rule.JOIN)


@dataclass(frozen=True)
class WorkloadQuery:
    """One query class of the window, as the planner weighs it."""

    query_id: str
    sql: str  # a real example when there is one, else the fingerprint
    default_db: str | None
    calls: float  # calls in the window
    load: float  # seconds of query time in the window (sum of query_time)
    rows_examined: float | None  # rows examined in the window (sum), None: not measured
    load_share: float  # share of the instance's load in the window, 0..1


@dataclass(frozen=True)
class TableWrites:
    """Measured write rate of one table (rows per second)."""

    table: str  # "db.table", lower case (as Schema.tables keys)
    inserted_per_s: float = 0.0
    updated_per_s: float = 0.0
    deleted_per_s: float = 0.0


@dataclass(frozen=True)
class PlanRules:
    """Rules a DBA sets; the primary key is never touched (not a rule)."""

    max_new_indexes: int = 3  # per table
    width_budget_bytes: int | None = None  # bytes per row summed over a table's new indexes
    drop_redundant: bool = True  # propose dropping existing indexes the plan makes redundant
    # One index entry maintained (an insert, a delete, an update of an indexed column) costs
    # as much as this many rows examined: a B-tree change with its redo and page writes,
    # against a row read from the buffer pool.
    write_entry_cost: float = DEFAULT_WRITE_ENTRY_COST
    # A new index must save at least this share of the workload's estimated rows examined
    # per second (after its write overhead): the fewest indexes that serve the most load.
    min_gain_share: float = DEFAULT_MIN_GAIN_SHARE


@dataclass(frozen=True)
class ServedQuery:
    """One query an index serves, with its rows examined per call now and with the plan.

    With ``measured``, ``rows_before`` is what the server measured (the accesses the index
    serves: their share of it) and ``rows_after`` that scaled by the estimated saving;
    without, both are the estimates. ``estimated_before`` and ``estimated_after`` are the
    advisor's estimates either way.
    """

    query_id: str
    load_share: float
    rows_before: int | None  # rows examined per call, best existing index
    rows_after: int | None  # with the plan
    measured: bool = False
    estimated_before: int | None = None
    estimated_after: int | None = None


@dataclass(frozen=True)
class PlannedIndex:
    """A new index of the plan and its evidence."""

    name: str
    columns: tuple[AdviceColumn, ...]
    definition: str  # "ADD INDEX idx_t_a_b (a, b)"
    served: tuple[ServedQuery, ...]
    width_bytes: int  # per row, including the primary key InnoDB appends
    entries_per_s: float  # index entries maintained per second from the write rate


@dataclass(frozen=True)
class DroppedIndex:
    """An existing index the plan makes redundant."""

    name: str
    reason: str  # one sentence: "a left-most prefix of idx_t_a_b"
    replaced_by: str | None


@dataclass(frozen=True)
class LeftOut:
    """A query's own suggestion the plan left out, and why (one clause)."""

    name: str
    columns: tuple[str, ...]
    query_ids: tuple[str, ...]  # the queries it was suggested for
    reason: str
    in_chat: tuple[str, ...] = ()  # of those, the ones chat already received it for


@dataclass(frozen=True)
class TablePlan:
    """The plan for one table: the indexes to add and drop, in one ALTER TABLE."""

    table: str  # "db.table"
    adds: tuple[PlannedIndex, ...]
    drops: tuple[DroppedIndex, ...]
    ddl: str  # one ALTER TABLE with every add and drop; "" when nothing
    rows_before_per_s: float  # load-weighted estimated rows examined per second now
    rows_after_per_s: float  # with the plan
    write_entries_per_s: float  # extra index entries maintained per second by the adds
    unserved: tuple[str, ...]  # query ids touching the table that no index can help
    notes: tuple[str, ...]  # sentences: why a candidate was left out, solver status
    left_out: tuple[LeftOut, ...] = ()  # the queries' own suggestions left out, with why

    @property
    def signature(self) -> str:
        """A stable hash of the DDL, to tell a changed plan from a repeat."""
        return hashlib.sha256(self.ddl.encode()).hexdigest()[:16]


def plan_workload(
    queries: Sequence[WorkloadQuery],
    schema: Schema,
    writes: Mapping[str, TableWrites] | None = None,
    rules: PlanRules = PlanRules(),
    *,
    window_seconds: float = DEFAULT_WINDOW_SECONDS,
    time_limit_s: float = SOLVER_TIME_LIMIT_S,
) -> list[TablePlan]:
    """One plan per table the queries touch, heaviest read cost first; deterministic.

    Args:
        queries: The query classes of the window (any order: they are sorted by id).
        schema: The snapshot with the tables' cardinalities and existing indexes.
        writes: The measured write rate per ``db.table``; a table without one has none.
        rules: The DBA's rules.
        window_seconds: The length of the window ``calls`` were counted over, so that reads
            (calls per second) and writes (rows per second) are weighed in one unit.
        time_limit_s: CP-SAT's time limit per table.

    Returns:
        The plans, the table with the most estimated rows examined per second first. A
        statement the advisor cannot parse is skipped.

    Example:
        >>> from quanta.analysis.advisor.schema import parse_schema
        >>> schema = parse_schema({"server": {"flavor": "mysql", "version": "8.0.36"},
        ...     "tables": {"db.t": {"rows": 100000, "primary_key": ["id"], "columns": {
        ...         "id": {"type": "int"}, "a": {"type": "int", "distinct": 1000},
        ...         "b": {"type": "int", "distinct": 1000}}}}})
        >>> scanned = 3600 * 100000  # Q1's rows examined: measured, a full scan per call
        >>> queries = [WorkloadQuery("Q1", "select id from t where a = 1", "db", 3600, 1,
        ...         scanned, .5),
        ...     WorkloadQuery("Q2", "select id from t where a = 1 and b = 2", "db", 3600, 1,
        ...         None, .5)]
        >>> [plan.ddl for plan in plan_workload(queries, schema)]
        ['ALTER TABLE db.t ADD INDEX idx_t_a_b (a, b)']
    """
    writes = writes or {}
    scans_by_table: dict[str, list[_Scan]] = {}
    for query in sorted(queries, key=lambda q: (q.query_id, q.sql)):
        if len(query.sql) > MAX_PARSE_CHARS:
            continue  # a huge multi-row INSERT reads nothing, and parsing it costs seconds
        try:
            scans = _scans(query, schema, max(window_seconds, 1e-9))
        except (AdviceError, RecursionError):
            # One statement the advisor cannot read (or nested past the parser's recursion
            # limit: a log is hostile input) never stops the plan.
            continue
        for scan in scans:
            scans_by_table.setdefault(scan.table.name, []).append(scan)
    everything = [scan for scans in scans_by_table.values() for scan in scans]
    workload = _Workload(
        rows_per_s=sum(scan.rate * scan.before for scan in everything),
        measured_per_s=sum(scan.rate * scan.before for scan in everything if scan.measured),
    )
    plans = [
        _plan_table(
            schema.tables[name], schema.server, scans, writes.get(name), rules, workload,
            time_limit_s,
        )
        for name, scans in sorted(scans_by_table.items())
    ]  # fmt: skip
    return sorted(plans, key=lambda plan: (-plan.rows_before_per_s, plan.table))


# --------------------------------------------------------------------------- the scans


@dataclass(frozen=True)
class _Workload:
    """The workload's rows examined per second, and how much of it was measured."""

    rows_per_s: float
    measured_per_s: float

    def label(self) -> str:
        """How the figure was obtained, for a note: measured, estimated, or partly."""
        if self.rows_per_s <= 0 or self.measured_per_s <= 0:
            return "estimated"
        if self.measured_per_s >= self.rows_per_s:
            return "measured"
        return f"{self.measured_per_s / self.rows_per_s:.0%} of it measured, the rest estimated"


@dataclass(frozen=True)
class _Scan:
    """One table access of one query: what an index could do for it, per call."""

    query: WorkloadQuery
    table: Table
    access: TableAccess
    advice: tuple[TableAdvice, ...]
    rate: float  # calls per second
    before: float  # rows examined per call with the existing indexes (measured where it was)
    estimated: int  # the advisor's estimate of the same
    measured: bool = False

    @property
    def scale(self) -> float:
        """Measured rows per estimated row of this access (1 when estimated)."""
        return self.before / self.estimated if self.estimated > 0 else 0.0


def _scans(query: WorkloadQuery, schema: Schema, window_seconds: float) -> list[_Scan]:
    """The query's table accesses with their advice; an OR across columns gives one per branch.

    An OR branch is weighed as a scan of its own at the query's full rate: each branch
    without an index reads the whole table, so the baseline of such a query is counted once
    per branch (an overestimate of what the OR costs now, never of what an index saves).
    A measured query's rows examined per call are split across its scans (see the module
    docstring).
    """
    rate = query.calls / window_seconds
    measured = (
        query.rows_examined / query.calls
        if query.rows_examined is not None and query.calls > 0
        else None
    )
    return [
        _Scan(
            query,
            weighed.table,
            weighed.access,
            (weighed.advice,),
            rate,
            weighed.estimated if weighed.measured is None else weighed.measured,
            weighed.estimated,
            measured=weighed.measured is not None,
        )
        for weighed in weigh_accesses(query.sql, schema, query.default_db, measured)
    ]


# --------------------------------------------------------------------------- candidates


@dataclass(frozen=True)
class _Candidate:
    """A possible new index: a query's own suggestion, or a merge of two."""

    columns: tuple[AdviceColumn, ...]
    suggested: bool

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


def _shape(columns: Sequence[AdviceColumn]) -> tuple[list[AdviceColumn], list[AdviceColumn]]:
    """The leading equality columns, then the range or sort columns (covering ones left out)."""
    equalities: list[AdviceColumn] = []
    position = 0
    while position < len(columns) and columns[position].rule in _EQUALITY_RULES:
        equalities.append(columns[position])
        position += 1
    tail = [c for c in columns[position:] if c.rule is not Rule.COVERING]
    return equalities, tail


def _merge(first: _Candidate, second: _Candidate) -> tuple[AdviceColumn, ...] | None:
    """An index whose left-most prefix serves ``first`` and whose whole serves ``second``.

    ``first``'s equalities and its range or sort column(s) must all be equality columns of
    ``second`` (equalities may be reordered; a range or a sort column in the prefix that
    ``second`` does not fix by equality would stop it there), then ``second``'s other
    equalities, then its range or sort.
    """
    first_equal, first_tail = _shape(first.columns)
    second_equal, second_tail = _shape(second.columns)
    fixed = {c.name for c in second_equal}
    if not {c.name for c in (*first_equal, *first_tail)} <= fixed:
        return None
    merged = [*first_equal, *first_tail]
    used = {c.name for c in merged}
    merged += [c for c in second_equal if c.name not in used]
    merged += second_tail
    if len(merged) > cost.MAX_INDEX_COLUMNS:
        return None
    return tuple(merged)


def _candidates(scans: Sequence[_Scan], table: Table) -> list[_Candidate]:
    """Every query's suggestion (and its alternative), then the merges of two, then of three."""
    suggested: dict[tuple[str, ...], _Candidate] = {}
    for scan in scans:
        for item in scan.advice:
            for advice in (item, item.alternative):
                if advice is not None and advice.action is not Action.NONE and advice.columns:
                    candidate = _Candidate(advice.columns, True)
                    suggested.setdefault(candidate.names, candidate)
    found = dict(sorted(suggested.items()))
    base = list(found.values())
    layer = base
    for _round in range(2):  # pairs, then a pair merged with a third
        merged: dict[tuple[str, ...], _Candidate] = {}
        for first in layer:
            for second in base:
                if first is second:
                    continue
                for columns in (_merge(first, second), _merge(second, first)):
                    if columns is None:
                        continue
                    key = tuple(c.name for c in columns)
                    if key not in found and key not in merged and not _exists(columns, table):
                        merged[key] = _Candidate(columns, False)
        layer = [merged[key] for key in sorted(merged)][: max(0, MAX_CANDIDATES - len(found))]
        found.update((c.names, c) for c in layer)
    return list(found.values())


def _exists(columns: Sequence[AdviceColumn], table: Table) -> bool:
    """An existing B-tree index holds these columns as its left-most prefix already."""
    wanted = [(c.name, c.desc) for c in columns]
    for index in table.all_indexes:
        parts = [(p.name, p.desc) for p in effective_parts(index, table) if p.sub_part is None]
        if index.kind == BTREE and parts[: len(wanted)] == wanted:
            return True
    return False


# --------------------------------------------------------------------------- one table


@dataclass(frozen=True)
class _Priced:
    """A candidate with its name, width, write overhead and rows per call for each scan."""

    candidate: _Candidate
    name: str
    width: int
    entries_per_s: float
    rows: tuple[float, ...]  # per scan, at most the scan's rows before
    estimated: tuple[int, ...]  # per scan, the advisor's estimate


def _plan_table(
    table: Table,
    server: Server,
    scans: Sequence[_Scan],
    writes: TableWrites | None,
    rules: PlanRules,
    workload: _Workload,
    time_limit_s: float,
) -> TablePlan:
    """Price every candidate on every scan of the table, let CP-SAT choose, write the DDL."""
    candidates = _candidates(scans, table)
    update_share = _update_shares(scans)
    priced = []
    taken = {index.name for index in table.indexes}
    for candidate in candidates:
        name = _unique_name(index_name(table, candidate.columns), taken)
        taken.add(name)
        parts = tuple(IndexPart(c.name, c.desc) for c in candidate.columns)
        estimated = tuple(_estimated_with(scan, candidate, server) for scan in scans)
        priced.append(
            _Priced(
                candidate,
                name,
                cost.index_bytes(table, parts),
                _entries_per_s(candidate, writes, update_share),
                tuple(
                    min(scan.before, e * scan.scale)
                    for scan, e in zip(scans, estimated, strict=True)
                ),
                estimated,
            )
        )
    chosen, status = _solve(priced, scans, rules, workload.rows_per_s, time_limit_s)
    return _table_plan(table, scans, priced, chosen, status, rules, workload)


def _estimated_with(scan: _Scan, candidate: _Candidate, server: Server) -> int:
    """The advisor's rows per call of the scan with the candidate: its own estimate for its
    own suggestion."""
    for item in scan.advice:
        for advice in (item, item.alternative):
            if (
                advice is not None
                and advice.rows_after is not None
                and tuple(c.name for c in advice.columns) == candidate.names
            ):
                return min(scan.estimated, advice.rows_after)
    return access_rows(scan.access, scan.table, server, candidate.columns)


def _update_shares(scans: Sequence[_Scan]) -> dict[str, float] | None:
    """Per column, the share of the table's UPDATE calls that change it; None with none seen.

    An update moves an index entry only when it changes one of the index's columns.
    """
    updates = [s for s in scans if s.access.set_columns]
    total = sum(s.rate for s in updates)
    if total <= 0:
        return None
    shares: dict[str, float] = {}
    for scan in updates:
        for column in scan.access.set_columns:
            shares[column] = shares.get(column, 0.0) + scan.rate / total
    return shares


def _entries_per_s(
    candidate: _Candidate, writes: TableWrites | None, update_share: dict[str, float] | None
) -> float:
    """Index entries the candidate adds per second: every insert and delete, and the updates
    that change one of its columns (all of them when the workload shows no UPDATE)."""
    if writes is None:
        return 0.0
    if update_share is None:
        changed = 1.0
    else:
        changed = min(1.0, sum(update_share.get(name, 0.0) for name in set(candidate.names)))
    return writes.inserted_per_s + writes.deleted_per_s + writes.updated_per_s * changed


def _unique_name(name: str, taken: set[str]) -> str:
    found, number = name, 2
    while found in taken:
        suffix = f"_{number}"
        found = name[: 64 - len(suffix)] + suffix
        number += 1
    return found


def _solve(
    priced: Sequence[_Priced],
    scans: Sequence[_Scan],
    rules: PlanRules,
    workload_rows_per_s: float,
    time_limit_s: float,
) -> tuple[list[int], str]:
    """The candidates to build: CP-SAT maximises rows saved per second minus write overhead.

    x[c] says candidate c is built; y[s, c] that scan s reads through c (at most one per
    scan, only a built one). The objective is the load-weighted rows examined saved, minus
    each built index's entries maintained per second times ``write_entry_cost`` and the
    fixed ``min_gain_share`` of the workload; in integers, as billionths of the workload's
    rows examined per second, with the width in bytes as a tie-break (narrower wins).
    """
    if not priced or workload_rows_per_s <= 0:
        return [], "no candidate"
    # Imported here: CP-SAT's module takes over a second to import (it pulls in pandas), and
    # the advice service and the renderer import this module for its data types only.
    from ortools.sat.python import cp_model

    unit = workload_rows_per_s / OBJECTIVE_SCALE
    model = cp_model.CpModel()
    build = [model.new_bool_var(f"x{c}") for c in range(len(priced))]
    gains: list[tuple[cp_model.IntVar, int]] = []
    for s, scan in enumerate(scans):
        reads = []
        for c, item in enumerate(priced):
            saved = round(scan.rate * (scan.before - item.rows[s]) / unit)
            if saved <= 0:
                continue
            read = model.new_bool_var(f"y{s}_{c}")
            model.add_implication(read, build[c])
            reads.append(read)
            gains.append((read, saved))
        if len(reads) > 1:
            model.add_at_most_one(reads)
    fixed = rules.min_gain_share * OBJECTIVE_SCALE
    # An index costing more than the whole workload's reads can never pay: capped there, so
    # that a heavy write rate on a table with few reads cannot overflow CP-SAT's integers.
    ceiling = 2 * OBJECTIVE_SCALE
    costs = [
        min(ceiling, round(item.entries_per_s * rules.write_entry_cost / unit + fixed)) + item.width
        for item in priced
    ]
    model.add(sum(build) <= max(0, rules.max_new_indexes))
    if rules.width_budget_bytes is not None:
        model.add(sum(item.width * x for item, x in zip(priced, build, strict=True))
                  <= rules.width_budget_bytes)  # fmt: skip
    model.maximize(
        sum(gain * read for read, gain in gains)
        - sum(price * x for price, x in zip(costs, build, strict=True))
    )
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1  # one worker and a fixed seed: the same plan every time
    solver.parameters.random_seed = 0
    solver.parameters.max_deterministic_time = time_limit_s
    solver.parameters.max_time_in_seconds = time_limit_s * WALL_CLOCK_FACTOR
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return [], "no solution in the time limit"
    chosen = [c for c, x in enumerate(build) if solver.value(x)]
    return chosen, "optimal" if status == cp_model.OPTIMAL else "the best found in the time limit"


# --------------------------------------------------------------------------- the plan


def _table_plan(
    table: Table,
    scans: Sequence[_Scan],
    priced: Sequence[_Priced],
    chosen: Sequence[int],
    status: str,
    rules: PlanRules,
    workload: _Workload,
) -> TablePlan:
    """The chosen indexes with their evidence, the drops, the one ALTER TABLE and the notes."""
    # Each scan reads through the chosen index that leaves it the fewest rows.
    best: list[int | None] = []
    for s, scan in enumerate(scans):
        options = [(priced[c].rows[s], c) for c in chosen if priced[c].rows[s] < scan.before]
        best.append(min(options)[1] if options else None)
    adds: list[PlannedIndex] = []
    drops: list[DroppedIndex] = []
    dropped: set[str] = set()
    order = sorted(chosen, key=lambda c: (-_saved(c, scans, priced, best), priced[c].name))
    for c in order:
        item = priced[c]
        served = _served(c, scans, priced, best)
        adds.append(
            PlannedIndex(
                name=item.name,
                columns=item.candidate.columns,
                definition=add_index_clause(item.name, item.candidate.columns),
                served=served,
                width_bytes=item.width,
                entries_per_s=item.entries_per_s,
            )
        )
        if rules.drop_redundant:
            for old in _made_redundant(item, table):
                if old.name not in dropped:
                    dropped.add(old.name)
                    drops.append(_dropped(old, item, table))
    ddl = ""
    if adds or drops:
        ddl = alter_table_ddl(
            table.name, [(a.name, a.columns) for a in adds], [d.name for d in drops]
        )
    rows_before = sum(scan.rate * scan.before for scan in scans)
    rows_after = sum(
        scan.rate * (scan.before if b is None else priced[b].rows[s])
        for s, (scan, b) in enumerate(zip(scans, best, strict=True))
    )
    helped = {
        scan.query.query_id
        for s, scan in enumerate(scans)
        if any(item.rows[s] < scan.before for item in priced)
    }
    unserved = tuple(sorted({scan.query.query_id for scan in scans} - helped))
    left_out = _left_out(scans, priced, chosen, best, rules, workload)
    notes = _notes(priced, chosen, status, left_out)
    return TablePlan(
        table=table.name,
        adds=tuple(adds),
        drops=tuple(drops),
        ddl=ddl,
        rows_before_per_s=rows_before,
        rows_after_per_s=rows_after,
        write_entries_per_s=sum(a.entries_per_s for a in adds),
        unserved=unserved,
        notes=notes,
        left_out=left_out,
    )


def _saved(
    c: int, scans: Sequence[_Scan], priced: Sequence[_Priced], best: list[int | None]
) -> float:
    return sum(
        scan.rate * (scan.before - priced[c].rows[s])
        for s, scan in enumerate(scans)
        if best[s] == c
    )


def _served(
    c: int, scans: Sequence[_Scan], priced: Sequence[_Priced], best: list[int | None]
) -> tuple[ServedQuery, ...]:
    """The queries the index serves, heaviest first: rows per call summed over their scans."""
    by_query: dict[str, list[_Scan]] = {}
    afters: dict[str, list[tuple[float, int]]] = {}
    for s, scan in enumerate(scans):
        if best[s] == c:
            by_query.setdefault(scan.query.query_id, []).append(scan)
            afters.setdefault(scan.query.query_id, []).append(
                (priced[c].rows[s], priced[c].estimated[s])
            )
    served = [
        ServedQuery(
            query_id,
            found[0].query.load_share,
            round(sum(scan.before for scan in found)),
            round(sum(after for after, _ in afters[query_id])),
            measured=found[0].measured,
            estimated_before=sum(scan.estimated for scan in found),
            estimated_after=sum(estimate for _, estimate in afters[query_id]),
        )
        for query_id, found in by_query.items()
    ]
    return tuple(sorted(served, key=lambda q: (-q.load_share, q.query_id)))


def _made_redundant(item: _Priced, table: Table) -> list[Index]:
    """Existing non-unique B-tree indexes that are a left-most prefix of the new one."""
    parts = tuple(IndexPart(c.name, c.desc) for c in item.candidate.columns)
    return [
        index
        for index in table.indexes
        if not index.unique
        and index.kind == BTREE
        and len(index.parts) <= len(parts)
        and index.parts == parts[: len(index.parts)]
    ]


def _dropped(old: Index, new: _Priced, table: Table) -> DroppedIndex:
    columns = ", ".join(old.columns)
    new_columns = ", ".join(new.candidate.names)
    reason = (
        f"{old.name} ({columns}) is a left-most prefix of {new.name} ({new_columns}), "
        "which serves every lookup it serves."
    )
    return DroppedIndex(old.name, reason, new.name)


def _left_out(
    scans: Sequence[_Scan],
    priced: Sequence[_Priced],
    chosen: Sequence[int],
    best: list[int | None],
    rules: PlanRules,
    workload: _Workload,
) -> tuple[LeftOut, ...]:
    """Each query's own suggestion the plan left out though it would save rows, and why."""
    now = [
        scan.before if b is None else priced[b].rows[s]
        for s, (scan, b) in enumerate(zip(scans, best, strict=True))
    ]
    width = sum(priced[c].width for c in chosen)
    found = []
    for c, item in enumerate(priced):
        if c in chosen or not item.candidate.suggested:
            continue
        gain = sum(scan.rate * max(0, now[s] - item.rows[s]) for s, scan in enumerate(scans))
        if gain <= 0:
            continue  # the plan serves its queries as well
        overhead = item.entries_per_s * rules.write_entry_cost
        floor = rules.min_gain_share * workload.rows_per_s
        if gain <= overhead + floor:
            why = (
                f"it would save {rate_text(gain)} rows examined/s more than the plan, less than "
                f"the {rate_text(overhead + floor)} a new index must save here: "
            )
            if overhead > 0:
                why += (
                    f"{rate_text(item.entries_per_s)} index entries/s to maintain (each worth "
                    f"{rate_text(rules.write_entry_cost)} rows examined) plus "
                )
            why += (
                f"{rules.min_gain_share * 100:g}% of the workload's "
                f"{rate_text(workload.rows_per_s)} rows examined/s ({workload.label()})"
            )
        elif len(chosen) >= rules.max_new_indexes:
            count = rules.max_new_indexes
            plural = "es" if count != 1 else ""
            why = f"the plan holds the {count} new index{plural} the rules allow"
        elif rules.width_budget_bytes is not None and width + item.width > rules.width_budget_bytes:
            why = (
                f"its {item.width} bytes per row would pass the width budget of "
                f"{rules.width_budget_bytes} bytes ({width} used)"
            )
        else:
            why = "another combination saves more"
        suggested_for = sorted(
            {
                scan.query.query_id
                for scan in scans
                for advice in scan.advice
                for own in (advice, advice.alternative)
                if own is not None
                and tuple(col.name for col in own.columns) == item.candidate.names
            }
        )
        found.append(LeftOut(item.name, item.candidate.names, tuple(suggested_for), why))
    return tuple(found)


def _suggested_for(item: _Priced, scans: Sequence[_Scan]) -> tuple[str, ...]:
    """The queries whose own suggestion (or its alternative) is this candidate."""
    return tuple(
        sorted(
            {
                scan.query.query_id
                for scan in scans
                for advice in scan.advice
                for own in (advice, advice.alternative)
                if own is not None and tuple(c.name for c in own.columns) == item.candidate.names
            }
        )
    )


def _notes(
    priced: Sequence[_Priced], chosen: Sequence[int], status: str, left_out: Sequence[LeftOut]
) -> tuple[str, ...]:
    """The solver's status, then why each query's own suggestion left out was left out."""
    if not priced:
        return ("No query here has an index to gain from.",)
    merged = sum(1 for item in priced if not item.candidate.suggested)
    notes = [
        f"CP-SAT chose {len(chosen)} of {len(priced)} candidate indexes "
        f"({len(priced) - merged} suggested for single queries, {merged} merged): {status}."
    ]
    notes += [left_out_note(item) for item in left_out]
    return tuple(notes)


def left_out_note(item: LeftOut) -> str:
    """The plan's note on a left-out suggestion, naming the queries chat already received it
    for (``in_chat``), so that the plan says why it disagrees with chat.

    Example:
        >>> item = LeftOut("idx_t_a", ("a",), ("Q1",), "another combination saves more", ("Q1",))
        >>> left_out_note(item)
        'Left out idx_t_a (a), already suggested in chat for Q1: another combination saves more.'
    """
    chat = f", already suggested in chat for {', '.join(item.in_chat)}" if item.in_chat else ""
    return f"Left out {item.name} ({', '.join(item.columns)}){chat}: {item.reason}."


def rate_text(value: float) -> str:
    """A rate for a sentence: whole numbers with separators, two decimals below ten.

    Example:
        >>> rate_text(1234567.8), rate_text(0.1666)
        ('1,234,568', '0.17')
    """
    return f"{value:,.0f}" if value >= 10 else f"{value:.2f}"
