"""MySQL/MariaDB connections of the server, and its DSNs (parsed by quanta.analysis.dsn).

One helper, :func:`connect`, opens every pymysql connection the server makes, with the same
charset, row type and time limits; what each caller then sends (its guard, its session
settings) stays its own. The DSN parser lives in ``quanta.analysis.dsn`` so that the agent,
which imports nothing of ``quanta.core``, parses DSNs with the same code; it is re-exported
here for the server's modules.
"""

from __future__ import annotations

import functools
import ssl
from typing import TYPE_CHECKING, Any

import pymysql
import pymysql.connections
import pymysql.cursors

from quanta.analysis.dsn import (
    DEFAULT_PORT,
    DSN_SCHEMES,
    SOCKET_PARAMETERS,
    ConnectionOptions,
    InvalidDsn,
    parse_dsn,
    redact_dsn,
)

__all__ = [
    "DEFAULT_PORT",
    "DSN_SCHEMES",
    "SOCKET_PARAMETERS",
    "ConnectionOptions",
    "InvalidDsn",
    "connect",
    "parse_dsn",
    "redact_dsn",
]


def connect(
    options: ConnectionOptions,
    *,
    program_name: str,
    connect_timeout: float,
    read_timeout: float,
    write_timeout: float | None = None,
) -> pymysql.Connection[pymysql.cursors.DictCursor]:
    """Open a connection: utf8mb4, autocommit, rows as dicts, the given time limits.

    ``program_name`` is what the server shows for the session (performance_schema's
    ``session_connect_attrs``), so an operator can tell Quanta's sessions apart. pymysql's
    errors (and OSError for a socket path that is not one) are the caller's to translate.
    """
    return _Connection(
        **options.connect_arguments(
            program_name=program_name,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            write_timeout=write_timeout,
        ),
        cursorclass=pymysql.cursors.DictCursor,
    )


if TYPE_CHECKING:  # generic in the type stubs only
    _DictConnection = pymysql.connections.Connection[pymysql.cursors.DictCursor]
else:
    _DictConnection = pymysql.connections.Connection


class _Connection(_DictConnection):
    """pymysql's connection, with one TLS context per process for its default mode.

    With no TLS option pymysql uses PREFERRED mode (TLS if the server offers it, its
    certificate unchecked, as the ``mysql`` client does) and builds a new context for every
    connection, loading the system's CA certificates that this mode never consults: 28 ms of
    CPU a connection, measured (688 connections, 19.3 s, in tests/integration/
    test_hostile_statements_mariadb.py). The context is read-only once built, so sharing it
    changes nothing but that cost.
    """

    def _create_ssl_ctx(self, sslp: Any) -> ssl.SSLContext:
        if sslp:
            return super()._create_ssl_ctx(sslp)  # type: ignore[misc,no-any-return]
        return _preferred_mode_context()


@functools.cache
def _preferred_mode_context() -> ssl.SSLContext:
    """The context pymysql 1.2 builds for PREFERRED mode (``_create_ssl_ctx({})``)."""
    context = ssl.create_default_context()
    context.verify_flags &= ~ssl.VERIFY_X509_STRICT
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
