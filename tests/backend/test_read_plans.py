"""How PostgreSQL runs the store's reads: plans that stay cheap as the catalog grows."""

import uuid
from datetime import UTC, datetime

from sqlalchemy import insert, text

from quanta.core.config import Settings
from quanta.core.db import create_db_engine, create_session_factory, session_scope
from quanta.queries import repository
from quanta.queries.models import QueryClass
from tests.fixtures.servers import PostgresServer
from tests.fixtures.store import migrate_store

CLASSES = 3000


def test_leaving_out_quantas_own_statements_probes_an_index_not_the_catalog(
    postgres_server: PostgresServer,
) -> None:
    # Every branch of every read carries this subquery: a scan of the catalog took 0.7-1 ms
    # a branch at 5,000 classes (bench/api_latency.py), more as the catalog grows.
    url = postgres_server.create_database(f"plans_{uuid.uuid4().hex[:12]}")
    settings = Settings(env="test", database_url=url, redis_url=None)
    migrate_store(settings)
    engine = create_db_engine(settings)
    now = datetime.now(UTC)
    own_statement, only_monitoring, monitoring_and_app = (f"{n:016X}" for n in (1, 2, 3))
    flags = {
        own_statement: (True, False, False),
        only_monitoring: (False, True, False),
        monitoring_and_app: (False, True, True),
    }
    rows = [
        {
            "query_id": query_id,
            "fingerprint": f"select * from t{n}",
            "first_seen": now,
            "last_seen": now,
            "own_statement": own,
            "own_seen": own_seen,
            "app_seen": app_seen,
        }
        for n, query_id in enumerate(f"{i:016X}" for i in range(1, CLASSES + 1))
        for own, own_seen, app_seen in [flags.get(query_id, (False, False, True))]
    ]
    with session_scope(create_session_factory(engine)) as session:
        session.execute(insert(QueryClass), rows)
        session.execute(text("ANALYZE query_classes"))
        own = repository.own_query_ids()
        assert set(session.scalars(own)) == {own_statement, only_monitoring}
        compiled = own.compile(engine, compile_kwargs={"literal_binds": True})
        plan = "\n".join(session.scalars(text(f"EXPLAIN {compiled}")))
    engine.dispose()
    assert "ix_query_classes_own" in plan, plan
    assert "Seq Scan" not in plan, plan
