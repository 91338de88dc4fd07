"""What the advisor reads from a statement (per table access) and what it advises.

The statement side (:mod:`.statement`) turns SQL into :class:`TableAccess` values; the
rules (:mod:`.engine`) turn each access plus the table's snapshot into
:class:`TableAdvice`. Both are plain frozen data, so the rules are testable without SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "Action",
    "AdviceColumn",
    "AdviceError",
    "Aggregate",
    "Obstacle",
    "ObstacleKind",
    "Predicate",
    "PredicateKind",
    "Role",
    "Rule",
    "SortKey",
    "TableAccess",
    "TableAdvice",
]


class AdviceError(ValueError):
    """The statement cannot be advised on: unparseable, or not matching the snapshot."""


class PredicateKind(StrEnum):
    """How a condition can use an index column."""

    EQUALITY = "equality"  # =, <=>, IS NULL, IN with one value
    IN_LIST = "in_list"  # IN with several values: equality-like unless a sort follows
    RANGE = "range"  # <, >, BETWEEN, LIKE 'x%'
    JOIN = "join"  # equal to a column of another table (or of the outer query)


class Role(StrEnum):
    """Where a table stands in the join order the advice assumes."""

    DRIVING = "driving"  # read first: its filters and its sort
    INNER = "inner"  # looked up once per row of the tables before it: join column + filters


class ObstacleKind(StrEnum):
    """Why a condition cannot use an index on its column."""

    FUNCTION = "function"
    LEADING_WILDCARD = "leading_wildcard"
    CONVERSION = "conversion"
    OR_BRANCH = "or_branch"


class Rule(StrEnum):
    """The rule that put a column into a suggested index."""

    EQUALITY = "equality"
    IN_LIST = "in_list"
    JOIN = "join"
    RANGE = "range"
    ORDER_BY = "order_by"
    GROUP_BY = "group_by"
    MIN_MAX = "min_max"  # the MIN()/MAX() column after the GROUP BY ones: a loose index scan
    COVERING = "covering"


class Action(StrEnum):
    """What to do for one table."""

    ADD = "add"
    REPLACE = "replace"  # an existing index is a left-most prefix of the new one: drop it
    NONE = "none"


@dataclass(frozen=True)
class Predicate:
    """One sargable condition on a column, e.g. ``status = ?`` (operator ``=``)."""

    column: str
    kind: PredicateKind
    operator: str


@dataclass(frozen=True)
class Obstacle:
    """A condition that reads a column but cannot use an index on it.

    ``expression`` is the offending SQL (``DATE(created_at)``); ``rewrite`` a sargable form
    when one is known.
    """

    column: str
    kind: ObstacleKind
    expression: str = ""
    rewrite: str = ""


@dataclass(frozen=True)
class SortKey:
    """One ORDER BY / GROUP BY column."""

    column: str
    desc: bool = False


@dataclass(frozen=True)
class Aggregate:
    """One aggregate of the select list: ``MAX(c)`` is ("max", "c"); ``COUNT(*)`` ("count", "").

    ``column`` is empty when the argument is ``*`` or an expression; ``distinct`` marks
    ``COUNT(DISTINCT c)`` and the like.
    """

    function: str
    column: str = ""
    distinct: bool = False


@dataclass(frozen=True)
class TableAccess:
    """Everything one reference to a table in a statement asks of an index.

    ``or_branches`` holds, for a WHERE that is an OR across columns, the sargable conditions
    of each branch. ``sort_problem`` says why the sort cannot come from this table's index
    when there is a sort it cannot serve. ``read_all`` means ``SELECT *``. ``aggregates``
    are the select list's aggregates on this table; ``single_table`` says the SELECT reads
    no other table; ``limit`` is the rows the statement stops after (offset included), None
    without a LIMIT; ``limit_assumed`` marks a placeholder LIMIT taken as a typical page.
    ``lookups`` is how many times an inner table is looked up per call: the rows the table
    read first is estimated to find (1 for the table read first).
    """

    table: str
    role: Role = Role.DRIVING
    predicates: tuple[Predicate, ...] = ()
    or_branches: tuple[tuple[Predicate, ...], ...] = ()
    sort: tuple[SortKey, ...] = ()
    sort_rule: Rule = Rule.ORDER_BY
    sort_problem: str = ""
    read_columns: tuple[str, ...] = ()
    read_all: bool = False
    set_columns: tuple[str, ...] = ()
    dml: bool = False
    obstacles: tuple[Obstacle, ...] = ()
    aggregates: tuple[Aggregate, ...] = ()
    single_table: bool = False
    limit: int | None = None
    limit_assumed: bool = False
    lookups: int = 1


@dataclass(frozen=True)
class AdviceColumn:
    """One column of a suggested index and the rule that put it there."""

    name: str
    desc: bool
    rule: Rule


@dataclass(frozen=True)
class TableAdvice:
    """The advice for one table access.

    ``redundant`` names the existing indexes the new one makes redundant (a ``replace``
    drops them in its DDL). ``notes`` are further sentences: obstacles the index works
    around, the sort a range gave up. ``alternative`` is the other candidate when a range
    and a sort compete. ``rows_before`` and ``rows_after`` estimate the rows examined per
    call (for a table joined after the first: per lookup times ``lookups``) with the best
    existing index and
    with the suggested one, from the same cardinalities; ``index_bytes`` is the suggested
    index's width per row (its columns plus the primary key InnoDB appends).
    ``rows_measured`` is this access's share of the rows examined per call the server
    measured for the statement, when it was measured (see ``cost.split_measured``).
    """

    table: str
    action: Action
    columns: tuple[AdviceColumn, ...] = ()
    ddl: str = ""
    reason: str = ""
    redundant: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    alternative: TableAdvice | None = None
    rows_before: int | None = None
    rows_after: int | None = None
    index_bytes: int | None = None
    rows_measured: float | None = None
