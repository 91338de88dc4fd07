"""Request and response bodies of the instances endpoints.

DSNs come in as ``SecretStr`` so that they never appear in a repr, a log line or a
validation error's echo of the input, and go out only redacted (no password).
"""

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr

from quanta.analysis.sources import QuerySourceName
from quanta.core.names import InstanceName, Labels

ExamplePolicyName = Literal["full", "masked", "off"]

DSN_DESCRIPTION = (
    "DSN of a read-only account, e.g. mysql://quanta_ro:PASSWORD@db1:3306/shop "
    "(or mysql://user:pass@localhost/?unix_socket=/run/mysqld/mysqld.sock); "
    "stored encrypted, shown without its password."
)
TARGET_DESCRIPTION = (
    "DSN of the execution target: a read-only replica or sandbox where ANALYZE and profiles "
    "may execute examples (nothing is executed on the monitored server). Quanta verifies it "
    "read-only (read_only / super_read_only / MariaDB's read_only levels) at every connect "
    "and refuses otherwise. Null: EXPLAIN only. Stored encrypted, shown without its password."
)
BROAD_DESCRIPTION = (
    "Run diagnostics even though an account has privileges beyond SELECT, PROCESS, SHOW VIEW "
    "and REPLICATION CLIENT (see test-connection). Audited."
)
PROFILING_MOVED = (
    "profiling_enabled is gone: profiles and ANALYZE run only on an execution target. Set "
    '"execution_target_dsn" to a read-only replica or sandbox to enable them, null to stop.'
)


def _refuse_profiling_flag(value: bool | None) -> None:
    # Validated as its own field: the error then quotes only this value, never the body
    # (which may hold a DSN with its password).
    if value is not None:
        raise ValueError(PROFILING_MOVED)


ProfilingFlag = Annotated[
    bool | None,
    AfterValidator(_refuse_profiling_flag),
    Field(
        default=None,
        description="Gone (always refused): set execution_target_dsn instead.",
        json_schema_extra={"deprecated": True},
    ),
]


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
    execution_target_dsn: str | None = Field(
        description="The execution target's DSN without its password; null: none (EXPLAIN only)."
    )
    has_execution_target: bool = Field(
        description="An execution target is stored (with execution_target_dsn null: it cannot "
        "be decrypted with the current QUANTA_SECRET_KEY and must be entered again)."
    )
    profiling_enabled: bool = Field(
        description="Read only: profiles and ANALYZE are possible, i.e. an execution target is "
        "configured (they never run on the monitored server)."
    )
    allow_broad_privileges: bool = Field(description=BROAD_DESCRIPTION)
    example_policy: ExamplePolicyName
    primary_source: str | None = Field(
        description="slowlog or perfschema: the source whose buckets count in totals (null: "
        "no query batch yet). Chosen automatically (the slow log once it reports: it sees "
        "prepared statements, per-call latency, users and hosts) unless primary_source_pinned."
    )
    primary_source_pinned: bool = Field(
        description="An admin chose primary_source; the automatic choice no longer changes it."
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels (environment, cluster, ...): filter, group and route chat.",
    )
    created_at: datetime


class InstanceCreate(BaseModel):
    """Register a monitored server (agents also register one by name on first ingest)."""

    model_config = ConfigDict(extra="forbid")

    name: InstanceName
    dsn: SecretStr | None = Field(default=None, description=DSN_DESCRIPTION)
    sandbox_dsn: SecretStr | None = Field(default=None, description=SANDBOX_DESCRIPTION)
    execution_target_dsn: SecretStr | None = Field(default=None, description=TARGET_DESCRIPTION)
    allow_broad_privileges: bool = Field(default=False, description=BROAD_DESCRIPTION)
    example_policy: ExamplePolicyName = "full"

    profiling_enabled: ProfilingFlag = None


class InstanceUpdate(BaseModel):
    """Change some fields of an instance; a field sent as null removes a DSN."""

    model_config = ConfigDict(extra="forbid")

    name: InstanceName | None = Field(
        default=None,
        description="Agents address the instance by name: rename it in their configuration too.",
    )
    dsn: SecretStr | None = Field(default=None, description=DSN_DESCRIPTION)
    sandbox_dsn: SecretStr | None = Field(default=None, description=SANDBOX_DESCRIPTION)
    execution_target_dsn: SecretStr | None = Field(default=None, description=TARGET_DESCRIPTION)
    allow_broad_privileges: bool | None = Field(default=None, description=BROAD_DESCRIPTION)
    example_policy: ExamplePolicyName | None = None
    primary_source: QuerySourceName | None = Field(
        default=None,
        description="Pin the source whose buckets count in totals; null: choose automatically "
        "again (the slow log once it reports).",
    )
    labels: Labels | None = Field(
        default=None,
        description="The instance's labels, all of them ({} removes every label); an agent "
        "whose config has labels sets them again on its next batch.",
    )

    profiling_enabled: ProfilingFlag = None


class CapabilityOut(BaseModel):
    """One thing the connection test checked."""

    name: str
    ok: bool
    detail: str


class ExecutionTargetOut(BaseModel):
    """The execution target as verified now: read-only for Quanta's account, or why not."""

    address: str
    read_only: bool
    detail: str = Field(description="The read-only variables found, or why it is refused.")
    account: str | None = None
    privileges: list[str] = Field(default_factory=list)
    excess_privileges: list[str] = Field(default_factory=list)
    capabilities: list[CapabilityOut] = Field(
        default_factory=list,
        description="What runs on the target (profiles); empty when it is refused.",
    )


class ConnectionTestOut(BaseModel):
    """What the account can do on the server; ``error`` says why when it cannot connect."""

    connected: bool
    error: str | None = None
    flavor: str | None = None
    version: str | None = None
    account: str | None = None
    privileges: list[str] = Field(
        default_factory=list, description="Each grant as 'PRIVILEGE ON level' (SHOW GRANTS)."
    )
    excess_privileges: list[str] = Field(
        default_factory=list,
        description="Privileges beyond SELECT, PROCESS, SHOW VIEW, REPLICATION CLIENT: "
        "diagnostics refuse the account unless allow_broad_privileges is set.",
    )
    capabilities: list[CapabilityOut] = Field(default_factory=list)
    execution_target: ExecutionTargetOut | None = Field(
        default=None, description="The execution target's check; null when none is configured."
    )
