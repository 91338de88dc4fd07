"""Instance DSNs parse to connection options, with clear errors, and redact for display."""

import pytest

from quanta.instances.dsn import InvalidDsn, parse_dsn, redact_dsn


def test_full_dsn() -> None:
    options = parse_dsn("mysql://quanta_ro:p%40ss@db1.internal:3307/shop")
    assert (options.host, options.port, options.user, options.password, options.database) == (
        "db1.internal",
        3307,
        "quanta_ro",
        "p@ss",
        "shop",
    )
    assert "p@ss" not in repr(options)


def test_socket_dsn_defaults() -> None:
    options = parse_dsn("mariadb://ro@/?unix_socket=/run/mysqld/mysqld.sock")
    assert (options.unix_socket, options.port, options.database) == (
        "/run/mysqld/mysqld.sock",
        3306,
        None,
    )


@pytest.mark.parametrize(
    ("dsn", "message"),
    [
        ("postgres://u@h/", "must start with mysql://"),
        ("mysql://u@:3306/", "names no host"),
        ("mysql://h:3306/", "names no user"),
        ("mysql://u@h:port/", "port is not a number"),
    ],
)
def test_bad_dsn_says_what_is_wrong(dsn: str, message: str) -> None:
    with pytest.raises(InvalidDsn, match=message):
        parse_dsn(dsn)


def test_redact() -> None:
    assert redact_dsn("mysql://ro:s3cret@db:3306/") == "mysql://ro:***@db:3306/"
    assert redact_dsn("mysql://ro@db/") == "mysql://ro@db/"
