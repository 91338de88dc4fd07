"""Execution targets: the only servers where Quanta executes an example (ANALYZE, profiles).

EXPLAIN never executes the statement and runs on the monitored server. Anything that does
execute it runs only on the instance's execution target, a replica or sandbox an admin
configures, and only while that server is read-only for the account Quanta uses there:

* MySQL: ``super_read_only=ON`` (read-only for everyone), or ``read_only=ON`` with an
  account that has neither SUPER nor CONNECTION_ADMIN (which bypass it);
* MariaDB: ``read_only=ON`` (1) with an account without READ_ONLY ADMIN (nor SUPER, which
  includes it before 10.11); MariaDB 11.x's enum values ``NO_LOCK`` (same, and no share
  locks) and ``NO_LOCK_NO_ADMIN`` (read-only for everyone, as MySQL's super_read_only);
* ``innodb_read_only=ON`` alone is not enough: MyISAM and Aria tables stay writable.

The account's privileges include what its roles grant (MariaDB: default roles, every role
it may SET ROLE to, and PUBLIC; see :mod:`quanta.monitored.privileges`); an account with a
role whose privileges cannot be read (MySQL) is refused.

The check runs on every connection opened with :class:`TargetConnection`, before any
statement of the caller is sent: ANALYZE (plans.py) and profiles (profiling.py) open their
sessions with it, and :func:`verify_target` opens one to show what was found.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Self

from quanta.monitored.connection import GuardedConnection
from quanta.monitored.errors import MonitoredError
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.privileges import AccountPrivileges, read_privileges

__all__ = [
    "ReadOnlyState",
    "TargetConnection",
    "TargetNotReadOnly",
    "read_only_refusal",
    "verify_target",
]

READ_ONLY_VARIABLES = ("read_only", "super_read_only", "innodb_read_only")
_ON = frozenset(("ON", "1", "TRUE", "YES"))
# MariaDB 11.x's read_only levels: ON/NO_LOCK spare READ_ONLY ADMIN, NO_LOCK_NO_ADMIN no one.
_READ_ONLY_LEVELS = frozenset(("ON", "1", "TRUE", "NO_LOCK", "2"))
_READ_ONLY_FOR_ALL = frozenset(("NO_LOCK_NO_ADMIN", "3"))
# Global privileges that let an account write on a server with read_only=ON.
_BYPASS = ("ALL PRIVILEGES", "SUPER", "CONNECTION_ADMIN", "READ_ONLY ADMIN")


class TargetNotReadOnly(MonitoredError):
    """The execution target accepts writes from Quanta's account: nothing is executed."""


@dataclass(frozen=True, slots=True)
class ReadOnlyState:
    """What the execution target said at connect, and the account there.

    Attributes:
        address: ``host:port`` of the target.
        variables: The read-only variables as the server reported them (absent ones left out).
        account: The account's privileges on the target.
        server_version: VERSION() of the target.
    """

    address: str
    variables: dict[str, str]
    account: AccountPrivileges
    server_version: str = ""

    def describe(self) -> str:
        """One line for the instance page: ``read_only=ON, super_read_only=OFF, ...``."""
        return ", ".join(f"{name}={value}" for name, value in self.variables.items())


def read_only_refusal(
    address: str,
    variables: Mapping[str, str],
    privileges: Collection[str],
    *,
    unresolved_roles: Collection[str] = (),
) -> str | None:
    """Why the target is not read-only for the account, or None when it is.

    Args:
        address: ``host:port``, for the sentence.
        variables: ``read_only``, ``super_read_only``, ``innodb_read_only`` as reported.
        privileges: The account's grants as ``PRIVILEGE ON level``, its roles' included.
        unresolved_roles: Roles whose privileges could not be read: refused outright.

    Example:
        >>> read_only_refusal("db:3306", {"read_only": "ON"}, ["SELECT ON *.*"]) is None
        True
    """
    read_only = variables.get("read_only", "OFF").upper()
    if variables.get("super_read_only", "OFF").upper() in _ON:
        return None
    if read_only in _READ_ONLY_FOR_ALL:
        return None
    if unresolved_roles:
        return (
            f"the execution target {address} cannot be vouched for: Quanta's account there "
            f"has roles ({', '.join(sorted(unresolved_roles))}) whose privileges it cannot "
            "read, and one may let it write. Use an account without roles there, or make the "
            "server read-only for everyone (MySQL: SET GLOBAL super_read_only=ON)"
        )
    fix = (
        "SET GLOBAL read_only=ON there (MySQL: and super_read_only=ON; MariaDB 11.x: "
        "read_only=NO_LOCK_NO_ADMIN), or point the execution target at a replica started "
        "with --read-only"
    )
    if read_only in _READ_ONLY_LEVELS:
        bypass = [p for p in privileges if p.split(" ON ")[0] in _BYPASS and p.endswith("*.*")]
        if not bypass:
            return None
        return (
            f"the execution target {address} is read-only, but not for Quanta's account there: "
            f"{', '.join(bypass)} lets it write anyway. Use an account without it, or make the "
            f"server read-only for everyone (MySQL: SET GLOBAL super_read_only=ON; MariaDB "
            f"11.x: SET GLOBAL read_only=NO_LOCK_NO_ADMIN)"
        )
    if variables.get("innodb_read_only", "OFF").upper() in _ON:
        return (
            f"the execution target {address} is not read-only: innodb_read_only is ON but "
            f"read_only is {read_only}, so MyISAM and Aria tables stay writable: {fix}"
        )
    return f"the execution target {address} is not read-only: {fix}"


class TargetConnection(GuardedConnection):
    """A guarded session on an execution target, verified read-only as it opens.

    ``state`` holds what was verified. Raises TargetNotReadOnly from ``with`` when the
    server (or the account) is not read-only; the session is closed then.
    """

    state: ReadOnlyState

    def __init__(self, options: ConnectionOptions, settings: MonitoredSettings | None = None):
        """Describe the session; it is verified read-only as ``with`` opens it."""
        super().__init__(options, settings, execution_target=True)

    def __enter__(self) -> Self:
        super().__enter__()
        try:
            self.state = _verify(self)
        except BaseException:
            self.close()
            raise
        return self


def verify_target(
    options: ConnectionOptions, settings: MonitoredSettings | None = None
) -> ReadOnlyState:
    """Connect to the execution target, verify it read-only, and say what was found.

    Raises:
        TargetNotReadOnly: it is not (the message says how to make it so).
        ConnectionFailed, ServerError: as for any monitored server.
    """
    with TargetConnection(options, settings) as conn:
        return conn.state


def _verify(conn: GuardedConnection) -> ReadOnlyState:
    with conn.read_only():
        rows = conn.query(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN (%s, %s, %s)", READ_ONLY_VARIABLES
        )
    found = {str(row["Variable_name"]).lower(): str(row["Value"]) for row in rows}
    variables = {name: found[name] for name in READ_ONLY_VARIABLES if name in found}
    account = read_privileges(conn)
    state = ReadOnlyState(conn.options.address, variables, account, conn.version)
    refusal = read_only_refusal(
        conn.options.address,
        variables,
        account.privileges,
        unresolved_roles=account.unresolved_roles,
    )
    if refusal is not None:
        raise TargetNotReadOnly(refusal)
    return state
