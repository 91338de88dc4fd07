"""What the account Quanta connects with may do on a server, from its own SHOW GRANTS.

The parsing is pure (:mod:`quanta.analysis.grants`); this reads the lines. The grant lines
themselves are never passed on: MariaDB prints the account's password hash in them.
"""

from __future__ import annotations

from dataclasses import dataclass

from quanta.analysis.grants import excess_privileges, granted
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
    """

    account: str
    privileges: tuple[str, ...]
    excess: tuple[str, ...]

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
    """The connected account's privileges, from ``SHOW GRANTS FOR CURRENT_USER()``."""
    with conn.read_only():
        account = str(conn.query("SELECT CURRENT_USER() AS u")[0]["u"])
        rows = conn.query("SHOW GRANTS FOR CURRENT_USER()")
    lines = [str(next(iter(row.values()))) for row in rows]
    return AccountPrivileges(
        account=account,
        privileges=tuple(granted(lines)),
        excess=tuple(excess_privileges(lines)),
    )


def account_privileges(
    options: ConnectionOptions, settings: MonitoredSettings | None = None
) -> AccountPrivileges:
    """Connect and read the account's privileges (a session of its own, closed after)."""
    with GuardedConnection(options, settings) as conn:
        return read_privileges(conn)
