"""Where a monitored server is, and the limits every session on it runs under."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_PORT = 3306
CONNECT_TIMEOUT_SECONDS = 5
READ_TIMEOUT_SECONDS = 60
WRITE_TIMEOUT_SECONDS = 30
STATEMENT_TIMEOUT_SECONDS = 10.0
PROFILE_RUNS = 3


@dataclass(frozen=True, slots=True)
class ConnectionOptions:
    """How to reach one monitored server (the decrypted instance DSN).

    The password is kept out of ``repr`` so that it never lands in a log or a traceback.
    """

    host: str
    user: str
    password: str = field(default="", repr=False)
    port: int = DEFAULT_PORT
    database: str | None = None
    unix_socket: str | None = None

    @property
    def address(self) -> str:
        """``host:port`` or the socket path, for messages."""
        return self.unix_socket or f"{self.host}:{self.port}"


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
