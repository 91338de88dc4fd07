"""Instance DSNs parse to connection options, with clear errors, and redact for display."""

from pathlib import Path

import pytest

from quanta.core.config import Settings
from quanta.core.crypto import encrypt
from quanta.instances.dsn import InvalidDsn, parse_dsn, redact_dsn
from quanta.instances.models import Instance
from quanta.instances.service import (
    NoConnection,
    connection_options,
    monitored_settings,
    sandbox_options,
)


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


def test_connection_options_from_the_encrypted_dsn(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    instance = Instance(id=3, name="db1")
    with pytest.raises(NoConnection, match="PATCH /api/v1/instances/3"):
        connection_options(settings, instance)
    instance.dsn_encrypted = encrypt(settings, "mysql://ro:pw@db1:3310/shop")
    options = connection_options(settings, instance)
    assert (options.host, options.port, options.password) == ("db1", 3310, "pw")
    assert sandbox_options(settings, instance) is None
    limits = monitored_settings(settings)
    assert (limits.statement_timeout, limits.read_timeout) == (10.0, 15)
