"""Workload index plan tests: the cases in data/advisor_workload.yaml, and determinism."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from quanta.analysis.advisor import parse_schema
from quanta.analysis.advisor.schema import Schema
from quanta.analysis.advisor.workload import (
    PlanRules,
    ServedQuery,
    TablePlan,
    TableWrites,
    WorkloadQuery,
    plan_workload,
)
from tests.helpers import parse_yaml

DATA = parse_yaml(
    (Path(__file__).parent / "data" / "advisor_workload.yaml").read_text(encoding="utf-8")
)
WINDOW_SECONDS = 3600.0
MIN_CASES = 10


class Case(NamedTuple):
    id: str
    spec: dict[str, Any]


CASES = [Case(spec["case"], spec) for spec in DATA["cases"]]


def case_schema(spec: dict[str, Any]) -> Schema:
    return parse_schema(DATA["schemas"][spec.get("schema", "plan")])


def case_queries(spec: dict[str, Any]) -> list[WorkloadQuery]:
    """The case's queries; each one's load share is its share of the calls."""
    total = sum(calls for _, calls, _ in spec["queries"])
    return [
        WorkloadQuery(query_id, sql, spec.get("database", "plan"), calls, calls / 1000,
                      _measured(spec, query_id, calls), round(calls / total, 4))
        for query_id, calls, sql in spec["queries"]
    ]  # fmt: skip


def _measured(spec: dict[str, Any], query_id: str, calls: float) -> float | None:
    """The rows examined the case says the server measured for a query, per call times its
    calls; None (estimates only) when it says nothing."""
    per_call = spec.get("measured", {}).get(query_id)
    return None if per_call is None else per_call * calls


def case_plans(spec: dict[str, Any], queries: list[WorkloadQuery] | None = None) -> list[TablePlan]:
    writes = {name: TableWrites(name, **rates) for name, rates in spec.get("writes", {}).items()}
    return plan_workload(
        case_queries(spec) if queries is None else queries,
        case_schema(spec),
        writes,
        PlanRules(**spec.get("rules", {})),
        window_seconds=WINDOW_SECONDS,
    )


def as_fixture(plan: TablePlan) -> dict[str, Any]:
    """A plan in the fixture's compact shape."""
    entry: dict[str, Any] = {"table": plan.table, "ddl": plan.ddl}
    if plan.adds:
        entry["adds"] = {
            add.name: {
                "evidence": f"width {add.width_bytes} B, {add.entries_per_s:g} entries/s",
                "served": [_served(q) for q in add.served],
            }
            for add in plan.adds
        }
    if plan.drops:
        entry["drops"] = {drop.name: drop.replaced_by for drop in plan.drops}
    entry["rows_per_s"] = f"{plan.rows_before_per_s:.10g} -> {plan.rows_after_per_s:.10g}"
    if plan.unserved:
        entry["unserved"] = list(plan.unserved)
    entry["notes"] = list(plan.notes)
    return entry


def _served(query: ServedQuery) -> str:
    """'Q1 1000 -> 10', and for a measured query 'Q1 1000 -> 10 measured (estimated 5000 ->
    50)'."""
    text = f"{query.query_id} {query.rows_before} -> {query.rows_after}"
    if query.measured:
        text += f" measured (estimated {query.estimated_before} -> {query.estimated_after})"
    return text


def test_fixtures_have_enough_cases() -> None:
    assert len(CASES) >= MIN_CASES


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_plan(case: Case) -> None:
    plans = case_plans(case.spec)
    assert [as_fixture(p) for p in plans] == case.spec["expect"]
    for plan in plans:
        assert plan.write_entries_per_s == sum(a.entries_per_s for a in plan.adds)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_plan_is_deterministic(case: Case) -> None:
    """The same input twice, or in another order, gives the same plan (and signature)."""
    first = case_plans(case.spec)
    assert case_plans(case.spec) == first
    shuffled = case_queries(case.spec)
    for seed in range(3):
        random.Random(seed).shuffle(shuffled)
        assert case_plans(case.spec, shuffled) == first
    assert [p.signature for p in case_plans(case.spec, shuffled)] == [p.signature for p in first]


def test_every_fixture_query_at_once_is_deterministic() -> None:
    """One bigger model: every case's queries (renamed apart) together, shuffled."""
    queries = [
        WorkloadQuery(f"{n}-{q.query_id}", q.sql, q.default_db, q.calls, q.load, None, q.load_share)
        for n, case in enumerate(CASES)
        for q in case_queries(case.spec)
    ]
    schema = case_schema({})
    first = plan_workload(queries, schema, window_seconds=WINDOW_SECONDS)
    for seed in range(3):
        random.Random(seed).shuffle(queries)
        assert plan_workload(queries, schema, window_seconds=WINDOW_SECONDS) == first
    assert {p.table for p in first} == {"plan.orders", "plan.events"}
    assert all(len(p.adds) <= PlanRules().max_new_indexes for p in first)


def test_signature_follows_the_ddl() -> None:
    plan = case_plans(CASES[0].spec)[0]
    same = TablePlan(plan.table, (), (), plan.ddl, 0.0, 0.0, 0.0, (), ())
    other = TablePlan(plan.table, (), (), plan.ddl + " ", 0.0, 0.0, 0.0, (), ())
    assert plan.signature == same.signature != other.signature
    assert len(plan.signature) == 16


def test_hostile_statements_are_skipped() -> None:
    """Nested past the parser's recursion limit, or a megabyte long: skipped, never raised."""
    nested = "select id from orders where " + "(" * 3000 + "customer_id = 1" + ")" * 3000
    huge = "select id from orders where customer_id in (" + "1, " * 400_000 + "1)"
    good = "select id from orders where customer_id = ?"
    queries = [
        WorkloadQuery(query_id, sql, "plan", 36000, 1.0, None, 0.3)
        for query_id, sql in (("N", nested), ("H", huge), ("G", good))
    ]
    [plan] = plan_workload(queries, case_schema({}), window_seconds=WINDOW_SECONDS)
    assert plan.ddl == "ALTER TABLE plan.orders ADD INDEX idx_orders_customer_id (customer_id)"
    assert [q.query_id for add in plan.adds for q in add.served] == ["G"]


def test_no_query_gives_no_plan() -> None:
    assert plan_workload([], case_schema({})) == []


def test_access_rows_is_the_advisors_own_estimate() -> None:
    """On every advisor fixture case, engine.access_rows gives the suggestion's own numbers:
    the planner prices other queries' indexes with the same estimate, not a second model."""
    from quanta.analysis.advisor.engine import access_rows, advise_access
    from quanta.analysis.advisor.model import Action, AdviceError
    from quanta.analysis.advisor.statement import table_accesses
    from tests.analysis.test_advisor import CASES as ADVISOR_CASES
    from tests.analysis.test_advisor import case_schema as advisor_schema

    checked = 0
    for case in ADVISOR_CASES:
        schema = advisor_schema(case.spec)
        try:
            accesses = table_accesses(case.spec["sql"], schema, case.spec.get("database", "shop"))
        except AdviceError:
            continue
        for access in accesses:
            table = schema.tables[access.table]
            advice = advise_access(access, table, schema.server)
            if len(advice) > 1:
                continue  # an OR across columns: the planner prices each branch as its own
            for item in (advice[0], advice[0].alternative):
                if item is None or item.action is Action.NONE:
                    continue
                assert item.rows_before is not None
                assert item.rows_after is not None
                assert access_rows(access, table, schema.server) == item.rows_before, case.id
                assert access_rows(access, table, schema.server, item.columns) == min(
                    item.rows_after, item.rows_before
                ), case.id
                checked += 1
    assert checked >= 150


@pytest.mark.parametrize(
    "module",
    [
        "quanta.analysis.advisor.workload",
        "quanta.analysis.advisor.cost",
        "quanta.analysis.advisor.engine",
        "quanta.analysis.advisor.render",
        "quanta.analysis.statement",
    ],
)
def test_doctests(module: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0
    assert result.attempted > 0
