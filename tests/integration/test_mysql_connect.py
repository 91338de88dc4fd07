"""quanta.core.mysql.connect, the one helper that opens Quanta's pymysql connections, against a
real MariaDB that offers no TLS."""

import contextlib
import ssl

import pytest

from quanta.core.mysql import ConnectionOptions, connect
from tests.fixtures.servers import MariaDBServer

pytestmark = pytest.mark.services


def test_default_mode_connections_share_one_tls_context(mariadb_server: MariaDBServer) -> None:
    options = ConnectionOptions(
        host=mariadb_server.host,
        port=mariadb_server.port,
        user=mariadb_server.user,
        password=mariadb_server.password,
    )

    def opened() -> contextlib.closing:  # type: ignore[type-arg]
        return contextlib.closing(
            connect(options, program_name="quanta-test", connect_timeout=5, read_timeout=5)
        )

    with opened() as first, opened() as second:
        # pymysql's PREFERRED mode is kept: TLS if offered, and this server offers none.
        assert first.ctx is second.ctx
        assert (first.ctx.verify_mode, first.ctx.check_hostname) == (ssl.CERT_NONE, False)
        assert not first._ssl_required
        with first.cursor() as cursor:
            cursor.execute("SELECT 1 AS one")
            assert cursor.fetchone() == {"one": 1}
