"""Who may run what, where: the checks every diagnostics run (EXPLAIN, profile, suggestion)
passes before it reaches a server, the plan masking before it is stored, and its audit.

* EXPLAIN runs on the monitored server and never executes the statement.
* Anything that executes (ANALYZE, profiles) runs only on the instance's execution target,
  verified read-only at connect (:mod:`quanta.monitored.target`).
* The account used must have only SELECT, PROCESS, SHOW VIEW and REPLICATION CLIENT,
  unless an admin set ``allow_broad_privileges`` on the instance (the run's audit entry
  then lists what was allowed).
* Plans are stored with their literals masked by the instance's example policy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from quanta.analysis.plan_mask import mask_plan
from quanta.analysis.redact import redact
from quanta.audit import service as audit
from quanta.core.config import Settings
from quanta.instances import service as instances
from quanta.instances.models import ExamplePolicy, Instance
from quanta.monitored.connection import GuardedConnection
from quanta.monitored.errors import MonitoredError
from quanta.monitored.options import ConnectionOptions
from quanta.monitored.privileges import AccountPrivileges, account_privileges, read_privileges
from quanta.monitored.target import TargetConnection

__all__ = [
    "MONITORED",
    "SANDBOX",
    "TARGET",
    "BroadPrivileges",
    "NoExecutionTarget",
    "Trail",
    "check_monitored_account",
    "masked",
    "monitored_session",
    "no_target_reason",
    "target_session",
]

MONITORED = "monitored server"
TARGET = "execution target"
SANDBOX = "sandbox"
_T = TypeVar("_T")


class BroadPrivileges(MonitoredError):
    """The account has privileges beyond what Quanta needs, and no admin allowed it."""


class NoExecutionTarget(MonitoredError):
    """Executing was asked for, and the instance has no execution target."""


@dataclass
class Trail:
    """What a run did, for its audit entry: the servers reached and what was allowed."""

    where: list[dict[str, str]] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    def reached(self, role: str, address: str) -> None:
        """Note a server the run connects to (before connecting: a failure counts too)."""
        entry = {"role": role, "address": address}
        if entry not in self.where:
            self.where.append(entry)

    def record(
        self,
        session: Session,
        *,
        actor: audit.Actor | None,
        what: str,
        instance: Instance,
        query_id: str | None,
        run_id: int | None,
        outcome: str,
        reason: str | None,
        table: str | None = None,
    ) -> None:
        """Write the run's audit entry (about one query, or one table's index plan)."""
        target = {"instance_id": str(instance.id), "instance": instance.name}
        if query_id is not None:
            target["query_id"] = query_id
        if table is not None:
            target["table"] = table
        if run_id is not None:
            target["run_id"] = str(run_id)
        detail = dict(self.detail)
        if reason:
            detail["reason"] = reason
        audit.record_run(
            session=session,
            actor=actor,
            what=what,
            target=target,
            where=self.where,
            outcome=outcome,
            detail=detail,
        )


def no_target_reason(instance: Instance, what: str) -> str:
    """Why ``what`` (a profile, ANALYZE) does not run: no execution target, and the fix."""
    return (
        f"{what} executes the example, and nothing is executed on the monitored server: "
        f"instance '{instance.name}' has no execution target. An admin sets a read-only "
        f"replica or sandbox in Settings → Instances → {instance.name} → Edit → Execution "
        f"target (or PATCH /api/v1/instances/{instance.id} "
        '{"execution_target_dsn": "mysql://quanta_exec:PASSWORD@replica:3306/"}).'
    )


def check_monitored_account(
    settings: Settings, instance: Instance, options: ConnectionOptions, trail: Trail
) -> AccountPrivileges:
    """Read the monitoring account's privileges; BroadPrivileges unless they are the least
    or an admin allowed more on this instance (then the trail says what was allowed)."""
    trail.reached(MONITORED, options.address)
    account = account_privileges(options, instances.monitored_settings(settings))
    _allow(instance, account, f"the monitored server {options.address}", trail)
    return account


@contextlib.contextmanager
def monitored_session(
    settings: Settings, instance: Instance, options: ConnectionOptions, trail: Trail
) -> Iterator[GuardedConnection]:
    """A session on the monitored server whose account passed check_monitored_account's
    check on this very session, before the caller sends anything: a run's EXPLAIN reaches
    the server once.

    Raises:
        BroadPrivileges: as check_monitored_account (nothing else was sent).
        ConnectionFailed, ServerError: as for any monitored server.
    """
    trail.reached(MONITORED, options.address)
    with GuardedConnection(options, instances.monitored_settings(settings)) as conn:
        _allow(instance, read_privileges(conn), f"the monitored server {options.address}", trail)
        yield conn


@contextlib.contextmanager
def target_session(
    settings: Settings, instance: Instance, trail: Trail, what: str, *, database: str | None
) -> Iterator[TargetConnection]:
    """A session on the instance's execution target, verified read-only as it opened and
    with an allowed account, in ``database`` (the example's default database; None: the
    DSN's); everything a run executes there goes on it.

    Raises:
        NoExecutionTarget: none is configured.
        TargetNotReadOnly, BroadPrivileges, ConnectionFailed, ServerError: not usable now.
        InstanceUnreachable: its stored DSN cannot be used.
    """
    options = instances.target_options(settings, instance)
    if options is None:
        raise NoExecutionTarget(no_target_reason(instance, what))
    trail.reached(TARGET, options.address)
    if database:
        options = replace(options, database=database)
    with TargetConnection(options, instances.monitored_settings(settings)) as conn:
        trail.detail["execution_target"] = conn.state.describe()
        _allow(instance, conn.state.account, f"the execution target {options.address}", trail)
        yield conn


def masked(instance: Instance, plan: _T, example: str | None) -> _T:
    """A plan as it may be stored and shown: literals masked by the example policy (only
    the explained example's own literals survive, and only under the ``full`` policy, its
    secrets not: an example stored before redaction knew them still holds them)."""
    keep = (
        redact(example) if example and instance.example_policy == ExamplePolicy.FULL.value else None
    )
    return mask_plan(plan, example=keep)


def address_of(settings: Settings, instance: Instance) -> str:
    """The monitored server's ``host:port`` for an audit entry (``?`` when unreadable)."""
    try:
        return instances.require_connection(settings, instance).address
    except (instances.NoConnection, instances.InstanceUnreachable):
        return "?"


def target_address_of(settings: Settings, instance: Instance) -> str:
    """The execution target's ``host:port`` for an audit entry (``none`` when unset)."""
    try:
        options = instances.target_options(settings, instance)
    except instances.InstanceUnreachable:
        return "?"
    return options.address if options is not None else "none"


def _allow(instance: Instance, account: AccountPrivileges, where: str, trail: Trail) -> None:
    if account.least:
        return
    if not instance.allow_broad_privileges:
        raise BroadPrivileges(account.refusal(where))
    allowed = trail.detail.setdefault("broad_privileges_allowed", {})
    allowed[account.account] = list(account.excess)
