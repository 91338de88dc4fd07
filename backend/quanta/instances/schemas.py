"""Request and response bodies of the instances endpoints.

DSNs come in as ``SecretStr`` so that they never appear in a repr, a log line or a
validation error's echo of the input, and go out only redacted (no password).
"""

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from quanta.core.names import InstanceName

ExamplePolicyName = Literal["full", "masked", "off"]
SourceName = Literal["slowlog", "perfschema"]

DSN_DESCRIPTION = (
    "DSN of a read-only account, e.g. mysql://quanta_ro:PASSWORD@db1:3306/shop "
    "(or mysql://user:pass@localhost/?unix_socket=/run/mysqld/mysqld.sock); "
    "stored encrypted, shown without its password."
)
SANDBOX_DESCRIPTION = (
    "Optional DSN of a scratch server where suggested indexes may be created to compare plans."
)


class InstanceOut(BaseModel):
    """A monitored server as the API shows it (DSNs without their password)."""

    id: int
    name: str
    flavor: str | None = Field(description="mariadb or mysql, detected by test-connection.")
    version: str | None = Field(description="Server version, detected by test-connection.")
    dsn: str | None = Field(description="The DSN without its password; null when none is set.")
    has_dsn: bool = Field(
        description="A DSN is stored (true with dsn null: it cannot be decrypted with the "
        "current QUANTA_SECRET_KEY and must be entered again)."
    )
    sandbox_dsn: str | None
    profiling_enabled: bool = Field(
        description="Profiles and MariaDB's ANALYZE may execute example SELECTs on the server."
    )
    example_policy: ExamplePolicyName
    primary_source: str | None = Field(
        description="slowlog or perfschema: the source whose buckets count in totals."
    )
    created_at: datetime


class InstanceCreate(BaseModel):
    """Register a monitored server (agents also register one by name on first ingest)."""

    model_config = ConfigDict(extra="forbid")

    name: InstanceName
    dsn: SecretStr | None = Field(default=None, description=DSN_DESCRIPTION)
    sandbox_dsn: SecretStr | None = Field(default=None, description=SANDBOX_DESCRIPTION)
    profiling_enabled: bool = False
    example_policy: ExamplePolicyName = "full"


class InstanceUpdate(BaseModel):
    """Change some fields of an instance; a field sent as null removes a DSN."""

    model_config = ConfigDict(extra="forbid")

    name: InstanceName | None = Field(
        default=None,
        description="Agents address the instance by name: rename it in their configuration too.",
    )
    dsn: SecretStr | None = Field(default=None, description=DSN_DESCRIPTION)
    sandbox_dsn: SecretStr | None = Field(default=None, description=SANDBOX_DESCRIPTION)
    profiling_enabled: bool | None = None
    example_policy: ExamplePolicyName | None = None
    primary_source: SourceName | None = None


class CapabilityOut(BaseModel):
    """One thing the connection test checked."""

    name: str
    ok: bool
    detail: str


class ConnectionTestOut(BaseModel):
    """What the account can do on the server; ``error`` says why when it cannot connect."""

    connected: bool
    error: str | None = None
    flavor: str | None = None
    version: str | None = None
    account: str | None = None
    privileges: list[str] = Field(default_factory=list)
    capabilities: list[CapabilityOut] = Field(default_factory=list)
