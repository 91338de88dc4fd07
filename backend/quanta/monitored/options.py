"""Where a monitored server is, and the limits every session on it runs under."""

from __future__ import annotations

from dataclasses import dataclass

# Where a server is: a parsed DSN, the one type the server and the agent share.
from quanta.core.mysql import ConnectionOptions
from quanta.monitored.guard import StatementLimits

__all__ = ["ConnectionOptions", "MonitoredSettings"]

CONNECT_TIMEOUT_SECONDS = 5
READ_TIMEOUT_SECONDS = 60
WRITE_TIMEOUT_SECONDS = 30
STATEMENT_TIMEOUT_SECONDS = 10.0
# Quanta never waits long for a metadata lock (a schema change holds one), so it never holds
# one long either: its transactions are one statement long (see plans.py).
LOCK_WAIT_TIMEOUT_SECONDS = 1
# Exhaustive join planning up to 7 tables, greedy beyond (MariaDB/MySQL's own automatic
# choice): a 60-table join is planned in milliseconds, not in minutes (the default is 62).
OPTIMIZER_SEARCH_DEPTH = 7
PROFILE_RUNS = 3


@dataclass(frozen=True, slots=True)
class MonitoredSettings:
    """Limits for sessions on monitored servers.

    Fed from the application settings by the caller (see docs/architecture.md); the
    defaults suit a production server.

    Attributes:
        connect_timeout: Seconds to wait for the TCP connection and handshake.
        read_timeout: Seconds to wait for any one answer (a bit above the statement limit).
        write_timeout: Seconds to wait while sending a statement.
        statement_timeout: Seconds any one statement may run; the server stops it after.
        lock_wait_timeout: Seconds any one statement may wait for a metadata lock.
        optimizer_search_depth: The optimizer's exhaustive search depth for joins.
        profile_runs: Executions per profile when the caller does not say.
    """

    connect_timeout: int = CONNECT_TIMEOUT_SECONDS
    read_timeout: int = READ_TIMEOUT_SECONDS
    write_timeout: int = WRITE_TIMEOUT_SECONDS
    statement_timeout: float = STATEMENT_TIMEOUT_SECONDS
    lock_wait_timeout: int = LOCK_WAIT_TIMEOUT_SECONDS
    optimizer_search_depth: int = OPTIMIZER_SEARCH_DEPTH
    profile_runs: int = PROFILE_RUNS

    @property
    def limits(self) -> StatementLimits:
        """The limits written into every statement (see guard.with_limits)."""
        return StatementLimits(
            self.statement_timeout, self.lock_wait_timeout, self.optimizer_search_depth
        )
