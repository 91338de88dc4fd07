"""Errors of the monitored-server layer: each message is one line a person can act on."""

from __future__ import annotations


class MonitoredError(Exception):
    """Something went wrong on or with a monitored server; ``str()`` says what and why."""


class ConnectionFailed(MonitoredError):
    """The server cannot be reached, or refused the account (wrong credentials, no grant)."""


class StatementRefused(MonitoredError):
    """Quanta refused to send a statement: it is not one it may run on a monitored server."""


class ServerError(MonitoredError):
    """The server refused or stopped a statement (privileges, syntax, time limit), or the
    client gave up on it.

    Attributes:
        code: The server's (or the driver's) error number, when there is one.
        abandoned: The client stopped waiting (its read timed out) or lost the connection:
            the statement may still be running, so Quanta tried to stop it on the server
            (the message says how that went). A run that saw this failed, whatever else
            it got.
    """

    def __init__(self, message: str, *, code: int | None = None, abandoned: bool = False):
        """A one-line message a person can act on, with what is known of the cause."""
        super().__init__(message)
        self.code = code
        self.abandoned = abandoned

    @property
    def stopped(self) -> bool:
        """The server stopped it at one of its limits (time, lock wait), or it was killed."""
        return self.code in STOPPED_CODES


# max_statement_time (MariaDB), interrupted (KILL QUERY), max_execution_time (MySQL),
# lock_wait_timeout.
STOPPED_CODES = frozenset((1969, 1317, 3024, 1205))


class FeatureUnavailable(MonitoredError):
    """The server cannot give what was asked (no SHOW PROFILE and no stage events)."""
