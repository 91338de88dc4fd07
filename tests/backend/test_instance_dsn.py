"""An instance's stored, encrypted DSNs to connection options (the parser: test_dsn.py)."""

from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from quanta.core.config import Settings
from quanta.core.crypto import encrypt
from quanta.instances.models import Instance
from quanta.instances.service import (
    InstanceUnreachable,
    NoConnection,
    monitored_settings,
    require_connection,
    sandbox_options,
    target_options,
)


def test_connection_options_from_the_encrypted_dsn(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    instance = Instance(id=3, name="db1")
    with pytest.raises(NoConnection, match="PATCH /api/v1/instances/3"):
        require_connection(settings, instance)
    instance.dsn_encrypted = encrypt(settings, "mysql://ro:pw@db1:3310/shop")
    options = require_connection(settings, instance)
    assert (options.host, options.port, options.password) == ("db1", 3310, "pw")
    assert sandbox_options(settings, instance) is None
    limits = monitored_settings(settings)
    assert (limits.statement_timeout, limits.read_timeout) == (10.0, 15)


def test_a_dsn_that_cannot_be_used_is_one_error_with_one_message(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    other_key = Settings(data_dir=tmp_path, secret_key=Fernet.generate_key().decode())
    instance = Instance(
        id=3,
        name="db1",
        dsn_encrypted=encrypt(other_key, "mysql://ro:pw@db1:3310/shop"),
        sandbox_dsn_encrypted=encrypt(settings, "postgres://db1/"),
        target_dsn_encrypted=encrypt(other_key, "mysql://ro:pw@replica:3306/"),
    )
    for read, field in [
        (require_connection, "dsn"),
        (sandbox_options, "sandbox_dsn"),
        (target_options, "execution_target_dsn"),
    ]:
        with pytest.raises(InstanceUnreachable) as raised:
            read(settings, instance)
        message = str(raised.value)
        assert message.startswith(f"Instance 'db1' has a {field} that cannot be used (")
        assert message.endswith("); an admin sets it again with PATCH /api/v1/instances/3.")
        assert raised.value.status_code == 409
