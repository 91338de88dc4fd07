"""Index checks on an instance's sandbox, as advice runs them: the monitoring account's
privileges checked first, the run audited, the stored plans' literals masked by the example
policy. The checks themselves (copying tables, EXPLAIN before and after) are
:mod:`quanta.advice.validate`'s.
"""

import logging
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from quanta.advice.reconcile import Item
from quanta.advice.validate import (
    Candidate,
    MonitoredServer,
    PlanStatement,
    SandboxError,
    SandboxRefused,
    validate_indexes,
    validate_plan,
)
from quanta.analysis.advisor import AdviceColumn, Rule
from quanta.audit.service import Actor
from quanta.core.config import Settings
from quanta.core.crypto import SecretUnreadable
from quanta.core.mysql import InvalidDsn
from quanta.diagnostics import safety
from quanta.instances.models import Instance
from quanta.instances.service import (
    connected_instances,
    connection_options,
    monitored_settings,
    sandbox_options,
)
from quanta.monitored import MonitoredError

__all__ = ["validate_suggestions", "validate_table_plan"]

log = logging.getLogger(__name__)


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
    trail = safety.Trail()
    try:
        monitored = connection_options(settings, instance)
        safety.check_monitored_account(settings, instance, monitored, trail)
        trail.reached(safety.SANDBOX, sandbox.address)
        results = validate_indexes(
            monitored=monitored,
            sandbox=sandbox,
            instances=_monitored_servers(session, settings),
            limits=monitored_settings(settings),
            sql=sql,
            default_db=default_db,
            tables=tables,
            candidates=candidates,
            sample_rows=settings.advice_sandbox_sample_rows,
        )
    except (MonitoredError, SandboxError) as exc:
        refused = isinstance(exc, safety.BroadPrivileges | SandboxRefused)
        outcome = "refused" if refused else "failed"
        log.warning("sandbox validation on instance %s %s: %s", instance.name, outcome, exc)
        _audit_suggestion(session, actor, trail, instance, query_id, outcome, str(exc))
        failed: dict[str, Any] = {"error": str(exc), "improved": None}
        if isinstance(exc, SandboxRefused):
            failed["refused"] = True  # Quanta's own refusal, not a sandbox failure
        return {(i.table, i.ddl): dict(failed) for i in items}
    _audit_suggestion(session, actor, trail, instance, query_id, "ok", None)
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
    quanta.advice.validate.validate_plan): the plans of every served statement before and
    after, their literals masked by the example policy, the run audited like a suggestion's;
    ``{"error"}`` when the check failed; None when the instance has no sandbox."""
    sandbox = sandbox_options(settings, instance)
    if sandbox is None:
        return None
    trail = safety.Trail()
    try:
        monitored = connection_options(settings, instance)
        safety.check_monitored_account(settings, instance, monitored, trail)
        trail.reached(safety.SANDBOX, sandbox.address)
        result = validate_plan(
            monitored=monitored,
            sandbox=sandbox,
            instances=_monitored_servers(session, settings),
            limits=monitored_settings(settings),
            table=table,
            adds=adds,
            drops=drops,
            statements=statements,
            sample_rows=settings.advice_sandbox_sample_rows,
        )
    except (MonitoredError, SandboxError) as exc:
        refused = isinstance(exc, safety.BroadPrivileges | SandboxRefused)
        outcome = "refused" if refused else "failed"
        log.warning("sandbox check of %s on %s %s: %s", table, instance.name, outcome, exc)
        _audit_plan(session, actor, trail, instance, table, outcome, str(exc))
        return {"error": str(exc)} | ({"refused": True} if isinstance(exc, SandboxRefused) else {})
    _audit_plan(session, actor, trail, instance, table, "ok", None)
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


def _audit_suggestion(
    session: Session,
    actor: Actor | None,
    trail: safety.Trail,
    instance: Instance,
    query_id: str,
    outcome: str,
    reason: str | None,
) -> None:
    trail.record(
        session,
        actor=actor,
        what="suggestion",
        instance=instance,
        query_id=query_id,
        run_id=None,
        outcome=outcome,
        reason=reason,
    )


def _audit_plan(
    session: Session,
    actor: Actor | None,
    trail: safety.Trail,
    instance: Instance,
    table: str,
    outcome: str,
    reason: str | None,
) -> None:
    trail.record(
        session,
        actor=actor,
        what="index_plan",
        instance=instance,
        query_id=None,
        table=table,
        run_id=None,
        outcome=outcome,
        reason=reason,
    )


def _monitored_servers(session: Session, settings: Settings) -> list[MonitoredServer]:
    """Every instance with a DSN: the servers a sandbox must not be."""
    servers = []
    for other in connected_instances(session=session):
        try:
            servers.append(MonitoredServer(other.name, connection_options(settings, other)))
        except (SecretUnreadable, InvalidDsn) as exc:
            # Its server is unknown, so the sandbox could be it: not used until it is fixed.
            raise SandboxRefused(
                f"cannot tell whether the sandbox is the server of instance '{other.name}': "
                f"its DSN cannot be read ({exc})"
            ) from exc
    return servers
