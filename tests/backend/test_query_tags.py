"""Query tags and instance labels (issue 45), in process on SQLite and PostgreSQL stores: a
slow log with sqlcommenter and plain tags imported through the agent's importer (its folder,
its wire format) and the batch service; the filters, groups and filter lists answer with
exact counts; a flood of distinct values of a kept key stays within
QUANTA_TAG_VALUES_PER_KEY; a channel limited to tags or labels gets only its queries."""

import gzip
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.ingest import service as ingest
from quanta.ingest.models import IngestBatch
from quanta.instances.models import Instance
from quanta.notify import dispatch
from quanta.notify import publish as pub
from quanta.notify import service as notify_service
from quanta.notify.events import ImpactNotice, RegressionNotice, SuggestionNotice
from quanta.notify.schemas import ChannelCreate
from quanta.queries.models import QueryBucketHour, QueryBucketMinute, TagValue
from quanta.wire import IngestBatchIn
from quanta_agent.importer import ImportReport, import_file
from quanta_agent.payload import encode_batch
from tests.backend.test_notify_service import Receiver, receiver
from tests.fixtures.app import ADMIN_TOKEN
from tests.helpers import roll_up_all

__all__ = ["receiver"]  # the fixture, shared with the notification tests

NOW = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=10)
WINDOW = {
    "from": (NOW - timedelta(hours=1)).isoformat(),
    "to": (NOW + timedelta(minutes=30)).isoformat(),
}
# (statement, executions): sqlcommenter at the end, a plain list at the start, marginalia,
# and an untagged one. traceparent is not a kept key by default.
STATEMENTS = [
    ("SELECT * FROM cart WHERE id = {n} /*action='checkout',route='%2Fcart',team='payments',"
     "traceparent='00-{n:032x}-{n:016x}-01'*/;", 6),
    ("/* service=billing, team=payments */ UPDATE invoices SET paid = 1 WHERE id = {n};", 4),
    ("SELECT name FROM products WHERE id = {n} /*controller:catalog,action:show,team:web*/;", 3),
    ("SELECT 1 FROM dual WHERE {n} = {n};", 2),
]  # fmt: skip


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """At most 5 values per tag key; on both stores (tag filters are LIKE patterns, label
    filters JSON lookups, each dialect its own SQL)."""
    url = None
    if request.param == "postgresql":
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(f"tags_{uuid.uuid4().hex[:12]}")
    return Settings(
        env="test", data_dir=tmp_path / "data", database_url=url, redis_url=None,
        tag_values_per_key=5,
    )  # fmt: skip


def slow_log(path: Path, statements: list[tuple[str, int]], start: datetime = NOW) -> Path:
    lines = []
    n = 0
    for sql, times in statements:
        for _ in range(times):
            ts = start + timedelta(seconds=n % 50)
            n += 1
            lines += [
                f"# Time: {ts.strftime('%Y-%m-%dT%H:%M:%S')}.000000Z",
                "# User@Host: app[app] @ web1 [10.0.0.1]  Id:    42",
                "# Query_time: 0.100000  Lock_time: 0.000010 Rows_sent: 1  Rows_examined: 1",
                "use shop;",
                f"SET timestamp={int(ts.timestamp())};",
                sql.format(n=n),
            ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class InProcessShipper:
    """The agent's Shipper, delivering to the in-process API and processing each batch."""

    instance = "db1"

    def __init__(
        self, client: TestClient, factory: sessionmaker[Session], settings: Settings
    ) -> None:
        self.client, self.factory, self.settings = client, factory, settings
        self.batches = 0

    def ship(self, batch: IngestBatchIn) -> SimpleNamespace:
        self.batches += 1
        batch_id = f"tags-{self.batches}-{id(batch)}"
        data = encode_batch(batch.model_copy(update={"batch_id": batch_id}))
        response = self.client.post(
            "/api/v1/ingest", content=data, headers={"Content-Encoding": "gzip"}
        )
        assert response.status_code == 202, response.text
        with session_scope(self.factory) as session:
            pk = session.scalar(select(IngestBatch.id).where(IngestBatch.batch_id == batch_id))
            assert pk is not None
            ingest.process_batch(session=session, settings=self.settings, batch_pk=pk)
        return SimpleNamespace(duplicate=False)


def import_log(
    client: TestClient, factory: sessionmaker[Session], settings: Settings, path: Path
) -> ImportReport:
    report = ImportReport()
    shipper = InProcessShipper(client, factory, settings)
    import_file(path, shipper=shipper, batch_size=50_000, report=report)  # type: ignore[arg-type]
    return report


def counts(client: TestClient, **params: Any) -> dict[str, int]:
    response = client.get("/api/v1/queries", params={**WINDOW, **params})
    assert response.status_code == 200, response.text
    body = response.json()
    if body["group_by"] != "query":
        return {row["value"]: row["count"] for row in body["groups"]}
    return {row["fingerprint"]: row["count"] for row in body["rows"]}


def test_tags_filter_and_group_with_exact_counts(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings, tmp_path: Path
) -> None:
    report = import_log(client, session_factory, settings, slow_log(tmp_path / "s.log", STATEMENTS))
    assert report.events == 15

    assert counts(client, group_by="tag:team") == {"payments": 10, "web": 3, "": 2}
    # Sorted by a percentile: the histograms of a value's tag sets merged.
    p95 = client.get(
        "/api/v1/queries", params={**WINDOW, "group_by": "tag:team", "sort": "query_time_p95"}
    ).json()["groups"]
    assert sorted(g["count"] for g in p95) == [2, 3, 10]
    assert all(g["query_time_p95"] == pytest.approx(0.1, rel=0.05) for g in p95)
    assert counts(client, group_by="tag:action") == {"checkout": 6, "show": 3, "": 6}
    # traceparent is not kept (QUANTA_TAG_KEYS): every statement is in its "" group.
    assert counts(client, group_by="tag:traceparent") == {"": 15}
    assert counts(client, tag="team:payments") == {
        "select * from cart where id=?": 6,
        "update invoices set paid=? where id=?": 4,
    }
    # AND across keys, OR within a key.
    assert counts(client, tag=["team:payments", "service:billing"]) == {
        "update invoices set paid=? where id=?": 4
    }
    assert sum(counts(client, tag=["team:payments", "team:web"]).values()) == 13
    assert counts(client, tag="route:/cart") == {"select * from cart where id=?": 6}
    assert counts(client, tag="team:nobody") == {}
    assert client.get("/api/v1/queries", params={"tag": "team"}).status_code == 400

    filters = client.get("/api/v1/filters", params=WINDOW).json()
    assert {v["value"]: v["count"] for v in filters["tags"]["team"]} == {"payments": 10, "web": 3}
    assert filters["tags"]["team"][0]["share"] == pytest.approx(10 / 15)
    assert set(filters["tags"]) == {"action", "controller", "route", "service", "team"}

    # A query's detail breaks its load down by tag.
    (row,) = client.get("/api/v1/queries", params={**WINDOW, "tag": "route:/cart"}).json()["rows"]
    detail = client.get(f"/api/v1/queries/{row['query_id']}", params=WINDOW).json()
    assert {r["value"]: r["count"] for r in detail["breakdown"]["tag:team"]} == {"payments": 6}

    # Rolled up into hours and days, the tags stay: the same answers from those tables.
    with session_scope(session_factory) as session:
        assert session.scalar(select(func.count()).select_from(QueryBucketMinute)) == 4
    roll_up_all(session_factory, NOW + timedelta(days=2))
    with session_scope(session_factory) as session:
        hours = session.execute(select(QueryBucketHour.tags, QueryBucketHour.count)).all()
    assert sorted(hours) == [
        ("", 2),
        ("action=checkout,route=/cart,team=payments", 6),
        ("action=show,controller=catalog,team=web", 3),
        ("service=billing,team=payments", 4),
    ]
    week = {"from": (NOW - timedelta(days=7)).isoformat(), "to": WINDOW["to"]}
    assert counts(client, group_by="tag:team", **week) == {"payments": 10, "web": 3, "": 2}


def test_labels_filter_and_group(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings, tmp_path: Path
) -> None:
    import_log(client, session_factory, settings, slow_log(tmp_path / "s.log", STATEMENTS))
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    (instance,) = client.get("/api/v1/instances", headers=admin).json()
    response = client.patch(
        f"/api/v1/instances/{instance['id']}",
        json={"labels": {"environment": "prod", "cluster": "eu-1"}},
        headers=admin,
    )
    assert response.status_code == 200, response.text
    assert response.json()["labels"] == {"cluster": "eu-1", "environment": "prod"}
    assert counts(client, group_by="label:environment") == {"prod": 15}
    assert sum(counts(client, label="cluster:eu-1").values()) == 15
    assert counts(client, label="cluster:us-1") == {}
    filters = client.get("/api/v1/filters", params=WINDOW).json()
    assert filters["labels"]["environment"] == [{"value": "prod", "count": 15, "share": 1.0}]

    # An agent's config sets them with its status reports.
    report = {
        "batch_id": "status-slowlog-1", "instance": "db1", "source": "slowlog",
        "agent": {"version": "1", "host": "h", "interval": 60, "labels": {"environment": "dev"}},
    }  # fmt: skip
    response = client.post("/api/v1/ingest", content=gzip.compress(json.dumps(report).encode()),
                           headers={"Content-Encoding": "gzip"})  # fmt: skip
    assert response.status_code == 202, response.text
    assert counts(client, group_by="label:environment") == {"dev": 15}


def test_a_flood_of_tag_values_stays_within_the_cap(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings, tmp_path: Path
) -> None:
    """2,000 distinct values of a kept key: 5 stored (the cap), the rest under "other", and
    every execution counted."""
    flood = [(f"SELECT * FROM t WHERE id = {{n}} /*route='%2Freq%2F{n}'*/", 1) for n in range(2000)]
    import_log(client, session_factory, settings, slow_log(tmp_path / "f.log", flood))
    with session_scope(session_factory) as session:
        values = set(session.scalars(select(TagValue.tag_value).where(TagValue.tag_key == "route")))
        rows = session.scalar(select(func.count()).select_from(QueryBucketMinute))
        total = session.scalar(select(func.sum(QueryBucketMinute.count)))
    assert len(values) == 5
    assert total == 2000
    assert rows == 6  # one minute: 5 values and "other"
    groups = counts(client, group_by="tag:route")
    assert groups["other"] == 1995
    assert sum(groups.values()) == 2000


def test_a_channel_limited_to_a_tag_or_label_gets_only_its_queries(
    client: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
    tmp_path: Path,
    receiver: Receiver,
) -> None:
    """Suggestions, regressions and impacts reach the channels whose tags and labels match,
    delivered to a real local HTTP receiver."""
    import_log(client, session_factory, settings, slow_log(tmp_path / "s.log", STATEMENTS))
    with session_scope(session_factory) as session:
        instance = session.scalars(select(Instance)).one()
        instance.labels = {"environment": "prod"}
    rows = client.get("/api/v1/queries", params=WINDOW).json()["rows"]
    assert len(rows) == 4
    cart = next(r["query_id"] for r in rows if "from cart" in r["fingerprint"])
    products = next(r["query_id"] for r in rows if "from products" in r["fingerprint"])
    untagged = next(r["query_id"] for r in rows if "from dual" in r["fingerprint"])
    notify = settings.model_copy(update={"allow_private_webhooks": True})
    channels = {
        "/payments": {"tags": {"team": "payments"}},
        "/web-checkout": {"tags": {"team": "web", "action": "checkout"}},  # no query has both
        "/prod": {"labels": {"environment": "prod"}},
        "/dev": {"labels": {"environment": "dev"}},
        "/payments-prod": {"tags": {"team": "payments"}, "labels": {"environment": "prod"}},
        "/all": {},
    }
    for path, limits in channels.items():
        data = ChannelCreate.model_validate(
            {"name": path[1:], "type": "webhook", "url": receiver.url(path),
             "events": ["new_suggestion", "regression", "annotation_impact"], **limits}
        )  # fmt: skip
        with session_scope(session_factory) as session:
            notify_service.create_channel(session=session, settings=notify, data=data)

    def sent(item: Any) -> set[str]:
        receiver.requests.clear()
        with session_scope(session_factory) as session:
            if isinstance(item, RegressionNotice):
                created = pub.publish_regression(session=session, settings=notify, notice=item)
            elif isinstance(item, ImpactNotice):
                created = pub.publish_impact(session=session, settings=notify, notice=item)
            else:
                created = pub.publish_suggestion(session=session, settings=notify, notice=item)
        for delivery_id in created:
            with session_scope(session_factory) as session:
                dispatch.attempt_delivery(session, notify, delivery_id, datetime.now(UTC))
        return {request.path for request in receiver.requests}

    everywhere_prod = {"/prod", "/all"}
    assert sent(suggestion(1, cart)) == {"/payments", "/payments-prod", *everywhere_prod}
    assert sent(suggestion(2, products)) == everywhere_prod
    assert sent(suggestion(3, untagged)) == everywhere_prod
    regression = RegressionNotice(
        regression_id=7, instance="db1", query_id=cart, fingerprint="select", metric="load",
        before=0.1, after=1.0, since=NOW.isoformat(), cause="more calls", load_share=0.5,
    )  # fmt: skip
    assert sent(regression) == {"/payments", "/payments-prod", *everywhere_prod}
    impact = ImpactNotice(
        annotation_id=3, text="deploy", instance_names=["db1"],
        regressions=[{"query_id": products, "metric": "avg_latency"}],
    )  # fmt: skip
    assert sent(impact) == everywhere_prod
    impact = ImpactNotice(
        annotation_id=4, text="deploy", regressions=[{"query_id": cart, "metric": "load"}]
    )
    assert sent(impact) == {"/payments", "/payments-prod", *everywhere_prod}


def suggestion(suggestion_id: int, query_id: str) -> SuggestionNotice:
    return SuggestionNotice(
        suggestion_id=suggestion_id, query_id=query_id, fingerprint="select", instance="db1",
        table="shop.cart", load_share=0.4, calls=6, ddl="ALTER TABLE shop.cart ADD INDEX i (a)",
        reason="r", content_hash=f"h{suggestion_id}", plan_before=None, plan_after=None,
    )  # fmt: skip
