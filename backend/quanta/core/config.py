"""The one place configuration is read: environment (QUANTA_*), then `.env`."""

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from quanta.analysis.grouping import parse_rules

REPO_ROOT = Path(__file__).resolve().parents[3]
MIN_PRODUCTION_TOKEN_LENGTH = 24
PLACEHOLDER_MARKERS = ("change-me", "changeme", "example")


class Settings(BaseSettings):
    """Every setting of the server and the worker, read from QUANTA_* variables."""

    model_config = SettingsConfigDict(env_prefix="QUANTA_", env_file=".env", extra="ignore")

    env: Literal["development", "test", "production"] = "development"
    data_dir: Path = Field(
        default=Path(".quanta"),
        description="Where the embedded defaults keep their files (SQLite store, broker).",
    )
    database_url: str | None = Field(
        default=None, description="sqlite:///path or postgresql+psycopg://...; default SQLite."
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
    ingest_requeue_after_seconds: int = 300

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
    example_max_chars: int = Field(
        default=10_000, ge=100, description="Examples longer than this are cut (and flagged)."
    )

    # Sessions on monitored servers (EXPLAIN, profiles, schema snapshots).
    monitored_connect_timeout_seconds: int = Field(default=5, ge=1)
    monitored_statement_timeout_seconds: float = Field(
        default=10.0, gt=0, description="Any one statement on a monitored server stops after this."
    )
    monitored_profile_runs: int = Field(default=3, ge=1, le=20)

    worker_concurrency: int = 2
    sqlite_busy_timeout_ms: int = 30_000

    @field_validator("grouping_rules")
    @classmethod
    def _valid_grouping_rules(cls, rules: list[str]) -> list[str]:
        parse_rules(rules)  # a ValueError names the bad rule
        return rules

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
        return f"sqla+sqlite:///{(self.data_dir / 'broker.db').resolve()}"


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
