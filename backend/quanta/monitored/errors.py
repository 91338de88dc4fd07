"""Errors of the monitored-server layer: each message is one line a person can act on."""

from __future__ import annotations


class MonitoredError(Exception):
    """Something went wrong on or with a monitored server; ``str()`` says what and why."""


class ConnectionFailed(MonitoredError):
    """The server cannot be reached, or refused the account (wrong credentials, no grant)."""


class StatementRefused(MonitoredError):
    """Quanta refused to send a statement: it is not one it may run on a monitored server."""


class ServerError(MonitoredError):
    """The server refused or stopped a statement (privileges, syntax, time limit)."""


class FeatureUnavailable(MonitoredError):
    """The server cannot give what was asked (no SHOW PROFILE and no stage events)."""
