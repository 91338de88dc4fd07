"""Reading monitored MySQL/MariaDB servers: EXPLAIN, profiles, schema snapshots, checks.

Everything here talks to a monitored server through
:class:`~quanta.monitored.connection.GuardedConnection`: only SELECT (and EXPLAIN/SHOW and
a fixed list of session statements) is ever sent, inside read-only transactions, with a
statement time limit the server enforces. The pure parts (statement classification, plan
findings, profile ranking) live in :mod:`quanta.analysis`.
"""

from quanta.monitored.check import Capability, ConnectionReport, test_connection
from quanta.monitored.connection import GuardedConnection
from quanta.monitored.errors import (
    ConnectionFailed,
    FeatureUnavailable,
    MonitoredError,
    ServerError,
    StatementRefused,
)
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.plans import ExplainResult, explain, explain_on
from quanta.monitored.profiling import ProfilingMethod, profile, profile_on
from quanta.monitored.snapshot import schema_snapshot

__all__ = [
    "Capability",
    "ConnectionFailed",
    "ConnectionOptions",
    "ConnectionReport",
    "ExplainResult",
    "FeatureUnavailable",
    "GuardedConnection",
    "MonitoredError",
    "MonitoredSettings",
    "ProfilingMethod",
    "ServerError",
    "StatementRefused",
    "explain",
    "explain_on",
    "profile",
    "profile_on",
    "schema_snapshot",
    "test_connection",
]
