"""The agent's configuration: one settings class read from YAML, environment and flags.

Precedence, highest first: command-line flags (``--set key.path=value`` and the named
flags), environment variables (``QUANTA_`` prefix, ``__`` between nested keys, e.g.
``QUANTA_INSTANCES__DB1__DSN``), the YAML file given with ``--config``, defaults.
Nested keys are merged, so an environment variable can change one key of an instance
that the YAML file describes.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from quanta.analysis.tags import DEFAULT_TAG_KEYS
from quanta_agent.policy import MAX_QUERY_LENGTH, ExamplePolicy

DEFAULT_SPOOL_DIR = Path.home() / ".local" / "state" / "quanta-agent"
DEFAULT_SPOOL_MAX_MB = 256.0
# Statements per batch. With buckets, a minute's statements wait in memory until it closes
# (about 400 bytes each: bench/capacity.py's corpus); a minute cut in parts costs the server
# a bucket row per part (4,332 rows for a minute of 60,000 in four parts, 1,128 whole), so
# the bounds let a minute of 1,000 statements a second (24 MB) go whole.
DEFAULT_BATCH_MAX_EVENTS = 100_000
# Uncompressed JSON; the server accepts up to 128 MB decoded and 16 MB compressed.
DEFAULT_BATCH_MAX_BYTES = 8_000_000
DEFAULT_BATCH_MAX_AGE_SECONDS = 5.0
DEFAULT_MINUTE_GRACE_SECONDS = 5.0
DEFAULT_POLL_INTERVAL_SECONDS = 60.0
DEFAULT_SHUTDOWN_TIMEOUT_SECONDS = 10.0
DEFAULT_STATUS_INTERVAL_SECONDS = 60.0
DEFAULT_PROGRESS_LOG_INTERVAL_SECONDS = 300.0
MEGABYTE = 1024 * 1024

InstanceName = Annotated[
    str, StringConstraints(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._:@-]+$")
]
# As the server takes them (quanta.core.names.Labels): a refused status report would stop
# the agent's reports.
LabelKey = Annotated[
    str, StringConstraints(pattern=r"^[a-z_][a-z0-9_.\-]*$", min_length=1, max_length=32)
]
Labels = Annotated[
    dict[LabelKey, Annotated[str, StringConstraints(min_length=1, max_length=100)]],
    Field(max_length=20),
]


class ConfigError(Exception):
    """The configuration is unreadable or invalid; the message says where and why."""


class Source(enum.StrEnum):
    """What the agent collects from an instance: the members are
    :data:`quanta.analysis.sources.SOURCES` (a test pins them; mypy cannot read an enum built
    from a tuple)."""

    SLOWLOG = "slowlog"
    PERFSCHEMA = "perfschema"
    STATS = "stats"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SlowLogSettings(_Section):
    """How to tail one instance's slow log.

    Attributes:
        path: The log file; default: the server's @@slow_query_log_file (relative to
            @@datadir), re-read every ``refresh_interval`` seconds to follow a change.
        from_start: With no checkpoint yet, read the file from its beginning (history)
            instead of from its end. A checkpoint always wins.
        check_interval: Seconds between two looks at the file.
        idle_grace: Seconds the file must stay unchanged before its last entry counts as
            complete (the server writes an entry in several writes).
        refresh_interval: Seconds between two reads of @@slow_query_log_file.
        rotate_above_mb: Above this size the agent rotates the log itself (rename to
            ``.old``, then FLUSH NO_WRITE_TO_BINLOG SLOW LOGS); 0 never.
        max_query_length: Longer statements are cut to this many characters and sent
            marked ``truncated``.
    """

    path: Path | None = None
    from_start: bool = False
    check_interval: float = Field(default=0.25, gt=0, le=60)
    idle_grace: float = Field(default=2.0, ge=0, le=3600)
    refresh_interval: float = Field(default=30.0, gt=0)
    rotate_above_mb: float = Field(default=0.0, ge=0)
    max_query_length: int = Field(default=MAX_QUERY_LENGTH, ge=100, le=MAX_QUERY_LENGTH)


class InstanceSettings(_Section):
    """One monitored MySQL/MariaDB server.

    Attributes:
        name: The instance's name in Quanta (default: its key under ``instances``).
        dsn: ``mysql://user:password@host:port/`` of a monitoring account; needed by the
            perfschema and stats sources, to find the slow log and to rotate it.
        sources: What to collect.
        poll_interval: Seconds between two polls of performance_schema and statistics.
        examples: Query text sent: full, masked (literals replaced) or off.
        slowlog: Slow-log tailing options.
        spool_dir: This instance's spool and checkpoint directory (default: the agent's
            ``spool_dir``/``name``).
        spool_max_mb: Size cap of this instance's spool (default: the agent's).
        labels: The instance's labels in Quanta (``{environment: prod, cluster: eu-1}``),
            sent with every status report; they filter, group and route chat.
    """

    name: InstanceName
    dsn: str | None = None
    # NoDecode: "slowlog,perfschema" from the environment is split by the validator below.
    sources: Annotated[tuple[Source, ...], NoDecode] = (
        Source.SLOWLOG,
        Source.PERFSCHEMA,
        Source.STATS,
    )
    poll_interval: float = Field(default=DEFAULT_POLL_INTERVAL_SECONDS, gt=0)
    examples: ExamplePolicy = ExamplePolicy.FULL
    slowlog: SlowLogSettings = SlowLogSettings()
    spool_dir: Path | None = None
    spool_max_mb: float | None = Field(default=None, gt=0)
    labels: Labels = {}

    @field_validator("sources", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        # "slowlog,perfschema" or '["slowlog"]' from an environment variable or a flag.
        if isinstance(value, str) and value.lstrip().startswith("["):
            return yaml.safe_load(value)
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("examples", mode="before")
    @classmethod
    def _yaml_off(cls, value: Any) -> Any:
        # YAML 1.1 reads a bare `off` as false (and `on` as true).
        if isinstance(value, bool):
            return ExamplePolicy.FULL if value else ExamplePolicy.OFF
        return value

    @model_validator(mode="after")
    def _dsn_where_needed(self) -> InstanceSettings:
        needs_dsn = [s.value for s in self.sources if s != Source.SLOWLOG]
        if Source.SLOWLOG in self.sources and self.slowlog.path is None:
            needs_dsn.append("slowlog without slowlog.path")
        if Source.SLOWLOG in self.sources and self.slowlog.rotate_above_mb:
            needs_dsn.append("slowlog.rotate_above_mb")
        if needs_dsn and not self.dsn:
            raise ValueError(f"dsn is required for {', '.join(needs_dsn)}")
        return self


class Wire(enum.StrEnum):
    """What ``run`` ships of the slow log."""

    BUCKETS = "buckets"  # statements folded per minute, as `import` ships them
    EVENTS = "events"  # every statement, as earlier agents did (every server version takes it)


class BatchSettings(_Section):
    """When a batch is cut: whichever limit is reached first.

    Attributes:
        max_events: Statements per batch. With buckets, a minute that holds this many is
            shipped at once (the rest of it follows and adds up on the server).
        max_bytes: Bytes of JSON per event batch (a bucket batch is far smaller).
        max_age: Seconds a statement read waits before it is handed on (to be shipped,
            or with buckets to be folded into its minute).
        wire: ``buckets`` (default) folds the slow log per minute and ships a minute's
            buckets once it closes; ``events`` ships every statement.
        minute_grace: With buckets, seconds after a minute ends before its buckets are
            shipped (entries are logged when a statement ends, a little late).
    """

    max_events: int = Field(default=DEFAULT_BATCH_MAX_EVENTS, ge=1, le=200_000)
    max_bytes: int = Field(default=DEFAULT_BATCH_MAX_BYTES, ge=1000, le=100_000_000)
    max_age: float = Field(default=DEFAULT_BATCH_MAX_AGE_SECONDS, gt=0)
    wire: Wire = Wire.BUCKETS
    minute_grace: float = Field(default=DEFAULT_MINUTE_GRACE_SECONDS, ge=0, le=600)


class AgentSettings(BaseSettings):
    """Everything ``quanta-agent run`` needs; see the module docstring for the sources.

    Attributes:
        server: Base URL of the Quanta server, e.g. ``https://quanta.example.com``.
        token: API token with the ingest scope for these instances.
        spool_dir: Where batches wait for the server, with checkpoints, one folder per
            instance.
        spool_max_mb: Size cap of each instance's spool; above it the oldest batches are
            dropped (and counted in the log).
        batch: Batch limits.
        shutdown_timeout: Seconds SIGTERM leaves to deliver what is spooled before exiting.
        status_interval: Seconds between two status reports of each source to the server
            (version, host, spool, last error): the server calls a source stopped after
            three missed reports.
        progress_log_interval: Seconds between two progress lines per instance at INFO
            (batches shipped, spool, last read of each source); 0: none.
        tag_keys: The tag keys (key=value pairs in statements' comments) minute buckets
            are folded by; the others are dropped before folding. The server keeps its
            own list (its QUANTA_TAG_KEYS, the same default): a key it drops but the agent
            keeps still splits the agent's buckets, and a per-request one (traceparent)
            makes a bucket of every statement.
        instances: Monitored servers by name.
    """

    model_config = SettingsConfigDict(
        env_prefix="QUANTA_", env_nested_delimiter="__", extra="forbid", frozen=True
    )

    server: Annotated[str, StringConstraints(pattern=r"^https?://\S+$")]
    token: Annotated[str, StringConstraints(min_length=1)]
    spool_dir: Path = DEFAULT_SPOOL_DIR
    spool_max_mb: float = Field(default=DEFAULT_SPOOL_MAX_MB, gt=0)
    batch: BatchSettings = BatchSettings()
    shutdown_timeout: float = Field(default=DEFAULT_SHUTDOWN_TIMEOUT_SECONDS, ge=0)
    status_interval: float = Field(default=DEFAULT_STATUS_INTERVAL_SECONDS, ge=1, le=86_400)
    progress_log_interval: float = Field(default=DEFAULT_PROGRESS_LOG_INTERVAL_SECONDS, ge=0)
    tag_keys: list[str] = Field(default=list(DEFAULT_TAG_KEYS))
    instances: dict[str, InstanceSettings] = Field(min_length=1)

    @field_validator("tag_keys")
    @classmethod
    def _lower_tag_keys(cls, keys: list[str]) -> list[str]:
        # As the server reads its QUANTA_TAG_KEYS: keys are compared lower-cased.
        return sorted({key.strip().lower() for key in keys if key.strip()})

    @model_validator(mode="before")
    @classmethod
    def _instance_names(cls, data: Any) -> Any:
        # An instance is named after its key unless it says otherwise.
        if isinstance(data, dict) and isinstance(data.get("instances"), dict):
            data["instances"] = {
                key: {"name": key, **value} if isinstance(value, dict) else value
                for key, value in data["instances"].items()
            }
        return data

    @model_validator(mode="after")
    def _spool_holds_batches(self) -> AgentSettings:
        for instance in self.instances.values():
            # A batch is at most batch.max_bytes before compression: one always fits.
            if self.spool_cap_bytes(instance) < self.batch.max_bytes:
                raise ValueError(
                    f"instances.{instance.name}: the spool cap is smaller than one batch "
                    f"(batch.max_bytes = {self.batch.max_bytes}); raise spool_max_mb"
                )
        return self

    def spool_path(self, instance: InstanceSettings) -> Path:
        """The spool and checkpoint directory of one instance."""
        return instance.spool_dir or self.spool_dir / instance.name

    def spool_cap_bytes(self, instance: InstanceSettings) -> int:
        """The spool size cap of one instance, in bytes."""
        return int((instance.spool_max_mb or self.spool_max_mb) * MEGABYTE)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Flags, then environment; :func:`load_settings` adds the YAML file below them."""
        return init_settings, env_settings


class _YamlSource(PydanticBaseSettingsSource):
    """The parsed YAML file, as a settings source below the environment."""

    def __init__(self, settings_cls: type[BaseSettings], data: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self._data = data

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._data)


def load_settings(
    config_file: Path | None, overrides: dict[str, Any] | None = None
) -> AgentSettings:
    """Read the configuration: flags (``overrides``), environment, YAML file, defaults.

    Args:
        config_file: A YAML file, or None for environment and flags only.
        overrides: Nested values from the command line, e.g. ``{"server": "http://q:8000"}``.

    Raises:
        ConfigError: The file cannot be read or the result is invalid.

    Example:
        >>> s = load_settings(None, {"server": "http://q:8000", "token": "t",
        ...                          "instances": {"db1": {"slowlog": {"path": "/s.log"},
        ...                                                "sources": "slowlog"}}})
        >>> s.instances["db1"].name, s.instances["db1"].examples.value
        ('db1', 'full')
    """
    data = _read_yaml(config_file) if config_file else {}

    class Configuration(AgentSettings):  # the name validation errors are reported under
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            return init_settings, env_settings, _YamlSource(settings_cls, data)

    try:
        return Configuration(**(overrides or {}))
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        where = f" in {config_file}" if config_file else ""
        raise ConfigError(f"invalid configuration{where}:\n{exc}") from exc


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level")
    return _lower_instance_keys(data)


def _lower_instance_keys(data: dict[str, Any]) -> dict[str, Any]:
    # Environment variable names are case-insensitive, so QUANTA_INSTANCES__DB1__DSN reaches
    # the key "db1": instance keys are matched in lower case, names keep their case.
    instances = data.get("instances")
    if isinstance(instances, dict):
        data["instances"] = {
            str(key).lower(): {"name": str(key), **value} if isinstance(value, dict) else value
            for key, value in instances.items()
        }
    return data


def read_history(settings: AgentSettings) -> AgentSettings:
    """The same settings with ``slowlog.from_start`` on for every instance (``--from-start``)."""
    instances = {
        key: instance.model_copy(
            update={"slowlog": instance.slowlog.model_copy(update={"from_start": True})}
        )
        for key, instance in settings.instances.items()
    }
    return settings.model_copy(update={"instances": instances})


def parse_assignments(assignments: list[str]) -> dict[str, Any]:
    """Turn ``--set`` flags (``a.b.c=value``, value read as YAML) into nested overrides.

    Raises:
        ConfigError: An assignment has no ``=`` or an empty key.

    Example:
        >>> parse_assignments(["instances.db1.sources=[slowlog]", "batch.max_age=2"])
        {'instances': {'db1': {'sources': ['slowlog']}}, 'batch': {'max_age': 2}}
    """
    result: dict[str, Any] = {}
    for assignment in assignments:
        key, sep, raw = assignment.partition("=")
        parts = [p.strip() for p in key.split(".")]
        if not sep or not all(parts):
            raise ConfigError(f"--set expects key.path=value, got {assignment!r}")
        if parts[0] == "instances" and len(parts) > 1:
            parts[1] = parts[1].lower()
        node = result
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {assignment!r} conflicts with an earlier --set")
        node[parts[-1]] = yaml.safe_load(raw) if raw.strip() else ""
    return result


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Merge nested dicts; values of ``extra`` win."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
