"""`quanta user ...` on a migrated SQLite store: one-line confirmations, exit codes, the
last-admin refusal, sessions ended, and the audit entries (no secrets). A few commands run as
real processes (stdin, exit code, stdout apart from stderr); the rest run in-process through
the same Typer app, which spares a Python start-up per command."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner

from quanta.audit.models import AuditEntry
from quanta.cli import app as cli
from quanta.core.config import Settings, get_settings
from quanta.core.db import session_scope
from quanta.main import create_app
from tests.fixtures.store import migrate_store

QUANTA = str(Path(sys.executable).parent / "quanta")
PASSWORD = "correct horse battery"
NEW_PASSWORD = "another long passphrase"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A migrated store the CLI and an in-process app share."""
    path = tmp_path / "data"
    migrate_store(Settings(env="test", data_dir=path, database_url=None))
    return path


@pytest.fixture
def app_client(data_dir: Path) -> Iterator[TestClient]:
    """The API on the same store, without a token: a browser that signs in."""
    app = create_app(Settings(env="test", data_dir=data_dir, database_url=None))
    with TestClient(app) as client:
        yield client
    app.state.engine.dispose()


@pytest.fixture
def cli_env(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The environment of an in-process `quanta`: the test's store only, settings read anew."""
    for key in [k for k in os.environ if k.startswith("QUANTA_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("QUANTA_ENV", "test")
    monkeypatch.setenv("QUANTA_DATA_DIR", str(data_dir))
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def quanta(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`quanta user ARGS` in this process (see `cli_env`), as a finished process would show."""
    result = CliRunner().invoke(cli, ["user", *args], input=stdin)
    # Only an exit (typer.Exit, a usage error) ends a command: a crash fails the test.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return subprocess.CompletedProcess(
        ["quanta", "user", *args], result.exit_code, result.stdout, result.stderr
    )


def quanta_process(data_dir: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`quanta user ARGS` as a real process on the test's store."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUANTA_")}
    env.update(QUANTA_ENV="test", QUANTA_DATA_DIR=str(data_dir))
    return subprocess.run(
        [QUANTA, "user", *args],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def signs_in(client: TestClient, name: str, password: str) -> bool:
    response = client.post("/api/v1/auth/login", json={"name": name, "password": password})
    return response.status_code == 200


def test_user_commands(data_dir: Path, app_client: TestClient, cli_env: None) -> None:
    ok(
        quanta_process(
            data_dir, "create", "ada", "--role", "admin", "--password-stdin", stdin=PASSWORD
        )
    )
    ok(quanta("create", "bob", "--password-stdin", stdin=PASSWORD))
    rows = [line.split("\t") for line in ok(quanta("list")).splitlines()]
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [
        ("ada", "admin", "active", "0 session(s)"),
        ("bob", "viewer", "active", "0 session(s)"),
    ]

    assert ok(quanta("set-role", "bob", "admin")) == "'bob' is now admin (was viewer)."
    assert signs_in(app_client, "bob", PASSWORD)
    assert app_client.get("/api/v1/me").json()["role"] == "admin"
    assert ok(quanta("disable", "bob")) == "Disabled 'bob'; 1 session(s) ended."
    assert app_client.get("/api/v1/me").status_code == 401
    assert not signs_in(app_client, "bob", PASSWORD)
    assert "\tdisabled " in ok(quanta("list")).splitlines()[1]

    # bob is disabled, so ada is the last active admin.
    refused = quanta_process(data_dir, "set-role", "ada", "viewer")
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "error: Cannot give 'ada' the viewer role: it is the last active admin. "
        "Make another user admin first."
    )
    assert quanta("delete", "ada").returncode == 1
    assert quanta("disable", "ada").returncode == 1
    unknown = quanta("disable", "zed")
    assert (unknown.returncode, unknown.stderr.strip()) == (
        1,
        "error: No user called 'zed': `quanta user list` shows them.",
    )
    bad_role = quanta("set-role", "bob", "root")
    assert bad_role.returncode == 1
    assert "Unknown role 'root'" in bad_role.stderr

    assert ok(quanta("enable", "bob")) == "Enabled 'bob'."
    assert signs_in(app_client, "bob", PASSWORD)

    # A generated password goes alone to stdout; the confirmation to stderr.
    generated = quanta_process(data_dir, "reset-password", "bob")
    assert generated.returncode == 0
    assert generated.stderr.strip() == "Password of 'bob' reset; 1 session(s) ended."
    new_password = generated.stdout.strip()
    assert len(new_password) >= 20
    assert app_client.get("/api/v1/me").status_code == 401
    assert not signs_in(app_client, "bob", PASSWORD)
    assert signs_in(app_client, "bob", new_password)
    chosen = quanta("reset-password", "bob", "--password-stdin", stdin=NEW_PASSWORD)
    assert ok(chosen) == "Password of 'bob' reset; 1 session(s) ended."
    short = quanta("reset-password", "bob", "--password-stdin", stdin="short")
    assert (short.returncode, "at least 10" in short.stderr) == (1, True)

    assert signs_in(app_client, "bob", NEW_PASSWORD)
    assert ok(quanta("logout", "bob")) == "Ended 1 session(s) of 'bob'."
    assert app_client.get("/api/v1/me").status_code == 401
    assert ok(quanta("logout", "bob")) == "Ended 0 session(s) of 'bob'."

    assert ok(quanta("delete", "bob")) == "Deleted 'bob'; 0 session(s) ended."
    assert [r.split("\t")[1] for r in ok(quanta("list")).splitlines()] == ["ada"]
    assert quanta("delete", "bob").returncode == 1

    with session_scope(app_client.app.state.session_factory) as session:  # type: ignore[attr-defined]
        entries = list(session.scalars(select(AuditEntry).where(AuditEntry.actor == "cli")))
        actions = [e.action for e in entries]
        stored = json.dumps([e.detail for e in entries])
    assert actions == [
        "quanta user create",
        "quanta user create",
        "quanta user set-role",
        "quanta user disable",
        "quanta user enable",
        "quanta user reset-password",
        "quanta user reset-password",
        "quanta user logout",
        "quanta user logout",
        "quanta user delete",
    ]
    assert entries[2].detail == {
        "user_id": 2, "name": "bob", "role": {"old": "viewer", "new": "admin"},
    }  # fmt: skip
    for secret in (PASSWORD, NEW_PASSWORD, new_password, "$argon2"):
        assert secret not in stored
