"""MySQL/MariaDB DSNs and connections, shared by the server and the agent.

One parser for ``mysql://user:password@host:port/database`` DSNs (``mariadb://`` too), with a
Unix socket given as ``?unix_socket=/path`` (the server's spelling, pymysql's argument) or
``?socket=/path`` (the agent's, the ``[client]`` option of my.cnf): a DSN that works for the
agent works when an admin registers the instance, and the other way round. One helper,
:func:`connect`, opens every pymysql connection Quanta makes, with the same charset, row
type and time limits; what each caller then sends (its guard, its session settings) stays
its own.

The agent imports this module: it must need nothing but the agent's light dependencies
(pymysql, the standard library), never the server's.
"""

from __future__ import annotations

import functools
import ssl
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

import pymysql
import pymysql.connections
import pymysql.cursors

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

DEFAULT_PORT = 3306
DSN_SCHEMES = ("mysql", "mariadb")
SOCKET_PARAMETERS = ("unix_socket", "socket")
"""Query parameters naming the Unix socket: either spelling is accepted."""


class InvalidDsn(ValueError):
    """The DSN cannot be understood; the message says what is wrong, never the password."""


@dataclass(frozen=True, slots=True)
class ConnectionOptions:
    """How to reach one MySQL/MariaDB server (a parsed DSN).

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


def parse_dsn(dsn: str, *, user_required: bool = True) -> ConnectionOptions:
    """Connection options from a DSN; :class:`InvalidDsn` names the part that is wrong.

    User, password and database may be percent-encoded. ``user_required=False`` (the agent)
    lets a DSN name no user: pymysql then connects as the operating-system user, as the
    ``mysql`` client does (socket authentication on a database host).

    Example:
        >>> parse_dsn("mysql://quanta:s%40cret@db1:3307/").password
        's@cret'
        >>> parse_dsn("mysql://mon@localhost/?socket=/run/mysqld/mysqld.sock").address
        '/run/mysqld/mysqld.sock'
    """
    parts = urlsplit(dsn.strip())
    if parts.scheme not in DSN_SCHEMES:
        raise InvalidDsn(
            f"DSN must start with mysql:// or mariadb://, e.g. "
            f"mysql://quanta_ro:PASSWORD@db1:3306/ (got scheme '{parts.scheme}')."
        )
    query = parse_qs(parts.query)
    sockets = {path for name in SOCKET_PARAMETERS for path in query.get(name, [])}
    if len(sockets) > 1:
        raise InvalidDsn("DSN names two different sockets (unix_socket= and socket=).")
    socket = next(iter(sockets), None)
    if not parts.hostname and not socket:
        raise InvalidDsn("DSN names no host (mysql://user:password@HOST:3306/).")
    if user_required and not parts.username:
        raise InvalidDsn("DSN names no user (mysql://USER:password@host:3306/).")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError as exc:
        raise InvalidDsn(f"DSN port is not a number: {exc}.") from exc
    return ConnectionOptions(
        host=parts.hostname or "localhost",
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        port=port,
        database=unquote(parts.path.strip("/")) or None,
        unix_socket=socket,
    )


def redact_dsn(dsn: str) -> str:
    """The DSN without its password, for display.

    Example:
        >>> redact_dsn("mysql://ro:s3cret@db:3306/")
        'mysql://ro:***@db:3306/'
    """
    parts = urlsplit(dsn.strip())
    if parts.password is None:
        return dsn
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


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
        host=options.host,
        port=options.port,
        user=options.user,
        password=options.password,
        database=options.database,
        unix_socket=options.unix_socket,
        charset="utf8mb4",
        autocommit=True,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        write_timeout=write_timeout,
        cursorclass=pymysql.cursors.DictCursor,
        program_name=program_name,
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
