"""Reading monitored MySQL/MariaDB servers: EXPLAIN, profiles, schema snapshots, checks.

Every session Quanta opens on a customer server (monitored server, execution target,
suggestion sandbox) is a :class:`~quanta.monitored.connection.GuardedSession`: one gate
(:mod:`~quanta.monitored.guard`), Quanta's sql_mode, limits written into every statement,
and ``KILL QUERY`` of its own statement when the client gives up. On a monitored server or
an execution target (:class:`~quanta.monitored.connection.GuardedConnection`) only SELECT,
EXPLAIN, SHOW and a fixed list of session statements are ever sent, inside read-only
transactions, and what a statement reaches (views, generated columns) is checked before it
is explained or executed (:mod:`~quanta.monitored.objects`). The pure parts (statement
classification, plan findings, profile ranking) live in :mod:`quanta.analysis`.
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
