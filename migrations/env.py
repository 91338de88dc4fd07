"""Alembic environment: the URL comes from the caller's config or from Quanta's settings."""

from alembic import context
from sqlalchemy import Connection

import quanta.models  # noqa: F401  (registers every table on Base.metadata)
from quanta.core.config import get_settings
from quanta.core.db import Base, create_db_engine
from quanta.queries.models import PARTITION_NAME_RE

config = context.config
target_metadata = Base.metadata


def _configure(connection: Connection | None = None, url: str | None = None) -> None:
    context.configure(
        connection=connection,
        url=url,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds tables where needed.
        render_as_batch=True,
        compare_type=True,
        include_name=_include_name,
    )


def _include_name(name: str | None, type_: str, _parent_names: object) -> bool:
    # PostgreSQL time partitions of the bucket tables are created at run time, not modelled.
    return not (type_ == "table" and name is not None and PARTITION_NAME_RE.fullmatch(name))


def run_offline() -> None:
    """Emit SQL without a database connection (`alembic upgrade --sql`)."""
    _configure(url=config.get_main_option("sqlalchemy.url") or get_settings().database_url_resolved)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    """Apply migrations on a live connection (the one given by `quanta migrate`, or a new one)."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection=connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_db_engine(get_settings())
    with engine.connect() as conn:
        _configure(connection=conn)
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
