"""Index suggestions and schema snapshots on a SQLite store: advice from stored snapshot
documents (fresh, so no server is contacted), status tracking across re-runs and schema
changes, and the HTTP endpoints with their 4xx answers.

The instance's DSN points at a port nothing listens on: a test passes only if no snapshot
had to be read from a server, and the one that needs a read gets the connection error.
"""

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from kombu import Connection
from sqlalchemy.orm import Session, sessionmaker

from quanta.advice import service, work
from quanta.advice.models import Suggestion
from quanta.core.config import Settings
from quanta.core.crypto import encrypt
from quanta.core.db import session_scope
from quanta.core.tasks import ADVISE_QUERY_TASK, ANALYSIS_QUEUE
from quanta.diagnostics.models import ExplainRun
from quanta.instances.models import Instance
from quanta.monitored import ConnectionFailed
from quanta.notify.models import ChannelType, Delivery
from quanta.notify.schemas import ChannelCreate
from quanta.notify.service import create_channel
from quanta.queries.models import (
    QueryBucketHour,
    QueryBucketMinute,
    QueryClass,
    QueryExample,
    QueryTotalsHour,
)
from quanta.tables import service as tables
from quanta.tables.models import TableSnapshot

NOW = datetime.now(UTC).replace(microsecond=0)
UNREACHABLE_DSN = "mysql://quanta_ro:secret@127.0.0.1:1/"
QUERY = "0123456789ABCDEF"
OTHER_QUERY = "FEDCBA9876543210"
EXAMPLE = "SELECT id, amount FROM orders WHERE phone = '555-0042'"
FINGERPRINT = "select id, amount from orders where phone = ?"
PHONE_AMOUNT_DDL = "ALTER TABLE shop.orders ADD INDEX idx_orders_phone_amount (phone, amount)"
ORDERS: dict[str, Any] = {
    "engine": "InnoDB",
    "rows": 100000,
    "columns": {
        "id": {"type": "int", "nullable": False, "distinct": 100000},
        # 2,000 rows per customer: extending idx_customer saves more than the 100 rows per
        # call a change must save (issue 41).
        "customer_id": {"type": "int", "nullable": False, "distinct": 50},
        # 2,000 rows per phone: enough rows per call for covering (amount) to pay.
        "phone": {"type": "varchar(20)", "nullable": False, "distinct": 50},
        "amount": {"type": "int", "nullable": False},
        "created_at": {"type": "datetime", "nullable": False},
    },
    "primary_key": ["id"],
    "indexes": [{"name": "idx_customer", "columns": ["customer_id"], "unique": False}],
}


@pytest.fixture
def factory(session_factory: sessionmaker[Session], settings: Settings) -> sessionmaker[Session]:
    """The store with instance db1 (unreachable DSN), a query, its example and a fresh
    snapshot of shop.orders."""
    with session_scope(session_factory) as session:
        session.add(Instance(name="db1", dsn_encrypted=encrypt(settings, UNREACHABLE_DSN)))
        session.add(Instance(name="nodsn"))
        session.flush()
        add_query(session, QUERY, FINGERPRINT, EXAMPLE)
        add_snapshot(session, ORDERS)
    return session_factory


def add_query(session: Session, query_id: str, fingerprint: str, example: str | None) -> None:
    session.add(
        QueryClass(
            query_id=query_id,
            fingerprint=fingerprint,
            first_seen=NOW,
            last_seen=NOW,
            statement_type="select",
            tables=["orders"],
        )
    )
    if example is None:
        return
    stored = {"text": example, "query_time": 1.5, "ts": NOW, "schema": "shop"}
    session.add(
        QueryExample(
            query_id=query_id,
            resolution="minute",
            bucket_start=NOW.replace(second=0),
            instance_id=instance_id(session, "db1"),
            seen=3,
            **{f"{kind}_{k}": v for kind in ("slowest", "sampled") for k, v in stored.items()},
            slowest_literals="full",
            sampled_literals="full",
            slowest_truncated=False,
            sampled_truncated=False,
        )
    )


def add_snapshot(session: Session, document: dict[str, Any], taken_at: datetime = NOW) -> None:
    session.add(
        TableSnapshot(
            instance_id=instance_id(session, "db1"),
            table_name="shop.orders",
            taken_at=taken_at,
            changed_at=taken_at,
            server_flavor="mariadb",
            server_version="10.11.6-MariaDB",
            content_hash=tables.structure_hash(document),
            document=document,
        )
    )


def instance_id(session: Session, name: str) -> int:
    return next(i.id for i in session.query(Instance).filter_by(name=name))


def change_schema(factory: sessionmaker[Session], document: dict[str, Any]) -> None:
    """What a refresh that found a new structure stores."""
    with session_scope(factory) as session:
        row = session.query(TableSnapshot).one()
        row.document = document
        row.content_hash = tables.structure_hash(document)


def advise(factory: sessionmaker[Session], settings: Settings, query_id: str = QUERY) -> Any:
    with session_scope(factory) as session:
        run = service.advise_query(
            session=session,
            settings=settings,
            query_id=query_id,
            instance_id=instance_id(session, "db1"),
        )
        return run.created, run.changed, [summary(s) for s in run.suggestions]


def summary(row: Suggestion) -> tuple[int, str, str, str, str]:
    return row.id, row.table_name, row.action, row.ddl, row.status


def with_index(name: str, *columns: str) -> dict[str, Any]:
    index = {"name": name, "columns": list(columns), "unique": False}
    return {**ORDERS, "indexes": [*ORDERS["indexes"], index]}


def test_advice_from_the_latest_example_is_stored_new(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    created, changed, rows = advise(factory, settings)
    assert rows == [(1, "shop.orders", "add", PHONE_AMOUNT_DDL, "new")]
    assert (created, changed) == ((1,), ())
    with session_scope(factory) as session:
        row = session.get_one(Suggestion, 1)
        assert row.columns == [
            {"name": "phone", "desc": False, "rule": "equality"},
            {"name": "amount", "desc": False, "rule": "covering"},
        ]
        assert row.reason == (
            "The index finds the rows by phone; it holds amount too, so the rows are never "
            "read (covering)."
        )
        assert row.validation is None  # no sandbox DSN on db1
        assert len(row.content_hash) == 64


def test_without_an_example_the_fingerprint_is_advised_and_the_reason_says_so(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    with session_scope(factory) as session:
        add_query(session, OTHER_QUERY, "select id, amount from shop.orders where phone = ?", None)
    _, _, rows = advise(factory, settings, OTHER_QUERY)
    assert [r[2:] for r in rows] == [("add", PHONE_AMOUNT_DDL, "new")]
    with session_scope(factory) as session:
        reason = session.get_one(Suggestion, rows[0][0]).reason
    assert reason.startswith("Advised from the fingerprint: no untruncated example")
    assert reason.endswith(
        "The index finds the rows by phone; it holds amount too, so the rows "
        "are never read (covering)."
    )


def test_same_advice_keeps_the_row_and_a_dismissal(
    factory: sessionmaker[Session], settings: Settings, client: TestClient
) -> None:
    advise(factory, settings)
    response = client.patch("/api/v1/suggestions/1", json={"status": "dismissed"})
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "dismissed"
    created, changed, rows = advise(factory, settings)
    assert (created, changed) == ((), ())
    assert rows == [(1, "shop.orders", "add", PHONE_AMOUNT_DDL, "dismissed")]
    response = client.patch("/api/v1/suggestions/1", json={"status": "new"})
    assert response.json()["status"] == "new"


def test_advice_with_nothing_left_to_do_is_superseded_never_an_empty_new(
    factory: sessionmaker[Session], settings: Settings, client: TestClient
) -> None:
    advise(factory, settings)
    client.patch("/api/v1/suggestions/1", json={"status": "dismissed"})
    # An index on phone alone now serves the filter: the advice becomes "none" (issue 41:
    # it stayed "new", an empty SQL box with a Dismiss button).
    change_schema(factory, with_index("idx_phone", "phone"))
    created, changed, rows = advise(factory, settings)
    assert (created, changed) == ((), (1,))
    assert rows == [(1, "shop.orders", "none", "", "superseded")]
    with session_scope(factory) as session:
        assert session.get_one(Suggestion, 1).reason == (
            "The existing index idx_phone (phone, id) already serves this filter as a "
            "left-most prefix."
        )


def test_an_index_with_the_suggested_columns_makes_it_applied_and_dropping_it_new(
    factory: sessionmaker[Session], settings: Settings, client: TestClient
) -> None:
    advise(factory, settings)
    change_schema(factory, with_index("idx_orders_phone_amount", "phone", "amount"))
    created, changed, rows = advise(factory, settings)
    # No second "none, already served" row: the applied suggestion says it.
    assert (created, changed, rows) == (
        (),
        (),
        [(1, "shop.orders", "add", PHONE_AMOUNT_DDL, "applied")],
    )
    response = client.patch("/api/v1/suggestions/1", json={"status": "dismissed"})
    assert response.status_code == 409
    assert "applied" in response.json()["detail"]
    change_schema(factory, ORDERS)
    _, _, rows = advise(factory, settings)
    assert rows == [(1, "shop.orders", "add", PHONE_AMOUNT_DDL, "new")]


def test_an_index_holding_the_suggestion_with_the_primary_key_appended_applies_it(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    """A suggestion of (phone, id), as Quanta gave before it left out the primary key InnoDB
    appends, is applied by an index on (phone): the same index (issue 41)."""
    advise(factory, settings)
    with session_scope(factory) as session:
        row = session.get_one(Suggestion, 1)
        row.columns = [
            {"name": "phone", "desc": False, "rule": "equality"},
            {"name": "id", "desc": False, "rule": "order_by"},
        ]
        row.ddl = "ALTER TABLE shop.orders ADD INDEX idx_orders_phone_id (phone, id)"
    change_schema(factory, with_index("idx_phone", "phone"))
    _, _, rows = advise(factory, settings)
    assert [r[2:] for r in rows] == [
        ("add", "ALTER TABLE shop.orders ADD INDEX idx_orders_phone_id (phone, id)", "applied")
    ]


def test_redundant_suggestions_of_two_queries_are_merged_until_the_wider_one_goes(
    factory: sessionmaker[Session], settings: Settings, client: TestClient
) -> None:
    """(phone), by another query, is the left-most part of (phone, amount): merged into it,
    so chat and the plan see one index; dismissed, the wider one no longer holds it."""
    with session_scope(factory) as session:
        add_query(session, OTHER_QUERY, "select id from orders where phone = ?",
                  "SELECT id FROM orders WHERE phone = '555-0001'")  # fmt: skip
    advise(factory, settings)
    _, _, rows = advise(factory, settings, OTHER_QUERY)
    assert [r[2:] for r in rows] == [
        ("add", "ALTER TABLE shop.orders ADD INDEX idx_orders_phone (phone)", "superseded")
    ]
    body = client.get(f"/api/v1/queries/{OTHER_QUERY}/suggestions").json()
    [merged] = body["suggestions"]
    assert merged["merged_into"] == {"id": 1, "query_id": QUERY, "ddl": PHONE_AMOUNT_DDL}
    assert merged["instance_id"] == body["suggestions"][0]["instance_id"]
    client.patch("/api/v1/suggestions/1", json={"status": "dismissed"})
    _, _, rows = advise(factory, settings, OTHER_QUERY)
    assert [r[4] for r in rows] == ["new"]
    [alone] = client.get(f"/api/v1/queries/{OTHER_QUERY}/suggestions").json()["suggestions"]
    assert alone["merged_into"] is None


def test_the_numbers_note_weighs_the_measured_rows_and_says_so(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    with session_scope(factory) as session:
        add_load(session, QUERY, 1.0, NOW.replace(second=0) - timedelta(hours=1), 5_000)
    advise(factory, settings)
    with session_scope(factory) as session:
        notes = session.get_one(Suggestion, 1).notes
    # 5,000 rows over 10 calls measured; the statistics say a full scan (100,000 rows), and
    # 2,000 per phone with the index: a fiftieth of the measured 500.
    assert notes[-1] == (
        "Rows examined per call: 500 measured now, about 10 with the index (the measured figure "
        "cut by the estimated saving; the statistics estimate 100,000 now and 2,000 with it); "
        "the index takes 29 bytes per row."
    )


def test_reevaluation_reruns_every_query_on_a_changed_table(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    with session_scope(factory) as session:
        add_query(
            session,
            OTHER_QUERY,
            "select id from orders where customer_id = ? and created_at > ?",
            "SELECT id FROM orders WHERE customer_id = 5 AND created_at > '2024-01-01'",
        )
    advise(factory, settings)
    _, _, rows = advise(factory, settings, OTHER_QUERY)
    assert [r[2] for r in rows] == ["replace"]
    change_schema(
        factory, with_index("idx_orders_customer_id_created_at", "customer_id", "created_at")
    )
    with session_scope(factory) as session:
        done = service.reevaluate_tables(
            session=session,
            settings=settings,
            instance_id=instance_id(session, "db1"),
            tables=["shop.orders"],
        )
    assert done == [QUERY, OTHER_QUERY]
    with session_scope(factory) as session:
        statuses = {r.query_id: (r.action, r.status) for r in session.query(Suggestion)}
    assert statuses == {QUERY: ("add", "new"), OTHER_QUERY: ("replace", "applied")}


def test_a_stale_snapshot_is_read_from_the_server_and_a_dead_one_says_so(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    with session_scope(factory) as session:
        row = session.query(TableSnapshot).one()
        row.taken_at = NOW - timedelta(hours=settings.schema_snapshot_max_age_hours + 1)
    with pytest.raises(
        ConnectionFailed, match=re.escape("cannot connect to 127.0.0.1:1 as 'quanta_ro'")
    ):
        advise(factory, settings)


def test_unresolvable_tables_are_a_clear_refusal(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    with session_scope(factory) as session:
        add_query(session, OTHER_QUERY, "select * from customers where id = ?", None)
    with pytest.raises(service.AdviceUnavailable, match="names no table that can be resolved"):
        advise(factory, settings, OTHER_QUERY)


def test_schema_document_is_the_advisor_format(factory: sessionmaker[Session]) -> None:
    with session_scope(factory) as session:
        document = tables.schema_document(
            session=session,
            instance_id=instance_id(session, "db1"),
            tables=["SHOP.orders", "shop.gone"],
        )
    assert document == {
        "server": {"flavor": "mariadb", "version": "10.11.6-MariaDB"},
        "tables": {"shop.orders": ORDERS},
    }


def test_structure_hash_ignores_statistics_and_sees_indexes() -> None:
    moved = {
        **ORDERS,
        "rows": 5,
        "columns": {**ORDERS["columns"], "id": {"type": "int", "nullable": False, "distinct": 7}},
    }
    assert tables.structure_hash(moved) == tables.structure_hash(ORDERS)
    assert tables.structure_hash(with_index("i", "phone")) != tables.structure_hash(ORDERS)


# --------------------------------------------------------------------------- HTTP


def test_get_suggestions_lists_them_with_the_instance(
    factory: sessionmaker[Session], settings: Settings, client: TestClient
) -> None:
    advise(factory, settings)
    response = client.get(f"/api/v1/queries/{QUERY}/suggestions", params={"instance": "db1"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["query_id"] == QUERY
    [item] = body["suggestions"]
    assert (item["instance"], item["table"], item["action"], item["ddl"], item["status"]) == (
        "db1",
        "shop.orders",
        "add",
        PHONE_AMOUNT_DDL,
        "new",
    )
    assert [c["rule"] for c in item["columns"]] == ["equality", "covering"]
    other = client.get(f"/api/v1/queries/{QUERY}/suggestions", params={"instance": "nodsn"})
    assert other.json()["suggestions"] == []


def test_rejected_suggestions_are_listed_only_on_request(
    factory: sessionmaker[Session], settings: Settings, client: TestClient
) -> None:
    advise(factory, settings)
    with session_scope(factory) as session:
        session.get_one(Suggestion, 1).validation = {"improved": False, "before": [], "after": []}
    path = f"/api/v1/queries/{QUERY}/suggestions"
    assert client.get(path).json()["suggestions"] == []
    assert [
        s["id"] for s in client.get(path, params={"include_rejected": True}).json()["suggestions"]
    ] == [1]


def test_post_queues_the_task_on_the_analysis_queue(
    factory: sessionmaker[Session], settings: Settings, client: TestClient
) -> None:
    response = client.post(f"/api/v1/queries/{QUERY}/suggestions", params={"instance": "db1"})
    assert response.status_code == 202, response.text
    assert response.json() == {"query_id": QUERY, "instance": "db1", "status": "queued"}
    with Connection(settings.broker_url) as conn, conn.SimpleQueue(ANALYSIS_QUEUE) as queue:
        message = queue.get(timeout=10)
        message.ack()
    assert message.headers["task"] == ADVISE_QUERY_TASK
    with session_scope(factory) as session:
        assert message.payload[0] == [QUERY, instance_id(session, "db1")]


@pytest.mark.parametrize(
    ("method", "path", "params", "body", "code", "detail"),
    [
        ("GET", "/queries/NOPE/suggestions", {}, None, 404, "No query with query_id 'NOPE'."),
        (
            "GET",
            f"/queries/{QUERY}/suggestions",
            {"instance": "x"},
            None,
            404,
            "No instance named 'x'.",
        ),
        (
            "POST",
            "/queries/NOPE/suggestions",
            {"instance": "db1"},
            None,
            404,
            "No query with query_id 'NOPE'.",
        ),
        (
            "POST",
            f"/queries/{QUERY}/suggestions",
            {"instance": "x"},
            None,
            404,
            "No instance named 'x'.",
        ),
        (
            "POST",
            f"/queries/{QUERY}/suggestions",
            {"instance": "nodsn"},
            None,
            409,
            "Instance 'nodsn' has no DSN",
        ),
        ("POST", f"/queries/{QUERY}/suggestions", {}, None, 422, "instance"),
        ("PATCH", "/suggestions/99", {}, {"status": "dismissed"}, 404, "No suggestion with id 99."),
        ("PATCH", "/suggestions/1", {}, {"status": "applied"}, 422, "'new' or 'dismissed'"),
        ("PATCH", "/suggestions/1", {}, {"state": "new"}, 422, "status"),
        ("GET", "/instances/1/tables/orders", {}, None, 400, "use database.table"),
        ("GET", "/instances/99/tables/shop.orders", {}, None, 404, "No instance with id 99."),
        (
            "GET",
            "/instances/1/tables/shop.never",
            {},
            None,
            404,
            "No snapshot of shop.never was taken",
        ),
    ],
)
def test_bad_requests_get_a_message(
    factory: sessionmaker[Session],
    client: TestClient,
    method: str,
    path: str,
    params: dict[str, str],
    body: dict[str, str] | None,
    code: int,
    detail: str,
) -> None:
    response = client.request(method, "/api/v1" + path, params=params, json=body)
    assert response.status_code == code, response.text
    assert detail in str(response.json()["detail"])


def test_read_scope_is_required(factory: sessionmaker[Session], client: TestClient) -> None:
    response = client.get(f"/api/v1/queries/{QUERY}/suggestions", headers={"Authorization": ""})
    assert response.status_code == 401


def test_get_table_snapshot(factory: sessionmaker[Session], client: TestClient) -> None:
    response = client.get("/api/v1/instances/1/tables/shop.orders")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["table"] == "shop.orders"
    assert datetime.fromisoformat(body["taken_at"]) == NOW
    assert body["server"] == {"flavor": "mariadb", "version": "10.11.6-MariaDB"}
    assert body["document"] == ORDERS
    assert body["content_hash"] == tables.structure_hash(ORDERS)


def test_daily_work_lists_reachable_instances_with_their_top_queries(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    start = NOW.replace(minute=0, second=0) - timedelta(hours=3)
    with session_scope(factory) as session:
        db1 = instance_id(session, "db1")
        session.get_one(Instance, db1).primary_source = "slowlog"
        # What record_digest writes for one bucket: the buckets and the hour's query totals.
        dimensions = {"schema_name": "shop", "user_name": "app", "client_host": "h"}
        for model, extra in (
            (QueryBucketMinute, dimensions),
            (QueryBucketHour, dimensions),
            (QueryTotalsHour, {}),
        ):
            session.add(
                model(
                    instance_id=db1,
                    bucket_start=start,
                    query_id=QUERY,
                    source="slowlog",
                    count=10,
                    query_time_sum=5.0,
                    **extra,
                )
            )
    with session_scope(factory) as session:
        units = work.daily_work(session=session, settings=settings, now=NOW)
    assert units == [work.DailyUnit(instance_id=db1, instance="db1", top_queries=(QUERY,))]


def add_load(
    session: Session,
    query_id: str,
    seconds: float,
    start: datetime,
    rows_examined: int | None = None,
) -> None:
    """What record_digest writes for one bucket of a query on db1 (10 calls): buckets and
    totals."""
    dimensions = {"schema_name": "shop", "user_name": "app", "client_host": "h"}
    for model, extra in (
        (QueryBucketMinute, dimensions),
        (QueryBucketHour, dimensions),
        (QueryTotalsHour, {}),
    ):
        session.add(
            model(
                instance_id=instance_id(session, "db1"),
                bucket_start=start,
                query_id=query_id,
                source="slowlog",
                count=10,
                query_time_sum=seconds,
                rows_examined_sum=rows_examined,
                **extra,
            )
        )


@pytest.mark.parametrize(
    ("channel_share", "expected"),
    [
        (0.3, (QUERY,)),  # 80% of the load crosses 30%, 20% does not
        (0.1, (QUERY, OTHER_QUERY)),
        (None, (QUERY, OTHER_QUERY)),  # no channel: QUANTA_ADVICE_HOT_MIN_LOAD_SHARE (10%)
        (0.9, ()),
    ],
)
def test_hot_work_picks_queries_over_the_lowest_channel_share_once(
    factory: sessionmaker[Session],
    settings: Settings,
    channel_share: float | None,
    expected: tuple[str, ...],
) -> None:
    start = NOW.replace(second=0) - timedelta(minutes=5)
    with session_scope(factory) as session:
        db1 = instance_id(session, "db1")
        session.get_one(Instance, db1).primary_source = "slowlog"
        add_query(session, OTHER_QUERY, "select 1 from orders", None)
        add_load(session, QUERY, 8.0, start)
        add_load(session, OTHER_QUERY, 2.0, start)
        if channel_share is not None:
            create_channel(
                session=session,
                settings=settings.model_copy(update={"allow_private_webhooks": True}),
                data=ChannelCreate(
                    name="dba",
                    type=ChannelType.WEBHOOK,
                    url="https://hooks.test/q",
                    min_load_share=channel_share,
                ),
            )
    with session_scope(factory) as session:
        units = work.hot_work(session=session, settings=settings, now=NOW)
        explained = sorted(r.query_id for r in session.query(ExplainRun).filter_by(instance_id=db1))
    want = [work.DailyUnit(db1, "db1", expected)] if expected else []
    assert units == want
    assert explained == sorted(expected)
    with session_scope(factory) as session:  # the next pass: explained in the last hour
        assert work.hot_work(session=session, settings=settings, now=NOW) == []


def test_refreshing_suggested_tables_reads_nothing_while_snapshots_are_fresh(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    advise(factory, settings)
    with session_scope(factory) as session:
        refresh = service.refresh_suggested_tables(
            session=session, settings=settings, instance_id=instance_id(session, "db1")
        )
    assert refresh == tables.SnapshotRefresh(fresh=("shop.orders",))


def test_new_and_changed_suggestions_are_published_to_chat_once_per_content(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    with session_scope(factory) as session:
        create_channel(
            session=session,
            # Private targets allowed: the made-up host is then not resolved (no DNS query).
            settings=settings.model_copy(update={"allow_private_webhooks": True}),
            data=ChannelCreate(name="dba", type=ChannelType.WEBHOOK, url="https://hooks.test/q"),
        )
    advise(factory, settings)
    advise(factory, settings)  # the same advice: nothing new to say
    with session_scope(factory) as session:
        deliveries = session.query(Delivery).all()
        assert [(d.suggestion_id, d.event) for d in deliveries] == [(1, "new_suggestion")]
        payload = deliveries[0].payload
    assert (payload["instance"], payload["table"], payload["ddl"]) == (
        "db1",
        "shop.orders",
        PHONE_AMOUNT_DDL,
    )
    assert (payload["fingerprint"], payload["calls"], payload["load_share"]) == (
        FINGERPRINT,
        0,
        0.0,
    )
    assert payload["plan_before"] is None  # no sandbox
    # amount becomes TEXT, so the index stops covering: changed advice, a second message.
    columns = {**ORDERS["columns"], "amount": {"type": "text", "nullable": True}}
    change_schema(factory, {**ORDERS, "columns": columns})
    _, changed, rows = advise(factory, settings)
    assert (changed, [r[3] for r in rows]) == (
        (1,),
        ["ALTER TABLE shop.orders ADD INDEX idx_orders_phone (phone)"],
    )
    with session_scope(factory) as session:
        deliveries = session.query(Delivery).order_by(Delivery.id).all()
        assert [d.suggestion_id for d in deliveries] == [1, 1]
        assert deliveries[1].payload["ddl"] == rows[0][3]


def test_a_table_read_twice_gets_one_row_per_ddl_and_keeps_it_on_rerun(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    with session_scope(factory) as session:
        add_query(
            session,
            OTHER_QUERY,
            "select a.id from orders a join orders b on b.id = a.id where a.amount + ? = ?",
            "SELECT a.id FROM orders a JOIN orders b ON b.id = a.id WHERE a.amount + 1 = 5",
        )
    _, _, rows = advise(factory, settings, OTHER_QUERY)
    assert [r[1:] for r in rows] == [("shop.orders", "none", "", "new")]
    with session_scope(factory) as session:
        row = session.get_one(Suggestion, rows[0][0])
        assert row.reason == "amount + 1 hides amount from any index; rewrite it as amount = 5 - 1."
        assert row.notes == [
            "Joined on its primary key: each row is one primary-key lookup already."
        ]
    assert advise(factory, settings, OTHER_QUERY)[:2] == ((), ())


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["idx_customer"], []),  # the snapshot knows it
        (["PRIMARY", None], []),
        (["idx_orders_phone"], ["shop.orders"]),  # created since the snapshot
        (["idx_customer,idx_orders_phone"], ["shop.orders"]),  # index_merge lists both
    ],
)
def test_a_plan_using_an_index_the_snapshot_lacks_queues_a_refresh(
    factory: sessionmaker[Session], settings: Settings, keys: list[str | None], expected: list[str]
) -> None:
    plan = [{"table": "o", "type": "ref", "key": key} for key in keys]
    with session_scope(factory) as session:
        instance = session.get_one(Instance, instance_id(session, "db1"))
        queued = tables.refresh_if_plan_is_newer(
            session=session, settings=settings, instance=instance, tables=["shop.orders"], plan=plan
        )
    assert queued == expected


CUSTOMERS: dict[str, Any] = {
    "engine": "InnoDB",
    "rows": 5000,
    "data_length": 1_048_576,
    "index_length": 0,
    "columns": {
        "id": {"type": "int", "nullable": False, "distinct": 5000},
        "email": {"type": "varchar(100)", "nullable": False},
    },
    "primary_key": ["id"],
    "indexes": [],
}
JOIN_QUERY = "00000000000000AA"
JOIN_EXAMPLE = (
    "SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id "
    "WHERE c.email = 'a@b.c' AND o.phone = '555-0042'"
)


def test_a_join_gets_one_chat_message_with_every_tables_ddl(
    factory: sessionmaker[Session], settings: Settings
) -> None:
    with session_scope(factory) as session:
        create_channel(
            session=session,
            settings=settings.model_copy(update={"allow_private_webhooks": True}),
            data=ChannelCreate(name="dba", type=ChannelType.WEBHOOK, url="https://hooks.test/q"),
        )
        add_query(session, JOIN_QUERY, "select o.id from orders o join customers c ...", None)
        session.query(QueryClass).filter_by(query_id=JOIN_QUERY).one().tables = [
            "orders",
            "customers",
        ]
        stored = {"text": JOIN_EXAMPLE, "query_time": 1.5, "ts": NOW, "schema": "shop"}
        session.add(
            QueryExample(
                query_id=JOIN_QUERY,
                resolution="minute",
                bucket_start=NOW.replace(second=0),
                instance_id=instance_id(session, "db1"),
                seen=1,
                **{f"{kind}_{k}": v for kind in ("slowest", "sampled") for k, v in stored.items()},
                slowest_literals="full",
                sampled_literals="full",
                slowest_truncated=False,
                sampled_truncated=False,
            )
        )
        session.add(
            TableSnapshot(
                instance_id=instance_id(session, "db1"),
                table_name="shop.customers",
                taken_at=NOW,
                changed_at=NOW,
                server_flavor="mariadb",
                server_version="10.11.6-MariaDB",
                content_hash=tables.structure_hash(CUSTOMERS),
                document=CUSTOMERS,
            )
        )
    _, _, rows = advise(factory, settings, JOIN_QUERY)
    indexed = sorted(r[1] for r in rows if r[2] in ("add", "replace"))
    assert indexed == ["shop.customers", "shop.orders"]
    with session_scope(factory) as session:
        [delivery] = session.query(Delivery).all()
        payload = delivery.payload
    assert payload["table"] == "shop.customers, shop.orders"
    assert payload["ddl"].count("ALTER TABLE") == 2
    assert payload["table_sizes"] == [
        "shop.customers: 5,000 rows, 1.0 MB",
        "shop.orders: 100,000 rows, size unknown",
    ]
    assert payload["window_start"] is not None
