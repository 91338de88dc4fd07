"""The one place configuration is read: environment (QUANTA_*), then `.env`."""

import ipaddress
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from quanta.analysis.grouping import parse_rules
from quanta.analysis.impact import parse_window
from quanta.analysis.tags import DEFAULT_TAG_KEYS
from quanta.core.sources import ENV_FILE, ENV_PREFIX

REPO_ROOT = Path(__file__).resolve().parents[3]
MIN_PRODUCTION_TOKEN_LENGTH = 24
PLACEHOLDER_MARKERS = ("change-me", "changeme", "example")
BROKER_FILE = "broker.db"


class Settings(BaseSettings):
    """Every setting of the server and the worker, read from QUANTA_* variables."""

    # The only sources (quanta.core.sources tells whether either exists without this class).
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_file=ENV_FILE, extra="ignore")

    env: Literal["development", "test", "production"] = "development"
    data_dir: Path = Field(
        default=Path(".quanta"),
        description="Where the embedded defaults keep their files (SQLite store, broker).",
    )
    database_url: str | None = Field(
        default=None, description="sqlite:///path or postgresql+psycopg://...; default SQLite."
    )
    database_parallel_workers: int = Field(
        default=0,
        ge=0,
        description="PostgreSQL's parallel workers per query (max_parallel_workers_per_gather) "
        "for Quanta's sessions. 0: on a small host they compete with the API and the workers "
        "(the 30-day top list took 190 ms with 2 where it took 125 ms without, on 2 cores); "
        "raise it on a host with cores to spare.",
    )
    redis_url: str | None = Field(
        default=None, description="redis://... to use Redis as the Celery broker."
    )
    host: str = "127.0.0.1"
    port: int = 8000
    admin_token: SecretStr | None = Field(
        default=None, description="Bootstrap admin token; generated on first start when unset."
    )
    secret_key: SecretStr | None = Field(
        default=None,
        description="Fernet key that encrypts stored credentials (DSNs, webhook URLs); "
        "generated into data_dir/secret.key when unset (required in production).",
    )
    ui_dist: Path = REPO_ROOT / "frontend" / "dist"

    ingest_max_body_bytes: int = 16 * 1024 * 1024
    ingest_max_decoded_bytes: int = 128 * 1024 * 1024
    ingest_max_events: int = 50_000
    ingest_max_values: int = Field(
        default=3_000_000,
        ge=1,
        description="JSON values (list items, object members) a batch may hold, counted "
        "before it is validated: bounds the memory one request can cost (some 55 bytes a "
        "value while pydantic validates). A 50,000-event batch with every extended field "
        "holds under 2 million; `quanta-agent import` sends about 190,000.",
    )
    ingest_requeue_after_seconds: int = 300
    ingest_max_attempts: int = Field(
        default=5,
        ge=1,
        description="Processing attempts of a batch before it is marked failed (a batch that "
        "fails or kills its worker every time is not re-queued for ever).",
    )
    agent_silence_seconds: int = Field(
        default=300,
        ge=30,
        description="A source from which nothing (batch or agent status) arrived for this "
        "long, or three of its agent's report intervals if longer, is shown as stopped.",
    )

    # Query classes an instance may add (quanta.queries.classes): past either cap, new
    # statement shapes are counted under one "other queries" class per schema.
    max_classes_per_instance: int = Field(
        default=20_000,
        ge=1,
        description="Query classes an instance may have in the store; statements of new "
        "shapes past it are counted (exactly) under 'other queries', without examples or advice.",
    )
    max_new_classes_per_hour: int = Field(
        default=5_000,
        ge=1,
        description="Query classes an instance may add per hour (wall clock), so that a burst "
        "of junk statements cannot use the whole cap at once.",
    )

    # Query tags from SQL comments (quanta.analysis.tags): the keys kept, and how many
    # distinct values each may have per instance (later ones are stored as "other").
    tag_keys: list[str] = Field(
        default=list(DEFAULT_TAG_KEYS),
        description="Tag keys kept from statements' comments, as a JSON list; others are "
        "dropped. Leave per-request ids (traceparent) out: every value is a dimension.",
    )
    tag_values_per_key: int = Field(
        default=100,
        ge=1,
        description="Distinct values a tag key may have per instance; later values are "
        "stored as 'other', so a request id in a comment cannot flood the store.",
    )

    default_range_hours: int = 24
    sparkline_points: int = 60
    # PATTERN=REPLACEMENT rules that merge names into one query class, e.g. sharded tables:
    # QUANTA_GROUPING_RULES='["orders_[0-9]+=orders_N"]' (see quanta.analysis.grouping).
    grouping_rules: list[str] = []

    # Metric store: how long each bucket resolution is kept (beat deletes older buckets).
    retention_minute_days: int = Field(default=2, ge=1)
    retention_hour_days: int = Field(default=30, ge=1)
    retention_day_days: int = Field(default=365, ge=1)
    store_maintenance_seconds: int = Field(
        default=3600, ge=60, description="How often beat applies retention and adds partitions."
    )
    rollup_interval_seconds: float = Field(
        default=30.0,
        gt=0,
        description="How often beat rolls the minutes of ended hours up into hours, days and "
        "totals (see quanta.queries.rollup).",
    )
    rollup_grace_seconds: float = Field(
        default=120.0,
        ge=0,
        description="How long an hour's minutes wait for their roll-up once due (their hour "
        "ended, or they came after it) and quiet (no minutes of that hour came since): "
        "minutes arriving meanwhile add to the hour once, not each.",
    )
    example_max_chars: int = Field(
        default=10_000, ge=100, description="Examples longer than this are cut (and flagged)."
    )

    # Sessions on monitored servers (EXPLAIN, profiles, schema snapshots).
    monitored_connect_timeout_seconds: int = Field(default=5, ge=1)
    monitored_statement_timeout_seconds: float = Field(
        default=10.0, gt=0, description="Any one statement on a monitored server stops after this."
    )
    monitored_profile_runs: int = Field(default=3, ge=1, le=20)

    # Chat notifications (quanta.notify): links in messages, rate limit, delivery retries.
    public_url: str | None = Field(
        default=None,
        description="Where users reach this Quanta; messages link to {public_url}/queries/... "
        "Default: the address it serves (QUANTA_HOST, QUANTA_PORT; a wildcard host reads as "
        "127.0.0.1): set it when users go through a proxy or a DNS name.",
    )
    notify_max_per_hour: int = Field(
        default=10, ge=1, description="Messages per channel per hour; the rest go in a digest."
    )
    notify_max_attempts: int = Field(
        default=6, ge=1, le=50, description="HTTP attempts per delivery before it is failed."
    )
    notify_backoff_base_seconds: float = Field(
        default=30.0, gt=0, description="First retry delay; it doubles on each further retry."
    )
    notify_backoff_max_seconds: float = Field(default=3600.0, gt=0)
    notify_retry_after_max_seconds: float = Field(
        default=3600.0, gt=0, description="Cap on a service's Retry-After before a retry."
    )
    notify_timeout_seconds: float = Field(default=10.0, gt=0)
    allow_private_webhooks: bool = Field(
        default=False,
        description="Allow channel URLs on loopback, link-local, private, multicast or "
        "unspecified addresses (a chat server on the internal network); off: refused.",
    )
    notify_tick_seconds: float = Field(
        default=60.0, ge=1, description="How often beat flushes digests and requeues lost sends."
    )
    notify_requeue_after_seconds: int = Field(
        default=300, ge=30, description="A delivery this overdue lost its task: enqueue again."
    )

    # Schema snapshots and index advice (quanta.tables, quanta.advice).
    schema_snapshot_max_age_hours: int = Field(
        default=24, ge=1, description="A table's snapshot is read again when older than this."
    )
    snapshot_refresh_min_seconds: int = Field(
        default=300,
        ge=0,
        description="A schema statement seen in ingest (or a plan using an unknown index) "
        "re-reads a table's snapshot at most once per this many seconds; a later one waits "
        "for the end of the window.",
    )
    advice_top_queries: int = Field(
        default=20, ge=1, description="Daily, each instance's top N queries by load are advised."
    )
    advice_refresh_seconds: int = Field(
        default=86_400, ge=600, description="How often beat refreshes snapshots and advice."
    )
    advice_hot_check_seconds: int = Field(
        default=60,
        ge=10,
        description="How often beat looks for queries whose load share crossed a chat "
        "channel's minimum (or QUANTA_ADVICE_HOT_MIN_LOAD_SHARE) and EXPLAINs and advises them.",
    )
    advice_hot_min_load_share: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="Load share over the last hour from which a query is advised at once when "
        "no enabled chat channel takes suggestions for its instance.",
    )
    advice_sandbox_sample_rows: int = Field(
        default=1_000,
        ge=100,
        le=100_000,
        description="Rows copied per user table the example names (SELECT ... LIMIT) to the "
        "sandbox to compare plans. Enough for the optimizer to choose between a scan and an "
        "index; every row is production data on another server, so keep it small.",
    )

    # Workload index plans (quanta.indexplan): per table, the fewest indexes for the most load.
    index_plan_window_hours: int = Field(
        default=24,
        ge=1,
        le=24 * 30,
        description="The past window an index plan weighs queries over.",
    )
    index_plan_max_queries: int = Field(
        default=200,
        ge=1,
        le=5_000,
        description="An index plan weighs each instance's N heaviest queries of the window.",
    )
    index_plan_max_new_indexes: int = Field(
        default=3, ge=1, le=20, description="At most this many new indexes per table in a plan."
    )
    index_plan_width_budget_bytes: int | None = Field(
        default=None,
        ge=1,
        description="Bytes per row a table's new indexes may add in total (none: no budget).",
    )
    index_plan_drop_redundant: bool = Field(
        default=True, description="Plans propose dropping existing indexes they make redundant."
    )

    # Diagnostics (quanta.diagnostics): EXPLAIN and profiles of real examples, daily automatic.
    diagnostics_example_days: int = Field(
        default=7, ge=1, description="Examples seen this many days back are candidates."
    )
    diagnostics_profile_examples: int = Field(
        default=3, ge=1, le=20, description="Distinct examples a profile runs (each N times)."
    )
    diagnostics_dedupe_seconds: int = Field(
        default=300, ge=0, description="A request while one this recent is queued reuses it."
    )
    diagnostics_auto_interval_seconds: int = Field(
        default=86_400, ge=60, description="How often beat EXPLAINs each instance's top queries."
    )
    diagnostics_auto_top_queries: int = Field(
        default=10, ge=0, le=500, description="Top queries by load of the last day, per instance."
    )
    diagnostics_auto_fresh_hours: int = Field(
        default=24, ge=1, description="A query with a run this recent is not run again by beat."
    )

    # Annotations (quanta.annotations): when a change in the impact view is significant.
    annotation_impact_alpha: float = Field(
        default=0.01, gt=0, lt=1, description="Mann-Whitney U p-value below which it is real."
    )
    annotation_impact_min_change: float = Field(
        default=0.10, ge=0, description="...and the relative change at least this (0.10 = 10%)."
    )
    annotation_impact_min_load_change: float = Field(
        default=0.001, ge=0, description="...and a load change at least this (active sessions)."
    )
    annotation_impact_min_latency_change: float = Field(
        default=0.001, ge=0, description="...and a latency change at least this (seconds)."
    )
    annotation_impact_max_slots: int = Field(
        default=360, ge=10, description="Most buckets per window (360: minutes up to 6 h)."
    )
    annotation_announce_window: str = Field(
        default="1h",
        description="Regressions after an annotation go to chat once this window after it "
        "is over (5m..7d).",
    )
    annotation_announce_check_seconds: int = Field(
        default=900, ge=60, description="How often beat looks for annotations to announce."
    )
    annotation_impact_max_queries: int = Field(
        default=1000, ge=1, description="Most queries an impact answer lists (largest first)."
    )

    # Regressions (quanta.regressions): per query, recent cost per call against its baseline.
    regression_baseline_minutes: int = Field(
        default=10_080,
        ge=2,
        le=60 * 24 * 90,
        description="The baseline a query's recent minutes are compared with: this many "
        "minutes before them (7 days; seasonal by hour of day once 3 days have the hour).",
    )
    regression_min_minutes: int = Field(
        default=15,
        ge=1,
        le=360,
        description="A regression must be sustained this many minutes to be reported, and "
        "be back within its baseline as long to be resolved; an annotation's impact needs as "
        "many minutes after it before it gives a verdict.",
    )
    regression_cause_minutes: int = Field(
        default=60,
        ge=1,
        le=60 * 24 * 7,
        description="Schema statements and annotations this many minutes before a regression "
        "started (and until it was found) are candidates for its cause.",
    )
    regression_check_seconds: int = Field(
        default=60, ge=1, description="How often beat looks for regressions and resolutions."
    )
    regression_min_ratio: float = Field(
        default=2.0, gt=1, description="A regression costs at least this many times as much."
    )
    regression_min_latency_change: float = Field(
        default=0.001, ge=0, description="...and at least this much more per call (seconds)."
    )
    regression_alpha: float = Field(
        default=0.01,
        gt=0,
        lt=1,
        description="...and a one-sided Mann-Whitney U test on per-minute values below this.",
    )
    regression_min_load_share: float = Field(
        default=0.01,
        ge=0,
        le=1,
        description="Only queries with this share of their instance's load in the window...",
    )
    regression_min_active_sessions: float = Field(
        default=0.1, ge=0, description="...or this load on their own (average active sessions)."
    )

    # Access control and hardening (quanta.auth, quanta.audit, quanta.core.http).
    session_max_age_seconds: int = Field(
        default=12 * 3600, ge=60, description="A UI sign-in lasts this long, then asks again."
    )
    cookie_secure: Literal["auto"] | bool = Field(
        default="auto",
        description="Mark session cookies Secure: true, false, or auto (when the request came "
        "over https, as seen directly or through X-Forwarded-Proto of a trusted proxy).",
    )
    trusted_proxies: list[str] = Field(
        default=[],
        description="Addresses or CIDRs of reverse proxies whose X-Forwarded-For and "
        'X-Forwarded-Proto are believed, e.g. \'["127.0.0.1", "10.0.0.0/8"]\'; default '
        "none: the peer's own address is the client's (rate limits, audit).",
    )
    token_touch_seconds: int = Field(
        default=60, ge=1, description="A token's last_used_at is written at most this often."
    )
    password_min_length: int = Field(default=10, ge=8)
    http_max_body_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="Largest request body outside ingest (ingest has ingest_max_body_bytes).",
    )
    cors_allow_origins: list[str] = Field(
        default=[], description="Origins a browser may call the API from; default none (closed)."
    )
    # A default rate limit is not validated (a test parses each): the validator imports
    # `limits` and asyncio, a tenth of the start-up of every command, `quanta digest` included.
    login_rate_limit: str = Field(
        default="10/minute",
        description="Sign-in attempts per user name from one client address.",
        validate_default=False,
    )
    login_address_rate_limit: str = Field(
        default="30/minute",
        description="Sign-in attempts per client address, whatever the name.",
        validate_default=False,
    )
    ingest_rate_limit: str = Field(
        default="1200/minute",
        description="Ingest requests per token (agents send batches).",
        validate_default=False,
    )
    audit_max_rows: int = Field(default=500, ge=1, description="Most audit entries per page.")

    # Operations (quanta.core.observability): logs, Prometheus metrics, recovery of lost tasks.
    log_format: Literal["json", "console"] | None = Field(
        default=None, description="json or console; default console, json in production."
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    metrics_enabled: bool = Field(default=True, description="Serve Prometheus metrics.")
    metrics_path: str = Field(default="/metrics", pattern=r"^/[A-Za-z0-9/_.-]*$")
    metrics_require_token: bool = Field(
        default=False, description="Ask /metrics for a read token (Prometheus norm: open)."
    )
    metrics_dir: Path | None = Field(
        default=None,
        description="Directory the API, worker and beat processes share their metrics in "
        "(Prometheus multiprocess mode); default data_dir/metrics.",
    )
    ingest_requeue_check_seconds: float = Field(
        default=60.0, ge=1, description="How often beat looks for batches whose task was lost."
    )

    # Statistics (quanta.statistics): an index is called unused only after this many minutes
    # of table and index statistics without a gap or a counter reset (a week by default).
    index_unused_min_minutes: float = Field(
        default=7 * 24 * 60,
        gt=0,
        description="Minutes of uninterrupted index statistics before an index with no reads "
        "is called unused (small installs and tests can use minutes, or a fraction of one).",
    )
    index_unused_min_days: int | None = Field(
        default=None,
        ge=1,
        description="The old name, in days: read when QUANTA_INDEX_UNUSED_MIN_MINUTES is not set.",
    )
    index_review_announce_seconds: int = Field(
        default=7 * 24 * 3600,
        ge=60,
        description="How often beat posts new index review findings to the channels that "
        "take the index_review event (weekly).",
    )

    worker_concurrency: int = 2
    sqlite_busy_timeout_ms: int = 30_000

    @field_validator("grouping_rules")
    @classmethod
    def _valid_grouping_rules(cls, rules: list[str]) -> list[str]:
        parse_rules(rules)  # a ValueError names the bad rule
        return rules

    @field_validator("tag_keys")
    @classmethod
    def _lower_tag_keys(cls, keys: list[str]) -> list[str]:
        return sorted({key.strip().lower() for key in keys if key.strip()})

    @field_validator("annotation_announce_window")
    @classmethod
    def _valid_announce_window(cls, window: str) -> str:
        parse_window(window)  # a ValueError says which lengths are accepted
        return window

    @field_validator("trusted_proxies")
    @classmethod
    def _valid_trusted_proxies(cls, proxies: list[str]) -> list[str]:
        for proxy in proxies:
            try:
                ipaddress.ip_network(proxy.strip(), strict=False)
            except ValueError:
                raise ValueError(
                    f"QUANTA_TRUSTED_PROXIES: {proxy!r} is not an IP address or CIDR "
                    "(e.g. 10.0.0.5 or 10.0.0.0/8)"
                ) from None
        return [proxy.strip() for proxy in proxies]

    @field_validator("login_rate_limit", "login_address_rate_limit", "ingest_rate_limit")
    @classmethod
    def _valid_rate_limit(cls, value: str) -> str:
        from limits import parse  # here: the agent installs no server extras

        parse(value)  # a ValueError says what a limit looks like: "10/minute"
        return value

    @model_validator(mode="after")
    def _unused_minutes_from_days(self) -> "Settings":
        # QUANTA_INDEX_UNUSED_MIN_DAYS predates the minutes: honoured unless minutes are set.
        if self.index_unused_min_days is not None and (
            "index_unused_min_minutes" not in self.model_fields_set
        ):
            self.index_unused_min_minutes = self.index_unused_min_days * 24 * 60
        return self

    @model_validator(mode="after")
    def _refuse_placeholder_secrets(self) -> "Settings":
        if self.env != "production":
            return self
        if self.secret_key is None:
            raise ValueError(
                "QUANTA_SECRET_KEY is required in production: generate one with "
                "`python -c 'from cryptography.fernet import Fernet; "
                "print(Fernet.generate_key().decode())'`."
            )
        _refuse_weak_secret_key(self.secret_key.get_secret_value())
        if self.admin_token is None:
            return self
        token = self.admin_token.get_secret_value()
        if len(token) < MIN_PRODUCTION_TOKEN_LENGTH or any(
            marker in token.lower() for marker in PLACEHOLDER_MARKERS
        ):
            raise ValueError(
                "QUANTA_ADMIN_TOKEN looks like a placeholder: in production use at least "
                f"{MIN_PRODUCTION_TOKEN_LENGTH} random characters (e.g. `openssl rand -hex 24`)."
            )
        return self

    @property
    def link_base(self) -> str:
        """The base of links in chat messages: QUANTA_PUBLIC_URL, or the address served."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        if ":" in host:  # an IPv6 literal
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    @property
    def database_url_resolved(self) -> str:
        """The store's SQLAlchemy URL: the configured one, or the embedded SQLite file."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'quanta.db').resolve()}"

    @property
    def broker_url(self) -> str:
        """Redis when configured; otherwise kombu's SQLAlchemy transport on a SQLite file."""
        if self.redis_url:
            return self.redis_url
        return f"sqla+sqlite:///{(self.data_dir / BROKER_FILE).resolve()}"


# A random 32-byte key has ~30 distinct bytes (fewer than 18: odds below 1e-8); a key typed
# or derived from text (hex digits, repeated characters) has far fewer.
MIN_SECRET_KEY_DISTINCT_BYTES = 18


def _refuse_weak_secret_key(key: str) -> None:
    """Refuse a secret key that is a placeholder, not a Fernet key, or visibly not random."""
    import base64
    import binascii

    if any(marker in key.lower() for marker in PLACEHOLDER_MARKERS):
        raise ValueError("QUANTA_SECRET_KEY looks like a placeholder: generate a real key.")
    try:
        raw = base64.urlsafe_b64decode(key.encode())
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        raise ValueError(
            "QUANTA_SECRET_KEY is not a Fernet key (32 url-safe base64-encoded bytes): "
            "generate one with `python -c 'from cryptography.fernet import Fernet; "
            "print(Fernet.generate_key().decode())'`."
        )
    if len(set(raw)) < MIN_SECRET_KEY_DISTINCT_BYTES:
        raise ValueError(
            "QUANTA_SECRET_KEY is not random (too few distinct bytes): generate a real key."
        )


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
