"""EXPLAIN and profile requests on SQLite: validation, refusals, queueing, failures, beat.

No monitored server is needed here: refusals happen before anything is sent, and an
unreachable DSN shows how a failure is stored. tests/integration/test_diagnostics_mariadb.py
runs the same services against a real MariaDB.
"""

import gzip
import json
from datetime import UTC, datetime, timedelta
from hashlib import md5
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprint import fingerprint
from quanta.core.config import Settings
from quanta.core.db import session_scope, utcnow
from quanta.core.tasks import (
    AUTO_DIAGNOSE_TASK,
    RUN_EXPLAIN_TASK,
    RUN_PROFILE_TASK,
    celery_client,
    create_celery,
)
from quanta.diagnostics import execution, service
from quanta.diagnostics.models import ExplainRun, ProfileRun
from quanta.ingest import service as ingest
from quanta.ingest.models import IngestBatch
from tests.fixtures.servers import free_port

NOW = datetime.now(UTC).replace(second=0, microsecond=0)
SELECT_SQL = "SELECT * FROM orders WHERE amount = {}"
UPDATE_SQL = "UPDATE orders SET amount = 1 WHERE id = {}"
SEVERAL_SQL = "SELECT * FROM orders WHERE id = {}; DELETE FROM orders"


def query_id(sql: str) -> str:
    return md5(fingerprint(sql.format(1)).encode()).hexdigest()[:16].upper()


def event(sql: str, minutes_ago: int, query_time: float, **extra: Any) -> dict[str, Any]:
    return {
        "ts": (NOW - timedelta(minutes=minutes_ago)).isoformat(),
        "query": sql,
        "query_time": query_time,
        "rows_sent": 1,
        "rows_examined": 10,
        "db": "shop",
        "user": "app",
        "host": "web1",
        **extra,
    }


def ingest_events(
    client: TestClient,
    factory: sessionmaker[Session],
    settings: Settings,
    instance: str,
    events: list[dict[str, Any]],
    batch_id: str,
    examples: str = "full",
) -> None:
    """Send events through the ingest API and process them as the worker would."""
    payload = json.dumps(
        {"batch_id": batch_id, "instance": instance, "examples": examples, "events": events}
    )
    response = client.post(
        "/api/v1/ingest",
        content=gzip.compress(payload.encode()),
        headers={"Content-Encoding": "gzip"},
    )
    assert response.status_code == 202, response.text
    with session_scope(factory) as session:
        batch_pk = session.scalars(
            select(IngestBatch.id).where(IngestBatch.batch_id == batch_id)
        ).one()
    with session_scope(factory) as session:
        ingest.process_batch(session=session, settings=settings, batch_pk=batch_pk)


@pytest.fixture
def seeded(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> TestClient:
    """db1 runs a SELECT (heaviest), an UPDATE and a multi-statement text; db1 has a DSN
    and an execution target that no server answers."""
    events = [
        *(event(SELECT_SQL.format(i), i, 2.0) for i in range(5)),
        *(event(UPDATE_SQL.format(i), i, 1.0) for i in range(3)),
        event(SEVERAL_SQL.format(1), 1, 0.5),
    ]
    ingest_events(client, session_factory, settings, "db1", events, "b1")
    instance = next(i for i in client.get("/api/v1/instances").json() if i["name"] == "db1")
    dsn = f"mysql://quanta_ro:pw@127.0.0.1:{free_port()}/shop"
    target = f"mysql://quanta_exec:pw@127.0.0.1:{free_port()}/shop"
    response = client.patch(
        f"/api/v1/instances/{instance['id']}",
        json={"dsn": dsn, "execution_target_dsn": target},
    )
    assert response.status_code == 200, response.text
    return client


def post(client: TestClient, what: str, sql: str, instance: str = "db1") -> Any:
    return client.post(f"/api/v1/queries/{query_id(sql)}/{what}", params={"instance": instance})


def get(client: TestClient, what: str, sql: str, instance: str = "db1") -> Any:
    return client.get(f"/api/v1/queries/{query_id(sql)}/{what}", params={"instance": instance})


def test_nothing_collected_yet_says_how_to_get_one(seeded: TestClient) -> None:
    response = get(seeded, "explain", SELECT_SQL)
    assert response.status_code == 404
    assert response.json()["detail"] == (
        "No EXPLAIN collected yet for this query on db1: POST to request one."
    )
    response = get(seeded, "profile", SELECT_SQL)
    assert response.json()["detail"] == (
        "No profile collected yet for this query on db1: POST to request one."
    )


def test_unknown_query_or_instance_is_404(seeded: TestClient) -> None:
    response = seeded.post("/api/v1/queries/0123456789ABCDEF/explain", params={"instance": "db1"})
    assert response.status_code == 404
    assert response.json()["detail"] == "No query with query_id '0123456789ABCDEF'."
    response = post(seeded, "explain", SELECT_SQL, instance="nope")
    assert response.status_code == 404
    assert response.json()["detail"] == "No instance named 'nope'."
    assert seeded.post(f"/api/v1/queries/{query_id(SELECT_SQL)}/explain").status_code == 422


def test_request_is_queued_once_on_the_analysis_queue(
    seeded: TestClient, settings: Settings
) -> None:
    first = post(seeded, "explain", SELECT_SQL)
    assert first.status_code == 202, first.text
    body = first.json()
    assert (body["status"], body["taken_at"], body["instance"]) == ("queued", None, "db1")
    assert body["query_id"] == query_id(SELECT_SQL)
    again = post(seeded, "explain", SELECT_SQL)
    assert again.json()["id"] == body["id"]  # a request while one is queued reuses it

    with celery_client(settings).connection_for_read() as conn:
        message = conn.default_channel.basic_get("analysis", no_ack=True)
    assert message is not None
    assert message.headers["task"] == RUN_EXPLAIN_TASK
    assert json.loads(message.body)[0] == [body["id"]]

    shown = get(seeded, "explain", SELECT_SQL).json()
    assert (shown["id"], shown["status"], shown["pending"]) == (body["id"], "queued", False)


def test_a_failure_is_stored_with_the_servers_message(
    seeded: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    run_id = post(seeded, "explain", SELECT_SQL).json()["id"]
    with session_scope(session_factory) as session:
        run = service.execute_explain(session=session, settings=settings, run_id=run_id)
        assert run is not None
    body = get(seeded, "explain", SELECT_SQL).json()
    assert body["status"] == "failed"
    assert body["error"].startswith("cannot connect to 127.0.0.1:")
    assert "no server answers there" in body["error"]
    assert "Traceback" not in json.dumps(body)
    assert body["taken_at"] is not None
    assert [e["text"] for e in body["examples"]] == [SELECT_SQL.format(0)]
    assert (body["findings"], body["tabular"]) == ([], None)

    # Executing it again (a redelivered task) changes nothing.
    with session_scope(session_factory) as session:
        assert service.execute_explain(session=session, settings=settings, run_id=run_id) is None

    # A newer request is pending while the failed run stays the one shown.
    queued = post(seeded, "explain", SELECT_SQL).json()
    assert queued["id"] != run_id
    shown = get(seeded, "explain", SELECT_SQL).json()
    assert (shown["id"], shown["status"], shown["pending"]) == (run_id, "failed", True)


def test_several_statements_are_refused_and_the_reason_is_stored(seeded: TestClient) -> None:
    response = post(seeded, "explain", SEVERAL_SQL)
    assert response.status_code == 400
    reason = (
        "not explained: the example holds several statements: only one statement can be explained"
    )
    assert response.json()["detail"] == reason
    body = get(seeded, "explain", SEVERAL_SQL).json()
    assert (body["status"], body["error"]) == ("refused", reason)


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("SELECT 1 --\u00a0 , fglobal() FROM (SELECT 1 AS `\u00a0`) AS t WHERE {} = 1",
         "the example has a non-ASCII character (U+00A0) outside quoted strings and names: "
         "the server may read it differently, so it is not sent"),
        ("SELECT * FROM orders WHERE id = {} AND fgd() = 1",
         "the example calls FGD(), which is not a built-in function known to be free of "
         "side effects (a stored function or UDF runs even under EXPLAIN): it is not sent"),
    ],
)  # fmt: skip
def test_a_hostile_example_is_refused_and_the_reason_is_stored(
    seeded: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
    sql: str,
    reason: str,
) -> None:
    ingest_events(seeded, session_factory, settings, "db1", [event(sql.format(7), 1, 3.0)], "h1")
    response = post(seeded, "explain", sql)
    assert response.status_code == 400
    assert response.json()["detail"] == f"not explained: {reason}"
    body = get(seeded, "explain", sql).json()
    assert (body["status"], body["error"]) == ("refused", f"not explained: {reason}")


def test_dml_is_explained_but_never_profiled(seeded: TestClient) -> None:
    assert post(seeded, "explain", UPDATE_SQL).status_code == 202
    response = post(seeded, "profile", UPDATE_SQL)
    assert response.status_code == 400
    assert response.json()["detail"].startswith("not profiled: an UPDATE is never executed")
    assert get(seeded, "profile", UPDATE_SQL).json()["status"] == "refused"


def test_profile_needs_an_execution_target(
    seeded: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    instance = seeded.get("/api/v1/instances").json()[0]
    queued = post(seeded, "profile", SELECT_SQL).json()["id"]  # queued while it had one
    seeded.patch(f"/api/v1/instances/{instance['id']}", json={"execution_target_dsn": None})
    response = post(seeded, "profile", SELECT_SQL)
    assert response.status_code == 409
    assert response.json()["detail"] == (
        "A profile executes the example, and nothing is executed on the monitored server: "
        "instance 'db1' has no execution target. An admin sets a read-only replica or sandbox "
        "in Settings → Instances → db1 → Edit → Execution target (or PATCH "
        f"/api/v1/instances/{instance['id']} "
        '{"execution_target_dsn": "mysql://quanta_exec:PASSWORD@replica:3306/"}).'
    )
    # The run queued before the target was removed is refused when the worker takes it.
    with session_scope(session_factory) as session:
        run = service.execute_profile(session=session, settings=settings, run_id=queued)
        assert run is not None
        assert (run.status, run.error) == ("refused", response.json()["detail"])


def test_an_instance_without_dsn_cannot_be_reached(seeded: TestClient) -> None:
    instance = seeded.get("/api/v1/instances").json()[0]
    seeded.patch(f"/api/v1/instances/{instance['id']}", json={"dsn": None})
    response = post(seeded, "explain", SELECT_SQL)
    assert response.status_code == 409
    assert response.json()["detail"].startswith(
        "Instance 'db1' has no DSN, so Quanta cannot reach its server"
    )


def test_truncated_and_masked_examples_are_refused(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    cut = event("SELECT * FROM orders WHERE note = 'abc'", 1, 1.0, truncated=True)
    ingest_events(client, session_factory, settings, "cut", [cut], "c1")
    masked = event("SELECT * FROM items WHERE id = 7", 1, 1.0)
    ingest_events(client, session_factory, settings, "private", [masked], "m1", "masked")
    for instance in client.get("/api/v1/instances").json():
        client.patch(f"/api/v1/instances/{instance['id']}", json={"dsn": "mysql://u:p@h/"})
    response = post(client, "explain", "SELECT * FROM orders WHERE note = 'abc'", "cut")
    assert response.status_code == 400
    assert response.json()["detail"] == (
        "not explained: the example is truncated: only a complete statement can be explained"
    )
    response = post(client, "explain", "SELECT * FROM items WHERE id = 7", "private")
    assert response.status_code == 400
    assert response.json()["detail"].startswith(
        "not explained: the examples of instance 'private' are stored with their literals "
        "masked, and a plan needs a real statement"
    )


def test_beat_queues_the_top_queries_without_a_recent_run(
    seeded: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    post(seeded, "explain", UPDATE_SQL)  # already requested today: not queued again
    with session_scope(session_factory) as session:
        queued = service.auto_diagnose(session=session, settings=settings, now=utcnow())
    with session_scope(session_factory) as session:
        explained = {
            r.query_id
            for r in session.scalars(
                select(ExplainRun).where(ExplainRun.id.in_(queued.explain_run_ids))
            )
        }
        profiled = {
            r.query_id
            for r in session.scalars(
                select(ProfileRun).where(ProfileRun.id.in_(queued.profile_run_ids))
            )
        }
    assert explained == {query_id(SELECT_SQL), query_id(SEVERAL_SQL)}
    assert profiled == {query_id(SELECT_SQL), query_id(SEVERAL_SQL)}
    with session_scope(session_factory) as session:
        again = service.auto_diagnose(session=session, settings=settings, now=utcnow())
    assert (again.explain_run_ids, again.profile_run_ids) == ([], [])


def test_beat_respects_the_top_n_and_profiling_settings(
    seeded: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    instance = seeded.get("/api/v1/instances").json()[0]
    seeded.patch(f"/api/v1/instances/{instance['id']}", json={"execution_target_dsn": None})
    one = settings.model_copy(update={"diagnostics_auto_top_queries": 1})
    with session_scope(session_factory) as session:
        queued = service.auto_diagnose(session=session, settings=one, now=utcnow())
        runs = [session.get_one(ExplainRun, run_id) for run_id in queued.explain_run_ids]
        assert [run.query_id for run in runs] == [query_id(SELECT_SQL)]  # the heaviest
    assert queued.profile_run_ids == []


@pytest.mark.parametrize("task", [RUN_EXPLAIN_TASK, RUN_PROFILE_TASK, AUTO_DIAGNOSE_TASK])
def test_diagnostics_tasks_go_to_the_analysis_queue(tmp_path: Path, task: str) -> None:
    app = create_celery(Settings(data_dir=tmp_path, redis_url=None))
    assert app.amqp.router.route({}, task)["queue"].name == "analysis"


def test_a_bug_fails_the_run_without_a_traceback(
    seeded: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("unexpected server output")

    monkeypatch.setattr(execution, "_rows_per_execution", broken)
    run_id = post(seeded, "explain", SELECT_SQL).json()["id"]
    with session_scope(session_factory) as session:
        service.execute_explain(session=session, settings=settings, run_id=run_id)
    body = get(seeded, "explain", SELECT_SQL).json()
    assert (body["status"], body["error"]) == ("failed", service.INTERNAL_ERROR)


# --------------------------------------------------------------------------- who may ask


def token(client: TestClient, name: str, *scopes: str) -> TestClient:
    created = client.post("/api/v1/tokens", json={"name": name, "scopes": list(scopes)})
    assert created.status_code == 201, created.text
    return TestClient(client.app, headers={"Authorization": f"Bearer {created.json()['token']}"})


def signed_in(client: TestClient, name: str, role: str) -> TestClient:
    password = "a long enough password"
    made = client.post("/api/v1/users", json={"name": name, "password": password, "role": role})
    assert made.status_code == 201, made.text
    browser = TestClient(client.app)
    login = browser.post("/api/v1/auth/login", json={"name": name, "password": password})
    assert login.status_code == 200, login.text
    assert login.json()["role"] == role
    browser.headers["X-CSRF-Token"] = login.json()["csrf_token"]
    return browser


@pytest.mark.parametrize("what", ["explain", "profile", "suggestions"])
def test_requesting_a_run_needs_the_diagnose_scope(seeded: TestClient, what: str) -> None:
    readers = {
        "This token lacks the 'diagnose' scope.": token(seeded, "reader", "read"),
        "Signed in as 'vera' (viewer): this needs the 'diagnose' permission, which operators "
        "and admins have. An admin can change your role.": signed_in(seeded, "vera", "viewer"),
    }
    for refusal, reader in readers.items():
        refused = post(reader, what, SELECT_SQL)
        assert refused.status_code == 403
        assert refused.json()["detail"] == refusal
        assert get(reader, what, SELECT_SQL).status_code != 403  # reading stays 'read'
    for caller in (
        token(seeded, "ci", "read", "diagnose"),
        signed_in(seeded, "otto", "operator"),
        seeded,  # admin
    ):
        assert post(caller, what, SELECT_SQL).status_code == 202


def test_an_operator_is_shown_its_role_and_scopes(seeded: TestClient) -> None:
    me = signed_in(seeded, "otto", "operator").get("/api/v1/me").json()
    assert (me["role"], me["scopes"]) == ("operator", ["diagnose", "read"])
    assert signed_in(seeded, "vera", "viewer").get("/api/v1/me").json()["scopes"] == ["read"]


def run_entries(client: TestClient) -> list[dict[str, Any]]:
    return [e for e in client.get("/api/v1/audit").json() if e["action"].startswith("run ")]


def test_every_run_is_audited_with_who_what_where_and_the_outcome(
    seeded: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    instance = seeded.get("/api/v1/instances").json()[0]
    monitored = instance["dsn"].split("@")[1].split("/")[0]
    target = instance["execution_target_dsn"].split("@")[1].split("/")[0]
    ci = token(seeded, "ci", "read", "diagnose")
    # Refused at the request: no server reached, the entry says which one it was for.
    assert post(ci, "explain", SEVERAL_SQL).status_code == 400
    explain_id = post(ci, "explain", SELECT_SQL).json()["id"]
    profile_id = post(ci, "profile", SELECT_SQL).json()["id"]
    with session_scope(session_factory) as session:
        service.execute_explain(session=session, settings=settings, run_id=explain_id)
        service.execute_profile(session=session, settings=settings, run_id=profile_id)
    with session_scope(session_factory) as session:
        beat = service.auto_diagnose(session=session, settings=settings, now=utcnow())
    with session_scope(session_factory) as session:
        service.execute_explain(session=session, settings=settings, run_id=beat.explain_run_ids[0])
    entries = run_entries(seeded)[::-1]  # oldest first
    summary = [
        (e["actor"], e["action"], e["target"]["query_id"], e["detail"]["outcome"]) for e in entries
    ]
    assert summary == [
        ("ci", "run explain", query_id(SEVERAL_SQL), "refused"),
        ("ci", "run explain", query_id(SELECT_SQL), "failed"),
        ("ci", "run profile", query_id(SELECT_SQL), "failed"),
        ("beat", "run explain", query_id(UPDATE_SQL), "failed"),
    ]
    where = [e["detail"]["where"] for e in entries]
    assert where[:3] == [
        [{"role": "monitored server", "address": monitored}],
        [{"role": "monitored server", "address": monitored}],
        [{"role": "execution target", "address": target}],
    ]
    assert entries[0]["detail"]["reason"].startswith("not explained: the example holds several")
    assert "no server answers there" in entries[2]["detail"]["reason"]
    assert entries[1]["target"] == {
        "instance_id": str(instance["id"]),
        "instance": "db1",
        "query_id": query_id(SELECT_SQL),
        "run_id": str(explain_id),
    }
    assert entries[1]["actor_token_id"] is not None
    assert entries[3]["actor_token_id"] is None


def test_beat_queues_no_profile_without_an_execution_target(
    seeded: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    instance = seeded.get("/api/v1/instances").json()[0]
    seeded.patch(f"/api/v1/instances/{instance['id']}", json={"execution_target_dsn": None})
    with session_scope(session_factory) as session:
        queued = service.auto_diagnose(session=session, settings=settings, now=utcnow())
    assert queued.explain_run_ids != []
    assert queued.profile_run_ids == []
    with session_scope(session_factory) as session:
        assert session.scalars(select(ProfileRun)).all() == []
