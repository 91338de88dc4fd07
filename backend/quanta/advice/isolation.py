"""The sandbox must not be a monitored server, since Quanta writes to it.

Refused when its DSN names the host and port (or socket) of any instance's DSN, and, once
connected and before anything is written, when its identity (``server_uuid`` on MySQL;
``hostname``, ``port`` and ``server_id`` on MariaDB, which has no server UUID; the Galera
cluster UUID on both) is that of a server an instance DSN reaches, read through that
instance's guarded read-only connection. An instance that cannot be read refuses too: it
could be the same server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from quanta.monitored import GuardedConnection, MonitoredError
from quanta.monitored.guard import SHOW_IDENTITY_STATUS, SHOW_IDENTITY_VARIABLES
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.sandbox import SandboxRefused, ServerIdentity, same_server

__all__ = ["LOOPBACK_HOSTS", "MonitoredServer", "refuse_same_address", "refuse_same_server"]

LOOPBACK_HOSTS = frozenset(("localhost", "127.0.0.1", "::1", "0:0:0:0:0:0:0:1"))


class MonitoredServer(NamedTuple):
    """A registered instance with a DSN: a server the sandbox must not be."""

    name: str
    options: ConnectionOptions


def refuse_same_address(sandbox: ConnectionOptions, instances: Sequence[MonitoredServer]) -> None:
    """SandboxRefused when the sandbox DSN reaches the host and port (or socket) of an
    instance's DSN: refused before connecting at all."""
    for instance in instances:
        other = instance.options
        same_socket = bool(sandbox.unix_socket) and sandbox.unix_socket == other.unix_socket
        same_port = (
            not sandbox.unix_socket
            and not other.unix_socket
            and _host(sandbox.host) == _host(other.host)
            and sandbox.port == other.port
        )
        if same_socket or same_port:
            raise SandboxRefused(
                f"the sandbox {sandbox.address} is the server of instance '{instance.name}' "
                f"(its DSN names the same {'socket' if same_socket else 'host and port'}): "
                "a sandbox must be a separate scratch server, since Quanta writes to it"
            )


def _host(host: str) -> str:
    lowered = host.lower().strip("[]")
    return "loopback" if lowered in LOOPBACK_HOSTS else lowered


def refuse_same_server(
    identity: ServerIdentity, instances: Sequence[MonitoredServer], limits: MonitoredSettings
) -> None:
    """SandboxRefused when the sandbox is the server (or cluster) of any instance, or when
    an instance's server cannot be read to tell."""
    for instance in instances:
        try:
            with GuardedConnection(instance.options, limits) as conn, conn.read_only():
                other = ServerIdentity.from_rows(
                    conn.query(SHOW_IDENTITY_VARIABLES), conn.query(SHOW_IDENTITY_STATUS)
                )
        except MonitoredError as exc:
            raise SandboxRefused(
                f"cannot tell whether the sandbox is the server of instance '{instance.name}', "
                f"so it is not used: {exc}"
            ) from exc
        why = same_server(identity, other)
        if why:
            raise SandboxRefused(
                f"the sandbox is the server of instance '{instance.name}' ({why}): a sandbox "
                "must be a separate scratch server, since Quanta writes to it"
            )
