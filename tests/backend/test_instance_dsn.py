"""An instance's stored, encrypted DSNs to connection options (the parser: test_dsn.py)."""

from pathlib import Path

import pytest

from quanta.core.config import Settings
from quanta.core.crypto import encrypt
from quanta.instances.models import Instance
from quanta.instances.service import (
    NoConnection,
    connection_options,
    monitored_settings,
    sandbox_options,
)


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
