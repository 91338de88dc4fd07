"""A table plan checked on the instance's sandbox, and what the check confirms.

A plan with DDL is applied whole to a copy of the table there and every query on the table
with a real example is explained before and after (quanta.advice.sandbox.validate_table_plan:
the same account check, audit and masking as a suggestion's check). Only what the plans
confirm is kept: an index that no served query's plan uses with a better access is left out
(``rejected``), and the drops go when any query's plan got worse. An index none of whose
queries could be checked (only fingerprints) stays, marked ``not_checked``.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.orm import Session

from quanta.advice import sandbox as advice_sandbox
from quanta.advice.validate_index import Candidate
from quanta.advice.validate_plan import PlanStatement
from quanta.analysis.advisor.engine import alter_table_ddl, quote_name
from quanta.analysis.advisor.workload import DroppedIndex, PlannedIndex, TablePlan
from quanta.audit.service import Actor
from quanta.core.config import Settings
from quanta.indexplan.workload import Workload
from quanta.instances.models import Instance
from quanta.instances.service import InstanceUnreachable

__all__ = ["CONFIRMED", "NOT_CHECKED", "CheckedPlan", "check_plan", "keep_confirmed"]

CONFIRMED, NOT_CHECKED = "confirmed", "not_checked"


@dataclass(frozen=True, slots=True)
class CheckedPlan:
    """A plan after the sandbox: what it kept, what it left out and its comparison."""

    plan: TablePlan
    verdicts: dict[str, str]  # index name -> confirmed | not_checked
    rejected: list[dict[str, str]]
    validation: dict[str, Any] | None


def check_plan(
    *,
    session: Session,
    settings: Settings,
    instance: Instance,
    actor: Actor | None,
    plan: TablePlan,
    workload: Workload,
) -> CheckedPlan:
    """The plan with only what the sandbox's plans confirm (unchanged without a sandbox)."""
    unchecked = {a.name: NOT_CHECKED for a in plan.adds}
    if not plan.ddl:
        return CheckedPlan(plan, unchecked, [], None)
    # Every query on the table is explained: a drop can slow one the adds do not serve.
    statements = [
        PlanStatement(key=query_id, sql=fact["sql"], default_db=fact["default_db"])
        for query_id, fact in sorted(workload.facts.items())
        if fact["sql"] is not None and plan.table in fact["tables"]
    ]
    if not statements:
        result: dict[str, Any] | None = (
            {"error": "not checked: no served query has a usable example"}
            if instance.sandbox_dsn_encrypted is not None
            else None
        )
        return CheckedPlan(plan, unchecked, [], result)
    try:
        result = advice_sandbox.validate_table_plan(
            session=session,
            settings=settings,
            instance=instance,
            actor=actor,
            table=plan.table,
            adds=[
                Candidate(
                    key=number,
                    table=plan.table,
                    columns=add.columns,
                    ddl=alter_table_ddl(plan.table, [(add.name, add.columns)]),
                )
                for number, add in enumerate(plan.adds)
            ],
            drops=[d.name for d in plan.drops],
            statements=statements,
        )
    except InstanceUnreachable as exc:  # the message names the DSN: the sandbox's or not
        result = {"error": str(exc)}
    if result is None or "queries" not in result:
        return CheckedPlan(plan, unchecked, [], result)
    return keep_confirmed(plan, result)


def keep_confirmed(plan: TablePlan, result: dict[str, Any]) -> CheckedPlan:
    """Keep the adds a served query's plan uses with a better access, and the drops when
    no query got worse; an add none of whose queries was explained stays unchecked."""
    checks: dict[str, dict[str, Any]] = result["queries"]
    verdicts: dict[str, str] = {}
    rejected: list[dict[str, str]] = []
    adds: list[PlannedIndex] = []
    for add in plan.adds:
        explained = [
            checks[s.query_id]
            for s in add.served
            if "error" not in checks.get(s.query_id, {"error": ""})
        ]
        if not explained:
            verdicts[add.name] = NOT_CHECKED
            adds.append(add)
        elif any(c["improved"] and add.name.lower() in _lower(c["keys"]) for c in explained):
            verdicts[add.name] = CONFIRMED
            adds.append(add)
        else:
            rejected.append(
                {
                    "name": add.name,
                    "definition": add.definition,
                    "reason": "On the sandbox copy no query it serves used it with a better "
                    "plan: " + "; ".join(str(c["summary"]) for c in explained),
                }
            )
    worse = [c for c in checks.values() if c.get("worse")]
    drops = plan.drops
    if worse and drops:
        reason = "With the plan on the sandbox copy a query's plan got worse: " + "; ".join(
            str(c["summary"]) for c in worse
        )
        rejected += [
            {"name": d.name, "definition": f"DROP INDEX {quote_name(d.name)}", "reason": reason}
            for d in drops
        ]
        drops = ()
    if len(adds) == len(plan.adds) and drops == plan.drops:
        return CheckedPlan(plan, verdicts, rejected, result)
    kept = replace(plan, adds=tuple(adds), drops=tuple(drops), ddl=_ddl(plan.table, adds, drops))
    return CheckedPlan(kept, verdicts, rejected, result)


def _lower(names: Iterable[Any]) -> set[str]:
    return {str(n).lower() for n in names}


def _ddl(table: str, adds: Sequence[PlannedIndex], drops: Sequence[DroppedIndex]) -> str:
    """One ALTER TABLE with the drops and the adds; empty when there is neither."""
    if not adds and not drops:
        return ""
    return alter_table_ddl(table, [(a.name, a.columns) for a in adds], [d.name for d in drops])
