"""Database engine, sessions and the declarative base shared by every domain."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import DateTime, Engine, MetaData, create_engine, event, make_url
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import TypeDecorator

from quanta.core.config import Settings
from quanta.core.files import ensure_data_dir, private_sqlite_store

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base; the naming convention keeps migrations stable across databases."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored as naive UTC (SQLite has no time zones) and read back UTC-aware."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


class floor_hour(FunctionElement[datetime]):  # noqa: N801 (an SQL function, named as one)
    """The start of the hour holding a UTCDateTime column, in SQL (a rolled-up row's time)."""

    type = UTCDateTime()
    inherit_cache = True


class floor_day(FunctionElement[datetime]):  # noqa: N801
    """The start of the day holding a UTCDateTime column, in SQL."""

    type = UTCDateTime()
    inherit_cache = True


# SQLite keeps times as text in SQLAlchemy's format: the floor is that text, so that it
# groups with the stored rows of the hour or day.
_SQLITE_FLOOR = {"floor_hour": "%Y-%m-%d %H:00:00.000000", "floor_day": "%Y-%m-%d 00:00:00.000000"}


@compiles(floor_hour, "postgresql")
@compiles(floor_day, "postgresql")
def _floor_postgresql(element: FunctionElement[datetime], compiler: SQLCompiler, **kw: Any) -> str:
    unit = "hour" if isinstance(element, floor_hour) else "day"
    return f"date_trunc('{unit}', {compiler.process(element.clauses, **kw)})"


@compiles(floor_hour, "sqlite")
@compiles(floor_day, "sqlite")
def _floor_sqlite(element: FunctionElement[datetime], compiler: SQLCompiler, **kw: Any) -> str:
    pattern = _SQLITE_FLOOR[type(element).__name__]
    return f"strftime('{pattern}', {compiler.process(element.clauses, **kw)})"


def utcnow() -> datetime:
    """The current time, UTC-aware."""
    return datetime.now(UTC)


def create_db_engine(settings: Settings) -> Engine:
    """An engine for the configured store; SQLite gets WAL and a busy timeout for concurrency."""
    url = settings.database_url_resolved
    if url.startswith("postgresql"):
        # psycopg prepares a statement run five times, and PostgreSQL then switches to a
        # generic plan, blind to the time range and filters: the 30-day top list went from
        # 0.2 to 0.55 s on its eleventh call. Always plan with the real values.
        parallel = f"-c max_parallel_workers_per_gather={settings.database_parallel_workers}"
        options = {"options": f"-c plan_cache_mode=force_custom_plan {parallel}"}
        return create_engine(url, pool_pre_ping=True, connect_args=options)
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True)
    _private_sqlite_file(settings, url)
    engine = create_engine(url, connect_args={"timeout": settings.sqlite_busy_timeout_ms / 1000})
    busy_timeout_ms = settings.sqlite_busy_timeout_ms

    @event.listens_for(engine, "connect")
    def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        # WAL lets the API read while the worker writes; the busy timeout makes writers queue.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    return engine


def _private_sqlite_file(settings: Settings, url: str) -> None:
    """The data directory 0700 and the SQLite file 0600 (its WAL files follow), before any
    connection creates them with the umask's mode."""
    ensure_data_dir(settings)
    database = make_url(url).database
    if database and database != ":memory:" and not database.startswith("file:"):
        path = Path(database)
        path.parent.mkdir(parents=True, exist_ok=True)
        private_sqlite_store(path)


def create_session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded objects usable after commit."""
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """The one place a unit of work commits, or rolls back on any error."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def run_after_commit(session: Session, callback: Callable[[], None]) -> None:
    """Call `callback` once this session's transaction has committed, never before.

    Used to enqueue work that reads what the transaction wrote (convention: enqueue only
    after the commit that created the task's input).
    """

    @event.listens_for(session, "after_commit", once=True)
    def _after_commit(_session: Session) -> None:
        callback()
