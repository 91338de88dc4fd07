"""What the account Quanta connects with may do on a server, from its own SHOW GRANTS.

``SHOW GRANTS FOR CURRENT_USER()`` lists a role's name, not what the role grants, and
nothing granted to MariaDB's PUBLIC (10.11+: ``GRANT SUPER ON *.* TO PUBLIC`` is accepted
and works). So on MariaDB the account's privileges are those lines, plus ``SHOW GRANTS``
(the roles enabled in this session, default roles included, and PUBLIC), plus
``SHOW GRANTS FOR r`` of every role the account may ``SET ROLE`` to
(``information_schema.APPLICABLE_ROLES``, nested roles included): what any session of the
account can have. On MySQL a role's privileges depend on which are active (and on
``mandatory_roles``): its roles are left unresolved (:attr:`AccountPrivileges.unresolved_roles`)
and an execution target refuses such an account.

The parsing is pure (:mod:`quanta.analysis.grants`); this reads the lines. The grant lines
themselves are never passed on: MariaDB prints the account's password hash in them.
"""

from __future__ import annotations

from dataclasses import dataclass

from quanta.analysis.grants import excess_privileges, granted, parse_grant
from quanta.analysis.sqltext import quote_ident
from quanta.monitored.connection import GuardedConnection
from quanta.monitored.options import ConnectionOptions, MonitoredSettings

__all__ = ["AccountPrivileges", "account_privileges", "read_privileges"]


@dataclass(frozen=True, slots=True)
class AccountPrivileges:
    """The account as the server knows it, what it is granted, and what is beyond need.

    Attributes:
        account: ``CURRENT_USER()``, e.g. ``quanta@%``.
        privileges: Each granted privilege as ``PRIVILEGE ON level`` (roles as ``role r``).
        excess: Those beyond SELECT, PROCESS, SHOW VIEW, REPLICATION CLIENT (sorted).
        unresolved_roles: Roles whose privileges could not be read (MySQL), sorted.
    """

    account: str
    privileges: tuple[str, ...]
    excess: tuple[str, ...]
    unresolved_roles: tuple[str, ...] = ()

    @property
    def least(self) -> bool:
        """Nothing beyond what Quanta needs."""
        return not self.excess

    def refusal(self, where: str) -> str:
        """The sentence diagnostics refuse with while the account has excess privileges."""
        shown = ", ".join(self.excess[:6]) + (", ..." if len(self.excess) > 6 else "")
        return (
            f"the account {self.account} on {where} has privileges Quanta does not need "
            f"({shown}): a statement from a log would run with them. Grant only SELECT, "
            "PROCESS, SHOW VIEW and REPLICATION CLIENT (see the README), or an admin sets "
            '"allow_broad_privileges": true on the instance (audited)'
        )


def read_privileges(conn: GuardedConnection) -> AccountPrivileges:
    """The connected account's privileges, roles and MariaDB's PUBLIC resolved (see above)."""
    unresolved: set[str] = set()
    with conn.read_only():
        account = str(conn.query("SELECT CURRENT_USER() AS u")[0]["u"])
        lines = _lines(conn.query("SHOW GRANTS FOR CURRENT_USER()"))
        if conn.is_mariadb:
            lines += _lines(conn.query("SHOW GRANTS"))  # enabled roles, PUBLIC
            for role in conn.query(
                "SELECT DISTINCT ROLE_NAME FROM information_schema.APPLICABLE_ROLES"
            ):
                role_name = quote_ident(str(role["ROLE_NAME"]))
                lines += _lines(conn.query(f"SHOW GRANTS FOR {role_name}"))
        else:
            unresolved = {role for line in lines for role in _roles(line)}
            mandatory = conn.query("SHOW GLOBAL VARIABLES LIKE 'mandatory_roles'")
            if mandatory and str(mandatory[0]["Value"] or "").strip():
                unresolved.add(f"mandatory_roles={mandatory[0]['Value']}")
    return AccountPrivileges(
        account=account,
        privileges=tuple(granted(lines)),
        excess=tuple(excess_privileges(lines)),
        unresolved_roles=tuple(sorted(unresolved)),
    )


def _lines(rows: list[dict[str, object]]) -> list[str]:
    return [str(next(iter(row.values()))) for row in rows]


def _roles(line: str) -> tuple[str, ...]:
    try:
        grant = parse_grant(line)
    except ValueError:
        return ()
    return grant.roles if grant is not None else ()


def account_privileges(
    options: ConnectionOptions, settings: MonitoredSettings | None = None
) -> AccountPrivileges:
    """Connect and read the account's privileges (a session of its own, closed after)."""
    with GuardedConnection(options, settings) as conn:
        return read_privileges(conn)
