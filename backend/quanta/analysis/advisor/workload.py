"""Workload index plan: per table, the fewest indexes that serve the most load.

Per-query advice gives one index per statement; a table read by twenty query shapes gets up to
twenty suggestions, several of them prefixes of each other, none weighed against the cost of
maintaining it on every write. The planner takes every query class of a window with its
calls, the schema snapshot and the measured write rate per table, and picks per table the set
of new indexes that minimises the load-weighted rows examined plus the write overhead, under
the rules a DBA sets (:class:`PlanRules`). The primary key is never touched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from quanta.analysis.advisor import advise
from quanta.analysis.advisor.model import Action, AdviceColumn, AdviceError, TableAdvice
from quanta.analysis.advisor.schema import Schema

__all__ = [
    "DroppedIndex",
    "PlanRules",
    "PlannedIndex",
    "ServedQuery",
    "TablePlan",
    "TableWrites",
    "WorkloadQuery",
    "plan_workload",
]


@dataclass(frozen=True)
class WorkloadQuery:
    """One query class of the window, as the planner weighs it."""

    query_id: str
    sql: str  # a real example when there is one, else the fingerprint
    default_db: str | None
    calls: float  # calls in the window
    load: float  # seconds of query time in the window (sum of query_time)
    rows_examined: float  # rows examined in the window (sum)
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


@dataclass(frozen=True)
class ServedQuery:
    """One query an index serves, with its estimated rows examined per call."""

    query_id: str
    load_share: float
    rows_before: int | None  # estimated rows examined per call, best existing index
    rows_after: int | None  # with the plan


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

    @property
    def signature(self) -> str:
        """A stable hash of the DDL, to tell a changed plan from a repeat."""
        return hashlib.sha256(self.ddl.encode()).hexdigest()[:16]


def plan_workload(
    queries: Sequence[WorkloadQuery],
    schema: Schema,
    writes: Mapping[str, TableWrites] | None = None,
    rules: PlanRules = PlanRules(),
) -> list[TablePlan]:
    """One plan per table the queries touch, heaviest read cost first; deterministic."""
    # First version: each query's own suggestion, the heaviest first, up to the rule's count.
    by_table: dict[str, dict[tuple[str, ...], list[tuple[WorkloadQuery, TableAdvice]]]] = {}
    for query in sorted(queries, key=lambda q: q.query_id):
        try:
            advice = advise(query.sql, schema, query.default_db)
        except AdviceError:
            continue
        for item in advice:
            if item.action is Action.NONE or item.table not in schema.tables:
                continue
            key = tuple(c.name for c in item.columns)
            by_table.setdefault(item.table, {}).setdefault(key, []).append((query, item))
    plans = []
    for table_name, candidates in by_table.items():
        ranked = sorted(
            candidates.items(),
            key=lambda kv: (
                -sum(q.calls * ((a.rows_before or 0) - (a.rows_after or 0)) for q, a in kv[1]),
                kv[0],
            ),
        )[: rules.max_new_indexes]
        adds = []
        for _key, served in ranked:
            first = served[0][1]
            name = first.ddl.split(" ADD INDEX ", 1)[1].split(" ", 1)[0]
            adds.append(
                PlannedIndex(
                    name=name,
                    columns=first.columns,
                    definition="ADD INDEX " + first.ddl.split(" ADD INDEX ", 1)[1],
                    served=tuple(
                        ServedQuery(q.query_id, q.load_share, a.rows_before, a.rows_after)
                        for q, a in served
                    ),
                    width_bytes=first.index_bytes or 0,
                    entries_per_s=0.0,
                )
            )
        ddl = f"ALTER TABLE {table_name} " + ", ".join(a.definition for a in adds) if adds else ""
        plans.append(TablePlan(table_name, tuple(adds), (), ddl, 0.0, 0.0, 0.0, (), ()))
    return plans
