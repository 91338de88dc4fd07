"""The per-test store copied from a template (tests/fixtures/store.py) is the store that
running the migrations gives: same tables, indexes, constraints and revision."""

import sqlite3
import uuid
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory

from quanta.core.config import Settings
from quanta.core.migrate import alembic_config, upgrade_to_head
from tests.fixtures.servers import PostgresServer
from tests.fixtures.store import migrate_store


def head(settings: Settings) -> str:
    revision = ScriptDirectory.from_config(alembic_config(settings)).get_current_head()
    assert revision is not None
    return revision


def sqlite_schema(path: Path) -> tuple[set[tuple[str, str, frozenset[str]]], list[str]]:
    """Every object with the lines of its CREATE statement (a batch rebuild may reorder a
    table's constraints between two runs of the same migrations), and the revision."""
    with sqlite3.connect(path) as conn:
        objects = {
            (kind, name, frozenset(line.strip(" ,\t") for line in (text or "").splitlines()))
            for kind, name, text in conn.execute("SELECT type, name, sql FROM sqlite_master")
        }
        revision = [row[0] for row in conn.execute("SELECT version_num FROM alembic_version")]
    conn.close()
    return objects, revision


def test_a_sqlite_copy_is_the_migrated_store(tmp_path: Path) -> None:
    copied = Settings(env="test", data_dir=tmp_path / "copied", database_url=None)
    migrated = Settings(env="test", data_dir=tmp_path / "migrated", database_url=None)
    migrate_store(copied)
    upgrade_to_head(migrated)
    copy_schema = sqlite_schema(copied.data_dir / "quanta.db")
    assert copy_schema == sqlite_schema(migrated.data_dir / "quanta.db")
    assert copy_schema[1] == [head(copied)]
    assert len(copy_schema[0]) > 20
    assert (copied.data_dir / "quanta.db").stat().st_mode & 0o777 == 0o600
    assert copied.data_dir.stat().st_mode & 0o777 == 0o700


def test_a_store_that_is_not_new_is_migrated_in_place(tmp_path: Path) -> None:
    settings = Settings(env="test", data_dir=tmp_path / "data", database_url=None)
    upgrade_to_head(settings)
    with sqlite3.connect(settings.data_dir / "quanta.db") as conn:
        conn.execute("CREATE TABLE kept (name TEXT)")
        conn.execute("INSERT INTO kept VALUES ('row')")
    conn.close()
    migrate_store(settings)  # a no-op upgrade, not a copy over what is there
    with sqlite3.connect(settings.data_dir / "quanta.db") as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM kept")]
    conn.close()
    assert names == ["row"]


def postgres_schema(server: PostgresServer, database: str) -> tuple[set[tuple[str, ...]], ...]:
    with server.connect(database) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable, "
            "coalesce(column_default, '') FROM information_schema.columns "
            "WHERE table_schema = 'public'"
        ).fetchall()
        indexes = conn.execute(
            "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
        ).fetchall()
        constraints = conn.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
            "FROM pg_constraint WHERE connamespace = 'public'::regnamespace"
        ).fetchall()
        revision = conn.execute("SELECT version_num FROM alembic_version").fetchall()
    return set(columns), set(indexes), set(constraints), set(revision)


@pytest.mark.services
def test_a_postgresql_copy_is_the_migrated_store(postgres_server: PostgresServer) -> None:
    suffix = uuid.uuid4().hex[:12]
    copied = Settings(database_url=postgres_server.create_database(f"copied_{suffix}"))
    migrated = Settings(database_url=postgres_server.create_database(f"migrated_{suffix}"))
    migrate_store(copied)
    upgrade_to_head(migrated)
    copy_schema = postgres_schema(postgres_server, f"copied_{suffix}")
    assert copy_schema == postgres_schema(postgres_server, f"migrated_{suffix}")
    assert copy_schema[3] == {(head(copied),)}
    assert len(copy_schema[0]) > 100
