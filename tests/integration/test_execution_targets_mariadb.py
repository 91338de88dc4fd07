"""Who may run what, where, against a real MariaDB: execution targets verified read-only,
least privilege shown and enforced (with the audited override), plans that leak no value.

The execution target is the same throw-away server made read-only with SET GLOBAL
read_only for the time a test needs it, reached with an account of its own.
"""

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.diagnostics import service
from quanta.monitored import explain as monitored_explain
from quanta.monitored.options import ConnectionOptions
from tests.fixtures.servers import MariaDBServer, OwnMariaDB, started_mariadb
from tests.integration.test_diagnostics_mariadb import query_id, register, store_examples

pytestmark = [pytest.mark.services, pytest.mark.timeout(300)]

DB = "shop"
SECRET = "QUANTA-SECRET-4F2A9C"
# The README's GRANTs: the monitoring account and the execution target's account.
ACCOUNTS = {
    "least": "GRANT SELECT, PROCESS, SHOW VIEW, BINLOG MONITOR, SLAVE MONITOR ON *.* TO {}",
    "exec": "GRANT SELECT, PROCESS, SHOW VIEW ON *.* TO {}",
    "broad": "GRANT ALL PRIVILEGES ON *.* TO {} WITH GRANT OPTION",
    "routines": f"GRANT SELECT, CREATE ROUTINE ON {DB}.* TO {{}}",
    "bypass": "GRANT SELECT, PROCESS, READ_ONLY ADMIN ON *.* TO {}",
}
SETUP = (
    f"CREATE DATABASE {DB}",
    f"USE {DB}",
    """CREATE TABLE orders (id INT PRIMARY KEY, status VARCHAR(32) NOT NULL,
       amount INT NOT NULL, KEY idx_status (status))""",
    """INSERT INTO orders SELECT seq, ELT(seq % 3 + 1, 'new', 'paid', 'void'), seq % 100
       FROM seq_1_to_3000""",
    "CREATE TABLE secrets (id INT PRIMARY KEY, value VARCHAR(64) NOT NULL)",
    f"INSERT INTO secrets VALUES (1, '{SECRET}'), (2, 'other')",
    "ANALYZE TABLE orders, secrets",
    *(
        statement
        for name, grant in ACCOUNTS.items()
        for statement in (
            f"CREATE USER quanta_{name}@'%' IDENTIFIED BY 'pw-{name}'",
            grant.format(f"quanta_{name}@'%'"),
        )
    ),
)
# A const table (secrets by primary key) whose value the optimizer writes into the plan.
LEAKY = "SELECT o.id FROM orders o JOIN secrets s ON s.id = {} WHERE o.status = s.value"
SCAN = "SELECT status, COUNT(*) FROM orders WHERE amount > {} GROUP BY status"


@pytest.fixture(scope="module")
def own() -> Iterator[OwnMariaDB]:
    with started_mariadb() as own, contextlib.closing(own.server.connect()) as conn:
        with conn.cursor() as cursor:
            for statement in SETUP:
                cursor.execute(statement)
                cursor.fetchall()
        yield own


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        env="test",
        data_dir=tmp_path / "data",
        database_url=None,
        redis_url=None,
        monitored_profile_runs=1,
    )


def dsn(server: MariaDBServer, account: str) -> str:
    return f"mysql://quanta_{account}:pw-{account}@{server.host}:{server.port}/{DB}"


def test_connection(client: TestClient, instance: dict[str, Any]) -> dict[str, Any]:
    response = client.post(f"/api/v1/instances/{instance['id']}/test-connection")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


test_connection.__test__ = False  # type: ignore[attr-defined]


def run(
    client: TestClient,
    factory: sessionmaker[Session],
    settings: Settings,
    what: str,
    sql: str,
    instance: str,
) -> dict[str, Any]:
    """Request a run through the API, execute it as the worker does, read it back."""
    queued = client.post(f"/api/v1/queries/{query_id(sql)}/{what}", params={"instance": instance})
    assert queued.status_code == 202, queued.text
    execute = service.execute_explain if what == "explain" else service.execute_profile
    with session_scope(factory) as session:
        execute(session=session, settings=settings, run_id=queued.json()["id"])
    shown = client.get(f"/api/v1/queries/{query_id(sql)}/{what}", params={"instance": instance})
    assert shown.status_code == 200, shown.text
    body: dict[str, Any] = shown.json()
    return body


def test_privileges_are_listed_and_the_broad_ones_flagged(
    own: OwnMariaDB, client: TestClient
) -> None:
    expected = {
        "least": [],
        "exec": [],
        "broad": ["ALL PRIVILEGES ON *.*", "GRANT OPTION ON *.*"],
        "routines": ["CREATE ROUTINE ON `shop`.*"],
        "bypass": ["READ_ONLY ADMIN ON *.*"],
    }
    found = {}
    for account in expected:
        instance = register(client, f"db-{account}", dsn(own.server, account))
        report = test_connection(client, instance)
        assert report["connected"] is True, report
        found[account] = report["excess_privileges"]
        least = next(c for c in report["capabilities"] if c["name"] == "least_privilege")
        assert least["ok"] is (not expected[account])
        if account == "least":  # the README's monitoring account: nothing is red
            failed = [c for c in report["capabilities"] if not c["ok"]]
            assert failed == []
            # No target yet: profiling is not claimed (it would run on the target only).
            assert "profiling" not in {c["name"] for c in report["capabilities"]}
            assert report["execution_target"] is None
    assert found == expected
    listed = client.get("/api/v1/instances").json()
    least = test_connection(client, next(i for i in listed if i["name"] == "db-least"))
    assert least["account"] == "quanta_least@%"
    assert sorted(least["privileges"]) == [
        "BINLOG MONITOR ON *.*",
        "PROCESS ON *.*",
        "SELECT ON *.*",
        "SHOW VIEW ON *.*",
        "SLAVE MONITOR ON *.*",
    ]
    assert "pw-" not in json.dumps(least)  # MariaDB's grant lines hold the password hash


def test_the_execution_target_is_verified_read_only_at_every_connect(
    own: OwnMariaDB,
    client: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
) -> None:
    instance = register(
        client,
        "db1",
        dsn(own.server, "least"),
        execution_target_dsn=dsn(own.server, "exec"),
    )
    store_examples(client, session_factory, settings, "db1", [SCAN.format(5)])
    address = f"{own.server.host}:{own.server.port}"
    refusal = (
        f"the execution target {address} is not read-only: SET GLOBAL read_only=ON there "
        "(MySQL: and super_read_only=ON; MariaDB 11.x: read_only=NO_LOCK_NO_ADMIN), or point "
        "the execution target at a replica started with --read-only"
    )
    target = test_connection(client, instance)["execution_target"]
    assert (target["address"], target["read_only"], target["detail"]) == (
        address,
        False,
        refusal,
    )
    profile = run(client, session_factory, settings, "profile", SCAN.format(1), "db1")
    assert (profile["status"], profile["error"]) == ("refused", refusal)
    explained = run(client, session_factory, settings, "explain", SCAN.format(1), "db1")
    assert (explained["status"], explained["analyze"]) == ("ok", None)
    assert explained["notes"] == [f"ANALYZE skipped: {refusal}"]

    with own.server.read_only():
        target = test_connection(client, instance)["execution_target"]
        assert target["read_only"] is True
        assert target["detail"] == (
            "read-only for quanta_exec@%: read_only=ON, innodb_read_only=OFF"
        )
        assert (target["account"], target["excess_privileges"]) == ("quanta_exec@%", [])
        # Profiling is the execution target's capability, checked there.
        assert [(c["name"], c["ok"]) for c in target["capabilities"]] == [("profiling", True)]
        profile = run(client, session_factory, settings, "profile", SCAN.format(1), "db1")
        assert (profile["status"], profile["error"]) == ("ok", None)
        assert profile["runs"] == 1
        # Where each ran, by role: a profile on the target, EXPLAIN on the monitored server
        # and its ANALYZE on the target (one server here, reached with two accounts).
        on_target = {"role": "execution target", "address": address}
        assert profile["ran_on"] == [on_target]
        explained = run(client, session_factory, settings, "explain", SCAN.format(2), "db1")
        assert explained["analyze"] is not None
        assert explained["notes"] == []
        assert explained["ran_on"] == [{"role": "monitored server", "address": address}, on_target]
    # Back to read-write: the very next run is refused again (verified at each connect).
    profile = run(client, session_factory, settings, "profile", SCAN.format(3), "db1")
    assert (profile["status"], profile["error"]) == ("refused", refusal)

    entries = [e for e in client.get("/api/v1/audit").json() if e["action"] == "run profile"]
    assert [e["detail"]["outcome"] for e in entries] == ["refused", "ok", "refused"]
    assert {e["detail"]["where"][0]["role"] for e in entries} == {"execution target"}
    assert entries[1]["detail"]["execution_target"] == "read_only=ON, innodb_read_only=OFF"


def test_read_only_does_not_count_for_an_account_that_bypasses_it(
    own: OwnMariaDB, client: TestClient
) -> None:
    instance = register(
        client,
        "db1",
        dsn(own.server, "least"),
        execution_target_dsn=dsn(own.server, "bypass"),
    )
    with own.server.read_only():
        target = test_connection(client, instance)["execution_target"]
    assert target["read_only"] is False
    assert target["detail"].startswith(
        f"the execution target {own.server.host}:{own.server.port} is read-only, but not for "
        "Quanta's account there: READ_ONLY ADMIN ON *.* lets it write anyway"
    )


def test_diagnostics_refuse_a_broad_account_unless_an_admin_allows_it(
    own: OwnMariaDB,
    client: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
) -> None:
    instance = register(client, "db1", dsn(own.server, "routines"))
    store_examples(client, session_factory, settings, "db1", [SCAN.format(5)])
    refused = run(client, session_factory, settings, "explain", SCAN.format(1), "db1")
    assert (refused["status"], refused["tabular"]) == ("refused", None)
    assert refused["error"] == (
        f"the account quanta_routines@% on the monitored server {own.server.host}:"
        f"{own.server.port} has privileges Quanta does not need (CREATE ROUTINE ON `shop`.*): "
        "a statement from a log would run with them. Grant only SELECT, PROCESS, SHOW VIEW "
        'and REPLICATION CLIENT (see the README), or an admin sets "allow_broad_privileges": '
        "true on the instance (audited)"
    )
    allowed = client.patch(
        f"/api/v1/instances/{instance['id']}", json={"allow_broad_privileges": True}
    )
    assert allowed.json()["allow_broad_privileges"] is True
    explained = run(client, session_factory, settings, "explain", SCAN.format(2), "db1")
    assert explained["status"] == "ok"

    audit = client.get("/api/v1/audit").json()
    runs = [e for e in audit if e["action"] == "run explain"]
    assert [e["detail"]["outcome"] for e in runs] == ["ok", "refused"]
    assert runs[0]["detail"]["broad_privileges_allowed"] == {
        "quanta_routines@%": ["CREATE ROUTINE ON `shop`.*"]
    }
    override = next(e for e in audit if e["action"] == "PATCH /api/v1/instances/{instance_id}")
    assert override["detail"] == {
        "name": "db1",
        "changed": {"allow_broad_privileges": {"old": False, "new": True}},
    }


def test_plans_never_show_a_value_read_from_a_const_table(
    own: OwnMariaDB,
    client: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
) -> None:
    # The server does put the secret in the plan: what the masking must catch.
    raw = monitored_explain(
        ConnectionOptions(
            host=own.server.host,
            port=own.server.port,
            user="quanta_least",
            password="pw-least",
            database=DB,
        ),
        LEAKY.format(1),
    )
    assert SECRET in json.dumps(raw.to_dict())

    register(
        client,
        "db1",
        dsn(own.server, "least"),
        execution_target_dsn=dsn(own.server, "exec"),
    )
    store_examples(client, session_factory, settings, "db1", [LEAKY.format(1)])
    with own.server.read_only():
        body = run(client, session_factory, settings, "explain", LEAKY.format(1), "db1")
    assert body["status"] == "ok", body
    assert body["analyze"] is not None
    answers = [
        json.dumps(body),
        client.get(f"/api/v1/queries/{query_id(LEAKY.format(1))}/explain?instance=db1").text,
        client.get("/api/v1/audit").text,
    ]
    with session_scope(session_factory) as session:
        stored = [
            json.dumps([str(value) for value in row])
            for table in ("explain_runs", "audit_log")
            for row in session.execute(text(f"SELECT * FROM {table}"))
        ]
    assert [SECRET in answer for answer in answers + stored] == [False] * (
        len(answers) + len(stored)
    )
    # The example's own literal stays (the viewer sees the example anyway); the value is '?'.
    conditions = json.dumps(body["document"])
    assert "= ?" in conditions
