"""GET /queries/{query_id}/tables: the tables a query references, with their snapshots."""

from datetime import UTC, datetime

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.db import session_scope
from quanta.instances.models import Instance
from quanta.queries.models import QueryClass
from quanta.tables.models import TableSnapshot

NOW = datetime(2026, 11, 22, 3, 0, tzinfo=UTC)
QUERY = "0123456789ABCDEF"


def snapshot(instance_id: int, name: str) -> TableSnapshot:
    return TableSnapshot(
        instance_id=instance_id, table_name=name, taken_at=NOW, changed_at=NOW,
        server_flavor="mariadb", server_version="10.11.6", content_hash=name,
        document={"engine": "InnoDB", "columns": {}, "primary_key": [], "indexes": []},
    )  # fmt: skip


def test_each_referenced_table_lists_its_snapshots_on_every_instance(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    with session_scope(session_factory) as session:
        session.add_all([Instance(id=1, name="db1"), Instance(id=2, name="db2")])
        session.add(
            QueryClass(
                query_id=QUERY, fingerprint="select * from orders join crm.customers ...",
                first_seen=NOW, last_seen=NOW, statement_type="select",
                tables=["orders", "crm.customers"],
            )
        )  # fmt: skip
        session.flush()
        for instance_id, name in (
            (1, "shop.orders"), (2, "archive.orders"), (1, "crm.customers"),
            (1, "shop.orders_old"), (2, "crm.customers_x"),
        ):  # fmt: skip
            session.add(snapshot(instance_id, name))
    body = client.get(f"/api/v1/queries/{QUERY}/tables").json()
    assert body["query_id"] == QUERY
    found = {
        t["name"]: [(s["instance_id"], s["table"]) for s in t["snapshots"]] for t in body["tables"]
    }
    assert found == {
        "orders": [(2, "archive.orders"), (1, "shop.orders")],
        "crm.customers": [(1, "crm.customers")],
    }
    assert body["tables"][0]["snapshots"][0]["server"] == {
        "flavor": "mariadb",
        "version": "10.11.6",
    }


def test_unknown_query_is_404(client: TestClient) -> None:
    response = client.get("/api/v1/queries/FFFFFFFFFFFFFFFF/tables")
    assert response.status_code == 404
    assert response.json()["detail"] == "No query with query_id 'FFFFFFFFFFFFFFFF'."
