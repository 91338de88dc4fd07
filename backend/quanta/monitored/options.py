"""Where a monitored server is, and the limits every session on it runs under."""

from __future__ import annotations

from dataclasses import dataclass

# Where a server is: a parsed DSN, the one type the server and the agent share.
from quanta.core.mysql import ConnectionOptions

__all__ = ["ConnectionOptions", "MonitoredSettings"]

CONNECT_TIMEOUT_SECONDS = 5
READ_TIMEOUT_SECONDS = 60
WRITE_TIMEOUT_SECONDS = 30
STATEMENT_TIMEOUT_SECONDS = 10.0
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
        profile_runs: Executions per profile when the caller does not say.
    """

    connect_timeout: int = CONNECT_TIMEOUT_SECONDS
    read_timeout: int = READ_TIMEOUT_SECONDS
    write_timeout: int = WRITE_TIMEOUT_SECONDS
    statement_timeout: float = STATEMENT_TIMEOUT_SECONDS
    profile_runs: int = PROFILE_RUNS
