"""Index checks on an instance's sandbox, as advice runs them: the monitoring account's
privileges checked first, the run audited, the stored plans' literals masked by the example
policy. The checks themselves (copying tables, EXPLAIN before and after) are
:mod:`quanta.advice.validate_index` and :mod:`quanta.advice.validate_plan`'s.
"""

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from quanta.advice.isolation import MonitoredServer
from quanta.advice.reconcile import Item
from quanta.advice.validate_index import Candidate, validate_indexes
from quanta.advice.validate_plan import PlanStatement, validate_plan
from quanta.analysis.advisor import AdviceColumn, Rule
from quanta.audit.service import Actor
from quanta.core.config import Settings
from quanta.diagnostics import safety
from quanta.instances.models import Instance
from quanta.instances.service import (
    InstanceUnreachable,
    connected_instances,
    monitored_settings,
    require_connection,
    sandbox_options,
)
from quanta.monitored import MonitoredError
from quanta.monitored.options import ConnectionOptions
from quanta.monitored.sandbox import SandboxError, SandboxRefused

__all__ = ["validate_suggestions", "validate_table_plan"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")


def validate_suggestions(
    *,
    session: Session,
    settings: Settings,
    actor: Actor | None,
    query_id: str,
    instance: Instance,
    sql: str | None,
    default_db: str | None,
    tables: list[str],
    items: list[Item],
) -> dict[tuple[str, str], dict[str, Any]]:
    """Sandbox results by (table, ddl); empty when there is no sandbox or nothing to check.

    The monitoring account must have the least privileges (or an admin's override); the
    stored plans have their literals masked by the example policy; the run is audited.
    """
    sandbox = sandbox_options(settings, instance)
    if sandbox is None or not items:
        return {}
    if sql is None:
        return {
            (i.table, i.ddl): {"error": "not checked: no usable example", "improved": None}
            for i in items
        }
    candidates = [
        Candidate(
            key=number,
            table=item.table,
            columns=tuple(
                AdviceColumn(c["name"], c["desc"], Rule(c["rule"])) for c in item.columns
            ),
            ddl=item.ddl,
        )
        for number, item in enumerate(items)
    ]
    results = _audited_run(
        session,
        settings,
        instance,
        sandbox,
        actor,
        {"what": "suggestion", "query_id": query_id},
        lambda monitored: validate_indexes(
            monitored=monitored,
            sandbox=sandbox,
            instances=_monitored_servers(session, settings),
            limits=monitored_settings(settings),
            sql=sql,
            default_db=default_db,
            tables=tables,
            candidates=candidates,
            sample_rows=settings.advice_sandbox_sample_rows,
        ),
    )
    if isinstance(results, _Failed):
        return {(i.table, i.ddl): {**results.detail, "improved": None} for i in items}
    return {
        (items[key].table, items[key].ddl): _masked_result(instance, result, sql)
        for key, result in results.items()
    }


def validate_table_plan(
    *,
    session: Session,
    settings: Settings,
    instance: Instance,
    actor: Actor | None,
    table: str,
    adds: Sequence[Candidate],
    drops: Sequence[str],
    statements: Sequence[PlanStatement],
) -> dict[str, Any] | None:
    """A table's whole index plan checked on the instance's sandbox (see
    quanta.advice.validate_plan.validate_plan): the plans of every served statement before and
    after, their literals masked by the example policy, the run audited like a suggestion's;
    ``{"error"}`` when the check failed; None when the instance has no sandbox."""
    sandbox = sandbox_options(settings, instance)
    if sandbox is None:
        return None
    result = _audited_run(
        session,
        settings,
        instance,
        sandbox,
        actor,
        {"what": "index_plan", "query_id": None, "table": table},
        lambda monitored: validate_plan(
            monitored=monitored,
            sandbox=sandbox,
            instances=_monitored_servers(session, settings),
            limits=monitored_settings(settings),
            table=table,
            adds=adds,
            drops=drops,
            statements=statements,
            sample_rows=settings.advice_sandbox_sample_rows,
        ),
    )
    if isinstance(result, _Failed):
        return result.detail
    texts = {s.key: s.sql for s in statements}
    result["queries"] = {
        key: _masked_result(instance, checked, texts[key])
        for key, checked in result["queries"].items()
    }
    return result


def _masked_result(instance: Instance, result: dict[str, Any], sql: str) -> dict[str, Any]:
    """A sandbox result with its plans' literals masked (const rows read on the sandbox are
    the copied production rows)."""
    plans = {k: safety.masked(instance, result[k], sql) for k in ("before", "after") if k in result}
    return result | plans


@dataclass(frozen=True, slots=True)
class _Failed:
    """A sandbox run that did not happen: ``{"error": ..., "refused": True?}``."""

    detail: dict[str, Any]


def _audited_run(
    session: Session,
    settings: Settings,
    instance: Instance,
    sandbox: ConnectionOptions,
    actor: Actor | None,
    subject: dict[str, Any],
    run: Callable[[ConnectionOptions], _T],
) -> _T | _Failed:
    """``run`` on the sandbox once the monitoring account's privileges passed, audited with
    ``subject`` (what, query_id, table); its result, or why the server or Quanta refused or
    it failed."""
    trail = safety.Trail()
    try:
        monitored = require_connection(settings, instance)
        safety.check_monitored_account(settings, instance, monitored, trail)
        trail.reached(safety.SANDBOX, sandbox.address)
        result = run(monitored)
    except (MonitoredError, SandboxError) as exc:
        refused = isinstance(exc, safety.BroadPrivileges | SandboxRefused)
        outcome = "refused" if refused else "failed"
        log.warning(
            "sandbox %s on instance %s %s: %s", subject["what"], instance.name, outcome, exc
        )
        trail.record(
            session,
            actor=actor,
            instance=instance,
            run_id=None,
            outcome=outcome,
            reason=str(exc),
            **subject,
        )
        failure: dict[str, Any] = {"error": str(exc)}
        if isinstance(exc, SandboxRefused):
            failure["refused"] = True  # Quanta's own refusal, not a sandbox failure
        return _Failed(failure)
    trail.record(
        session, actor=actor, instance=instance, run_id=None, outcome="ok", reason=None, **subject
    )
    return result


def _monitored_servers(session: Session, settings: Settings) -> list[MonitoredServer]:
    """Every instance with a DSN: the servers a sandbox must not be."""
    servers = []
    for other in connected_instances(session=session):
        try:
            servers.append(MonitoredServer(other.name, require_connection(settings, other)))
        except InstanceUnreachable as exc:
            # Its server is unknown, so the sandbox could be it: not used until it is fixed.
            raise SandboxRefused(
                f"cannot tell whether the sandbox is the server of instance '{other.name}': {exc}"
            ) from exc
    return servers
