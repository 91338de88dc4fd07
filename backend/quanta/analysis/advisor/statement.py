"""From one SQL statement (a real example or a fingerprint) to the table accesses it makes.

Parsing is sqlglot's (MySQL dialect). Fingerprint forms are first turned back into SQL:
``in(?+)`` -> ``IN (?, ?)``, ``values(?+)`` and ``value(?+)`` -> ``VALUES (?)``,
``?, ...`` -> ``?, ?``. Then
every table is resolved against the snapshot (the default database for unqualified names),
sqlglot's ``qualify`` resolves aliases and unqualified columns, and each SELECT scope
(subqueries, derived tables, CTEs and UNION members included) is read for the conditions,
joins and sort an index could serve. UPDATE and DELETE are read as the SELECT that finds
their rows, with the SET columns remembered so that they never enter an index.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from quanta.analysis.advisor.model import (
    AdviceError,
    Aggregate,
    Obstacle,
    ObstacleKind,
    Predicate,
    PredicateKind,
    Role,
    Rule,
    SortKey,
    TableAccess,
)
from quanta.analysis.advisor.schema import Schema, Table

__all__ = ["MAX_PARSE_CHARS", "normalise_fingerprint", "table_accesses"]

DIALECT = "mysql"
MAX_PARSE_CHARS = 100_000
"""Longer statements are not parsed (huge multi-row INSERTs): their type is still known."""
# Fingerprint forms and the SQL that parses in their place.
_FINGERPRINT_FORMS = (
    (re.compile(r"\bin\s*\(\?\+\)", re.IGNORECASE), "IN (?, ?)"),
    (re.compile(r"\bvalues?\s*\(\?\+\)", re.IGNORECASE), "VALUES (?)"),  # VALUE is VALUES
    (re.compile(r"\?, \.\.\."), "?, ?"),
    (re.compile(r"\(\.\.\.\)"), "(?, ?)"),
    (re.compile(r"@\?"), "@v"),
)
# Estimates for choosing the table read first: the optimizer's own default guesses.
UNKNOWN_ROWS = 1000
RANGE_FRACTION = 1 / 3
# A placeholder LIMIT (a fingerprint's ``LIMIT ?``) is taken as a typical page of rows.
ASSUMED_LIMIT = 100
_CUT_SHORT_RE = re.compile(r"\s\.\.\.\s*$")
_WILDCARDS = ("%", "_")
_COMPARISONS: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NullSafeEQ: "<=>",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
}
# The comparison seen from the other side: 5 < a is a > 5.
_FLIPPED = {"=": "=", "<=>": "<=>", ">": "<", ">=": "<=", "<": ">", "<=": ">="}
_EQUALITY_OPERATORS = frozenset(("=", "<=>"))
# Sargable rewrites of common functions on a column, by function name.
_DAY_REWRITE = "{col} >= {value} AND {col} < {value} + INTERVAL 1 DAY"
_YEAR_REWRITE = "{col} >= MAKEDATE({value}, 1) AND {col} < MAKEDATE({value} + 1, 1)"
_CASE_REWRITE = "{col} = {value} (the column's collation already ignores case if it is _ci)"
_REWRITES = {"date": _DAY_REWRITE, "year": _YEAR_REWRITE, "lower": _CASE_REWRITE,
             "upper": _CASE_REWRITE}  # fmt: skip


def normalise_fingerprint(sql: str) -> str:
    """Turn the fingerprint forms of a statement back into SQL that parses.

    Args:
        sql: A real statement or a fingerprint (see :mod:`quanta.analysis.fingerprint`).

    Returns:
        The statement with ``in(?+)``, ``values(?+)`` (``value(?+)``) and ``?, ...`` written
        out.

    Example:
        >>> normalise_fingerprint("select * from t where a in(?+) limit ?")
        'select * from t where a IN (?, ?) limit ?'
    """
    for pattern, replacement in _FINGERPRINT_FORMS:
        sql = pattern.sub(replacement, sql)
    return sql


def table_accesses(sql: str, schema: Schema, default_db: str | None = None) -> list[TableAccess]:
    """Read the table accesses of one statement, in the order the tables are written.

    Args:
        sql: A SELECT, UPDATE, DELETE or INSERT ... SELECT, real or fingerprinted.
        schema: The snapshot that names the tables and their columns.
        default_db: The database of unqualified table names (the statement's ``USE``).

    Returns:
        One access per table reference that reads rows (INSERT ... VALUES reads none).

    Raises:
        AdviceError: unparseable SQL, another kind of statement, or a table or column
            that is not in the snapshot.

    Example:
        >>> from quanta.analysis.advisor.schema import parse_schema
        >>> schema = parse_schema({"server": {"flavor": "mysql", "version": "8.0.36"},
        ...     "tables": {"shop.t": {"columns": {"a": {"type": "int"}}}}})
        >>> [p.column for p in table_accesses("select * from t where a = ?", schema)[0].predicates]
        ['a']
    """
    statement = _parse(sql)
    select, updates = _as_select(statement)
    if select is None:
        return []
    tables = _resolve_tables(select, schema, default_db)
    qualified = _qualify(select, schema)
    dml = isinstance(statement, (exp.Update, exp.Delete))
    set_columns = _set_columns(qualified) if updates else {}
    return _Reader(schema, tables, dml=dml, set_columns=set_columns).read(qualified)


def _parse(sql: str) -> exp.Expr:
    sql = normalise_fingerprint(sql)
    if _CUT_SHORT_RE.search(sql):
        raise AdviceError("the statement is cut short (it ends with '...'); use a full example")
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s]
    except SqlglotError as error:
        raise AdviceError(f"cannot parse the statement: {_first_line(str(error))}") from None
    if len(statements) != 1:
        raise AdviceError(f"expected one statement, got {len(statements)}")
    return statements[0]


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "syntax error"


def _as_select(statement: exp.Expr) -> tuple[exp.Expr | None, bool]:
    """The SELECT that finds the statement's rows; whether it has SET columns as projections.

    An UPDATE's SET columns become the projections so that ``qualify`` resolves them.
    """
    if isinstance(statement, (exp.Select, exp.Union, exp.Intersect, exp.Except)):
        return statement, False
    if isinstance(statement, exp.Insert):
        source = statement.expression
        return (source, False) if isinstance(source, (exp.Select, exp.Union)) else (None, False)
    if isinstance(statement, exp.Update):
        targets = ", ".join(e.this.sql(DIALECT) for e in statement.expressions)
        return _dml_select(statement, targets), True
    if isinstance(statement, exp.Delete):
        return _dml_select(statement, "1"), False
    kind = statement.key.upper()
    raise AdviceError(f"{kind} reads no rows to index; advise a SELECT, UPDATE or DELETE")


def _dml_select(statement: exp.Expr, projections: str) -> exp.Expr:
    parts = [f"SELECT {projections} FROM {statement.this.sql(DIALECT)}"]
    for clause in ("where", "order", "limit"):
        node = statement.args.get(clause)
        if node is not None:
            parts.append(node.sql(DIALECT))
    return sqlglot.parse_one(" ".join(parts), read=DIALECT)


def _resolve_tables(select: exp.Expr, schema: Schema, default_db: str | None) -> set[str]:
    """Give every table reference its database; return the snapshot keys referenced."""
    ctes = {cte.alias_or_name.lower() for cte in select.find_all(exp.CTE)}
    found: set[str] = set()
    for table in select.find_all(exp.Table):
        name = table.name.lower()
        if not name or (not table.db and name in ctes):
            continue
        written = f"{table.db}.{name}" if table.db else name
        snapshot = schema.find_table(written, default_db)
        if snapshot is None:
            hint = "" if table.db or default_db else " (pass the default database)"
            raise AdviceError(f"table {written} is not in the schema snapshot{hint}")
        table.set("db", exp.to_identifier(snapshot.name.split(".")[0]))
        table.set("this", exp.to_identifier(snapshot.name.split(".")[1]))
        found.add(snapshot.name)
    return found


def _qualify(select: exp.Expr, schema: Schema) -> exp.Expr:
    mapping: dict[str, object] = {}
    for table in schema.tables.values():
        db, name = table.name.split(".")
        # Only the names matter to qualify; a neutral type avoids parsing enum(...) and the like.
        tables = mapping.setdefault(db, {})
        assert isinstance(tables, dict)
        tables[name] = dict.fromkeys(table.columns, "INT")
    try:
        return qualify(
            select, schema=mapping, dialect=DIALECT, validate_qualify_columns=False,
            quote_identifiers=False, expand_stars=False, identify=False,
        )  # fmt: skip
    except SqlglotError as error:
        raise AdviceError(f"cannot resolve the statement's names: {error}") from None


def _set_columns(qualified: exp.Expr) -> dict[str, tuple[str, ...]]:
    """An UPDATE's SET columns (the projections of its SELECT form), by table alias."""
    found: dict[str, tuple[str, ...]] = {}
    for projection in qualified.expressions:
        column = projection.unalias()
        if isinstance(column, exp.Column):
            found[column.table] = (*found.get(column.table, ()), column.name)
    return found


@dataclass
class _Builder:
    """The mutable state of one table reference while its scope is read."""

    alias: str
    table: Table
    role: Role
    predicates: list[Predicate] = field(default_factory=list)
    or_branches: list[tuple[Predicate, ...]] = field(default_factory=list)
    obstacles: list[Obstacle] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    read_all: bool = False
    sort: tuple[SortKey, ...] = ()
    sort_rule: Rule = Rule.ORDER_BY
    sort_problem: str = ""
    # Join conditions as (column, other alias, operator): usable once the join order is known.
    joins: list[tuple[str, str, str]] = field(default_factory=list)
    outer_joined: bool = False  # the right side of a LEFT JOIN: never read first
    aggregates: list[Aggregate] = field(default_factory=list)
    single_table: bool = False
    limit: int | None = None
    limit_assumed: bool = False
    lookups: int = 1

    def read(self, column: str) -> None:
        if column not in self.reads:
            self.reads.append(column)

    def build(self, dml: bool, set_columns: tuple[str, ...]) -> TableAccess:
        return TableAccess(
            table=self.table.name, role=self.role, predicates=tuple(self.predicates),
            or_branches=tuple(self.or_branches), sort=self.sort, sort_rule=self.sort_rule,
            sort_problem=self.sort_problem, read_columns=tuple(self.reads),
            read_all=self.read_all, set_columns=set_columns, dml=dml,
            obstacles=tuple(self.obstacles), aggregates=tuple(self.aggregates),
            single_table=self.single_table, limit=self.limit, limit_assumed=self.limit_assumed,
            lookups=self.lookups,
        )  # fmt: skip


class _Reader:
    """Reads the scopes of a qualified statement into table accesses."""

    def __init__(
        self,
        schema: Schema,
        tables: set[str],
        *,
        dml: bool,
        set_columns: dict[str, tuple[str, ...]],
    ) -> None:
        self.schema = schema
        self.dml = dml
        self.set_columns = set_columns
        self.tables = tables
        # Columns of an outer table read inside a correlated subquery, by outer scope.
        self.outer_reads: dict[int, list[tuple[str, str]]] = {}

    def read(self, root: exp.Expr) -> list[TableAccess]:
        found: list[tuple[int, TableAccess]] = []
        order = {id(t): i for i, t in enumerate(root.find_all(exp.Table, bfs=False))}
        for scope in traverse_scope(root):
            for table_node, access in self._scope(scope):
                found.append((order.get(id(table_node), 0), access))
        return [access for _, access in sorted(found, key=lambda pair: pair[0])]

    def _scope(self, scope: Scope) -> Iterator[tuple[exp.Table, TableAccess]]:
        select = scope.expression
        if not isinstance(select, exp.Select):
            return
        nodes = {
            alias: source
            for alias, source in scope.sources.items()
            if isinstance(source, exp.Table) and f"{source.db}.{source.name}" in self.tables
        }
        if not nodes:
            self._note_outer_reads(scope)
            return
        builders = self._builders(scope, select, nodes)
        _Conditions(builders, self.schema).read(_conditions(select))
        self._assign_roles(scope, select, builders)
        self._link_subquery(scope, select, builders)
        self._read_columns(scope, select, builders)
        _read_sort(select, builders)
        _read_shape(scope, select, builders)
        self._note_outer_reads(scope)
        for alias, builder in builders.items():
            set_columns = self.set_columns.get(alias, ()) if scope.is_root else ()
            yield nodes[alias], builder.build(self.dml, set_columns)

    def _builders(
        self, scope: Scope, select: exp.Select, nodes: dict[str, exp.Table]
    ) -> dict[str, _Builder]:
        order = _from_order(select)
        builders = {}
        for alias in sorted(nodes, key=lambda a: order.index(a) if a in order else len(order)):
            node = nodes[alias]
            table = self.schema.tables[f"{node.db}.{node.name}"]
            builders[alias] = _Builder(alias, table, Role.INNER)
        for join in select.args.get("joins") or ():
            if join.side == "LEFT" and join.this.alias_or_name in builders:
                builders[join.this.alias_or_name].outer_joined = True
        return builders

    def _assign_roles(
        self, scope: Scope, select: exp.Select, builders: dict[str, _Builder]
    ) -> None:
        """Pick the table read first; join columns count only towards tables read before.

        The table whose own filters leave the fewest rows drives, as the optimizer would pick
        it (the first in FROM order on a tie); a correlated or IN subquery is driven by the
        outer query instead.
        """
        correlated = bool(scope.external_columns) or isinstance(_outer(select), exp.In)
        aliases = list(builders)
        if not (scope.is_subquery and correlated):
            filtered = [
                a
                for a in aliases
                if not builders[a].outer_joined
                and (
                    builders[a].or_branches
                    or any(p.kind is not PredicateKind.JOIN for p in builders[a].predicates)
                )
            ]
            driving = min(filtered, key=lambda a: _estimated_rows(builders[a]), default=aliases[0])
            builders[driving].role = Role.DRIVING
            lookups = max(1, round(_estimated_rows(builders[driving])))
            for alias in aliases:
                if alias != driving:
                    builders[alias].lookups = lookups
            aliases.remove(driving)
            aliases.insert(0, driving)
        for position, alias in enumerate(aliases):
            builder = builders[alias]
            for column, other, operator in builder.joins:
                if other in aliases[:position]:
                    builder.predicates.append(Predicate(column, PredicateKind.JOIN, operator))

    def _link_subquery(
        self, scope: Scope, select: exp.Select, builders: dict[str, _Builder]
    ) -> None:
        """``x IN (SELECT t.y ...)``: t is looked up by y, as a join column."""
        if not isinstance(_outer(select), exp.In) or not select.expressions:
            return
        column = select.expressions[0].unalias()
        if isinstance(column, exp.Column) and column.table in builders:
            builder = builders[column.table]
            builder.predicates.append(Predicate(column.name, PredicateKind.JOIN, "IN"))

    def _read_columns(
        self, scope: Scope, select: exp.Select, builders: dict[str, _Builder]
    ) -> None:
        aliases = {p.alias for p in select.expressions if isinstance(p, exp.Alias)}
        for column in scope.columns:
            if column.table in builders:
                builders[column.table].read(column.name)
            elif not column.table and column.name not in aliases:
                raise AdviceError(f"column {column.name} is not in any table of the snapshot")
        for alias, name in self.outer_reads.pop(id(scope), []):
            if alias in builders:
                builders[alias].read(name)
        for projection in select.expressions:
            if isinstance(projection, exp.Star):
                for builder in builders.values():
                    builder.read_all = True
            elif (
                isinstance(projection, exp.Column)
                and isinstance(projection.this, exp.Star)
                and projection.table in builders
            ):
                builders[projection.table].read_all = True

    def _note_outer_reads(self, scope: Scope) -> None:
        """Hand the outer columns a correlated subquery reads to the scope that owns them."""
        parent = scope.parent
        for column in scope.external_columns:
            owner = parent
            while owner is not None and column.table not in owner.sources:
                owner = owner.parent
            if owner is not None:
                self.outer_reads.setdefault(id(owner), []).append((column.table, column.name))


def _estimated_rows(builder: _Builder) -> float:
    """Rows left by a table's own filters: its most selective equality, else a third per range."""
    rows = float(builder.table.rows or UNKNOWN_ROWS)
    estimate = rows
    for predicate in builder.predicates:
        column = builder.table.columns.get(predicate.column)
        if predicate.kind is PredicateKind.JOIN or column is None:
            continue
        if predicate.kind is PredicateKind.RANGE or not column.distinct:
            estimate = min(estimate, rows * RANGE_FRACTION)
        else:
            estimate = min(estimate, rows / column.distinct)
    return estimate


def _outer(select: exp.Expr) -> exp.Expr | None:
    """The expression a subquery stands in (skipping the Subquery wrapper)."""
    parent = select.parent
    return parent.parent if isinstance(parent, exp.Subquery) else parent


def _from_order(select: exp.Select) -> list[str]:
    """The aliases of the FROM clause and its joins, in the order they are written."""
    source = select.args.get("from_") or select.args.get("from")
    nodes = [source.this] if source is not None else []
    nodes += [join.this for join in select.args.get("joins") or ()]
    return [node.alias_or_name for node in nodes]


def _conditions(select: exp.Select) -> list[exp.Expr]:
    """The AND-ed conditions of WHERE and of every join's ON (inner and outer alike)."""
    conditions: list[exp.Expr] = []
    where = select.args.get("where")
    if where is not None:
        conditions += _conjuncts(where.this)
    for join in select.args.get("joins") or ():
        on = join.args.get("on")
        if on is not None:
            conditions += _conjuncts(on)
    return conditions


def _conjuncts(condition: exp.Expr) -> list[exp.Expr]:
    condition = condition.unnest()
    if isinstance(condition, exp.And):
        return _conjuncts(condition.this) + _conjuncts(condition.expression)
    return [condition]


def _disjuncts(condition: exp.Expr) -> list[exp.Expr]:
    condition = condition.unnest()
    if isinstance(condition, exp.Or):
        return _disjuncts(condition.this) + _disjuncts(condition.expression)
    return [condition]


def _own_columns(node: exp.Expr) -> list[exp.Column]:
    """The columns of an expression, not looking into subqueries (their own scopes)."""
    found: list[exp.Column] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, exp.Column):
            found.append(current)
        elif not isinstance(current, (exp.Select, exp.Subquery)):
            stack.extend(current.iter_expressions())
    return found


class _Conditions:
    """Classifies the conditions of one scope into predicates and obstacles."""

    def __init__(self, builders: dict[str, _Builder], schema: Schema) -> None:
        self.builders = builders
        self.schema = schema

    def read(self, conditions: Sequence[exp.Expr]) -> None:
        for condition in conditions:
            if isinstance(condition, exp.Or):
                self._or(condition)
            else:
                for alias, item in self._classify(condition):
                    self._add(alias, item)

    def _add(self, alias: str, item: Predicate | Obstacle) -> None:
        builder = self.builders[alias]
        if isinstance(item, Predicate):
            builder.predicates.append(item)
        else:
            builder.obstacles.append(item)

    def _or(self, condition: exp.Expr) -> None:
        branches = [_conjuncts(branch) for branch in _disjuncts(condition)]
        classified = [[pair for c in branch for pair in self._classify(c)] for branch in branches]
        singles = [b[0] for b in classified if len(b) == 1]
        if len(singles) == len(classified) and _same_column(singles):
            alias, first = singles[0]
            if isinstance(first, Predicate):
                self._add(alias, _merge_same_column([p for _, p in singles]))
            return
        aliases = {alias for branch in classified for alias, _ in branch}
        if len(aliases) != 1:
            return  # an OR across tables: no index can serve it, every row is joined
        builder = self.builders[aliases.pop()]
        per_branch = [tuple(p for _, p in b if isinstance(p, Predicate)) for b in classified]
        if builder.or_branches:
            return  # one OR group is enough to advise on; the others are filters
        if all(per_branch):
            builder.or_branches = per_branch
        else:
            column = next(
                (
                    o.column
                    for _, o in (p for b in classified for p in b)
                    if isinstance(o, Obstacle)
                ),
                "",
            )
            builder.obstacles.append(
                Obstacle(column, ObstacleKind.OR_BRANCH, _plain_sql(condition))
            )

    def _classify(self, condition: exp.Expr) -> list[tuple[str, Predicate | Obstacle]]:
        condition = condition.unnest()
        operator = _COMPARISONS.get(type(condition))
        if operator is not None:
            return self._comparison(condition.this, operator, condition.expression, condition)
        if isinstance(condition, exp.Is) and isinstance(condition.expression, exp.Null):
            return self._comparison(condition.this, "IS NULL", None, condition)
        if isinstance(condition, exp.In) and condition.args.get("query"):
            own = self._local(condition.this)
            if isinstance(condition.this, exp.Column) and len(own) == 1:
                return [(own[0].table, Predicate(own[0].name, PredicateKind.JOIN, "IN"))]
            return []
        if isinstance(condition, exp.In):
            values = condition.expressions
            operator = "IN" if len(values) > 1 else "="
            return self._comparison(
                condition.this, operator, values[0] if values else None, condition
            )
        if isinstance(condition, exp.Between):
            return self._comparison(condition.this, "BETWEEN", condition.args.get("low"), condition)
        if isinstance(condition, exp.Like):
            return self._like(condition)
        return []

    def _comparison(
        self,
        left: exp.Expr,
        operator: str,
        right: exp.Expr | None,
        condition: exp.Expr,
    ) -> list[tuple[str, Predicate | Obstacle]]:
        left_own = self._local(left)
        right_own = self._local(right) if right is not None else []
        if left_own and right_own and right is not None:
            return self._join(left, operator, right) if operator in _EQUALITY_OPERATORS else []
        if right_own and right is not None and operator in _FLIPPED:
            left, right, left_own = right, left, right_own
            operator = _FLIPPED[operator]
        if len(left_own) != 1:
            return []
        column = left_own[0]
        if not isinstance(left, exp.Column):
            return [(column.table, _function_obstacle(left, column, right, condition))]
        if _converts(self._column_type(column), right):
            obstacle = Obstacle(column.name, ObstacleKind.CONVERSION, _plain_sql(condition))
            return [(column.table, obstacle)]
        return [(column.table, Predicate(column.name, _kind(operator), operator))]

    def _join(
        self, left: exp.Expr, operator: str, right: exp.Expr
    ) -> list[tuple[str, Predicate | Obstacle]]:
        if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
            return []
        if left.table == right.table:
            return []
        found: list[tuple[str, Predicate | Obstacle]] = []
        for this, other in ((left, right), (right, left)):
            this_string = self._column_type(this).is_string
            if (
                this_string
                and not self._column_type(other).is_string
                and _numeric_type(self._column_type(other).type)
            ):
                text = f"{_plain_sql(this)} {operator} {_plain_sql(other)}"
                found.append((this.table, Obstacle(this.name, ObstacleKind.CONVERSION, text)))
            else:
                self.builders[this.table].joins.append((this.name, other.table, operator))
        return found

    def _like(self, condition: exp.Like) -> list[tuple[str, Predicate | Obstacle]]:
        own = self._local(condition.this)
        if len(own) != 1:
            return []
        column = own[0]
        if not isinstance(condition.this, exp.Column):
            return [
                (
                    column.table,
                    _function_obstacle(condition.this, column, condition.expression, condition),
                )
            ]
        pattern = condition.expression
        if (
            isinstance(pattern, exp.Literal)
            and pattern.is_string
            and pattern.this.startswith(_WILDCARDS)
        ):
            obstacle = Obstacle(column.name, ObstacleKind.LEADING_WILDCARD, _plain_sql(condition))
            return [(column.table, obstacle)]
        # A placeholder pattern is taken for a prefix: that is the pattern worth an index.
        return [(column.table, Predicate(column.name, PredicateKind.RANGE, "LIKE"))]

    def _local(self, node: exp.Expr | None) -> list[exp.Column]:
        if node is None:
            return []
        return [c for c in _own_columns(node) if c.table in self.builders]

    def _column_type(self, column: exp.Column) -> _ColumnType:
        builder = self.builders.get(column.table)
        found = builder.table.columns.get(column.name) if builder else None
        return _ColumnType(found.type if found else "", bool(found and found.is_string))


@dataclass(frozen=True)
class _ColumnType:
    type: str
    is_string: bool


_NUMERIC_TYPE_RE = re.compile(r"(tiny|small|medium|big)?int|decimal|numeric|float|double|bit")


def _numeric_type(type_name: str) -> bool:
    return bool(_NUMERIC_TYPE_RE.match(type_name))


def _converts(column: _ColumnType, value: exp.Expr | None) -> bool:
    """A string column compared to a number: the server converts every row's value."""
    return column.is_string and isinstance(value, exp.Literal) and not value.is_string


def _kind(operator: str) -> PredicateKind:
    if operator in ("=", "<=>", "IS NULL"):
        return PredicateKind.EQUALITY
    if operator == "IN":
        return PredicateKind.IN_LIST
    return PredicateKind.RANGE


def _same_column(pairs: Sequence[tuple[str, Predicate | Obstacle]]) -> bool:
    return len({(alias, item.column) for alias, item in pairs}) == 1 and all(
        isinstance(item, Predicate) and item.kind is not PredicateKind.JOIN for _, item in pairs
    )


def _merge_same_column(items: Sequence[Predicate | Obstacle]) -> Predicate:
    """``a = 1 OR a = 2`` is ``a IN (1, 2)``; ``a < 1 OR a > 5`` is two ranges on a."""
    predicates = [p for p in items if isinstance(p, Predicate)]
    column = predicates[0].column
    if all(p.kind is not PredicateKind.RANGE for p in predicates):
        return Predicate(column, PredicateKind.IN_LIST, "OR")
    return Predicate(column, PredicateKind.RANGE, "OR")


def _function_obstacle(
    expression: exp.Expr,
    column: exp.Column,
    value: exp.Expr | None,
    condition: exp.Expr,
) -> Obstacle:
    """An expression around the column: suggest the sargable form when one is known."""
    name = expression.sql_name().lower() if isinstance(expression, exp.Func) else ""
    if isinstance(expression, exp.Anonymous):
        name = str(expression.this).lower()
    template = _REWRITES.get(name)
    rewrite = ""
    if template and value is not None:
        rewrite = template.format(col=column.name, value=value.sql(DIALECT))
    elif isinstance(expression, (exp.Add, exp.Sub)) and expression.this == column and value:
        inverse = "-" if isinstance(expression, exp.Add) else "+"
        operator = _operator_text(condition)
        moved = f"{value.sql(DIALECT)} {inverse} {expression.expression.sql(DIALECT)}"
        rewrite = f"{column.name} {operator} {moved}"
    return Obstacle(column.name, ObstacleKind.FUNCTION, _plain_sql(expression), rewrite)


def _operator_text(condition: exp.Expr) -> str:
    operator = _COMPARISONS.get(type(condition), "=")
    # The column was on the left of the written comparison unless it was flipped.
    return operator if not _own_columns(condition.expression) else _FLIPPED[operator]


def _plain_sql(node: exp.Expr) -> str:
    """The SQL of an expression without the table qualifiers qualify() added."""
    plain = node.copy()
    for column in plain.find_all(exp.Column):
        column.set("table", None)
    return plain.sql(DIALECT)


def _read_sort(select: exp.Select, builders: dict[str, _Builder]) -> None:
    """Give the sort to the table whose index could deliver rows in that order."""
    group = select.args.get("group")
    order = select.args.get("order")
    if group is not None and group.expressions:
        keys = [(e, False) for e in group.expressions]
        rule = Rule.GROUP_BY
    elif select.args.get("distinct") and order is None and _plain_columns(select, builders):
        # SELECT DISTINCT a, b of one table groups like GROUP BY a, b (and uses the same index).
        keys = [(e.unalias(), False) for e in select.expressions]
        rule = Rule.GROUP_BY
    elif order is not None:
        keys = [(o.this, bool(o.args.get("desc"))) for o in order.expressions]
        keys = [(e, d) for e, d in keys if not isinstance(e, exp.Null)]  # ORDER BY NULL
        rule = Rule.ORDER_BY
    else:
        return
    if not keys:
        return
    keys = [(_projection(select, e), desc) for e, desc in keys]
    columns = [e for e, _ in keys if isinstance(e, exp.Column) and e.table in builders]
    owners = {c.table for c in columns}
    clause = "GROUP BY" if rule is Rule.GROUP_BY else "ORDER BY"
    if len(columns) != len(keys) or len(owners) != 1:
        problem = f"the {clause} is on an expression or on several tables, so it needs a sort"
        for builder in builders.values():
            if builder.role is Role.DRIVING:
                builder.sort_problem = problem
        return
    builder = builders[owners.pop()]
    if builder.role is not Role.DRIVING:
        builder.sort_problem = (
            f"the {clause} is on a table read after the first, so it needs a sort"
        )
        return
    builder.sort = tuple(SortKey(c.name, desc) for c, (_, desc) in zip(columns, keys, strict=True))
    builder.sort_rule = rule


def _read_shape(scope: Scope, select: exp.Select, builders: dict[str, _Builder]) -> None:
    """The aggregates, the LIMIT and whether the SELECT reads one table only."""
    limit, assumed = _limit(select)
    single = len(scope.sources) == 1 and len(builders) == 1
    for builder in builders.values():
        builder.limit, builder.limit_assumed, builder.single_table = limit, assumed, single
    having = select.args.get("having")
    for projection in [*select.expressions, *([having] if having is not None else [])]:
        for function in _own_aggregates(projection):
            argument = function.this
            distinct = isinstance(argument, exp.Distinct)
            if distinct:
                values = argument.expressions
                argument = values[0] if len(values) == 1 else None
            name = function.key.lower()
            if isinstance(argument, exp.Column) and argument.table in builders:
                aggregate = Aggregate(name, argument.name, distinct)
                builders[argument.table].aggregates.append(aggregate)
            else:
                for builder in builders.values():
                    builder.aggregates.append(Aggregate(name, "", distinct))


def _plain_columns(select: exp.Select, builders: dict[str, _Builder]) -> bool:
    """Whether every projection is a column of one and the same table of this scope."""
    columns = [e.unalias() for e in select.expressions]
    tables = {c.table for c in columns if isinstance(c, exp.Column)}
    plain = all(isinstance(c, exp.Column) and not isinstance(c.this, exp.Star) for c in columns)
    return plain and len(tables) == 1 and tables <= set(builders)


def _own_aggregates(node: exp.Expr) -> list[exp.AggFunc]:
    """The aggregate functions of a select-list item, not looking into subqueries."""
    found: list[exp.AggFunc] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, exp.AggFunc):
            found.append(current)
        elif not isinstance(current, (exp.Select, exp.Subquery)):
            stack.extend(current.iter_expressions())
    return found


def _limit(select: exp.Select) -> tuple[int | None, bool]:
    """The rows the statement stops after (offset included); whether a placeholder was assumed."""
    limit = select.args.get("limit")
    if limit is None:
        return None, False
    offset = select.args.get("offset")
    parts = [limit.expression, offset.expression if offset is not None else None]
    total, assumed = 0, False
    for part in parts:
        if isinstance(part, exp.Literal) and part.is_int:
            total += int(part.this)
        elif part is not None:
            total, assumed = total + ASSUMED_LIMIT, True
    return total, assumed


def _projection(select: exp.Select, key: exp.Expr) -> exp.Expr:
    """ORDER BY an alias of the select list: the aliased expression."""
    if isinstance(key, exp.Column) and not key.table:
        for projection in select.expressions:
            if isinstance(projection, exp.Alias) and projection.alias == key.name:
                aliased: exp.Expr = projection.this
                return aliased
    return key
