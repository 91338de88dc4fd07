"""Instance DSNs: `mysql://user:password@host:port/db` (or `?unix_socket=/path`) to options."""

from urllib.parse import parse_qs, unquote, urlsplit

from quanta.monitored.options import DEFAULT_PORT, ConnectionOptions

DSN_SCHEMES = ("mysql", "mariadb")


class InvalidDsn(ValueError):
    """The DSN cannot be understood; the message says what is wrong."""


def parse_dsn(dsn: str) -> ConnectionOptions:
    """Connection options from a DSN; InvalidDsn names the part that is wrong."""
    parts = urlsplit(dsn.strip())
    if parts.scheme not in DSN_SCHEMES:
        raise InvalidDsn(
            f"DSN must start with mysql:// or mariadb://, e.g. "
            f"mysql://quanta_ro:PASSWORD@db1:3306/ (got scheme '{parts.scheme}')."
        )
    socket = parse_qs(parts.query).get("unix_socket", [None])[0]
    if not parts.hostname and not socket:
        raise InvalidDsn("DSN names no host (mysql://user:password@HOST:3306/).")
    if not parts.username:
        raise InvalidDsn("DSN names no user (mysql://USER:password@host:3306/).")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError as exc:
        raise InvalidDsn(f"DSN port is not a number: {exc}.") from exc
    return ConnectionOptions(
        host=parts.hostname or "localhost",
        user=unquote(parts.username),
        password=unquote(parts.password or ""),
        port=port,
        database=parts.path.strip("/") or None,
        unix_socket=socket,
    )


def redact_dsn(dsn: str) -> str:
    """The DSN without its password, for display."""
    parts = urlsplit(dsn.strip())
    if parts.password is None:
        return dsn
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()
