"""MySQL/MariaDB DSNs: the one parser of the server and the agent.

``mysql://user:password@host:port/database`` (``mariadb://`` too), with a Unix socket given
as ``?unix_socket=/path`` (the server's spelling, pymysql's argument) or ``?socket=/path``
(the agent's, the ``[client]`` option of my.cnf): a DSN that works for the agent works when
an admin registers the instance, and the other way round. Pure text handling (the standard
library's URL parser), so the agent uses it without the server's infrastructure; opening a
connection is each side's own (``quanta.core.mysql.connect``, ``quanta_agent.mysql``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = [
    "DEFAULT_PORT",
    "DSN_SCHEMES",
    "SOCKET_PARAMETERS",
    "ConnectionOptions",
    "InvalidDsn",
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

    def connect_arguments(
        self,
        *,
        program_name: str,
        connect_timeout: float,
        read_timeout: float,
        write_timeout: float | None,
    ) -> dict[str, Any]:
        """pymysql's connection arguments, for the server and the agent alike: utf8mb4,
        autocommit, the given time limits, ``program_name`` shown by the server (the
        cursor class is the caller's)."""
        return {
            "host": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password,
            "database": self.database,
            "unix_socket": self.unix_socket,
            "charset": "utf8mb4",
            "autocommit": True,
            "connect_timeout": connect_timeout,
            "read_timeout": read_timeout,
            "write_timeout": write_timeout,
            "program_name": program_name,
        }


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
