"""A flood of tag values: 20,000 statements whose kept tag (``route``) is a request id.

A tag key is a bucket dimension, so an application that puts a per-request value in a kept
key (``/*route='/req/8c1f…'*/``) would make every statement a bucket of its own.
QUANTA_TAG_VALUES_PER_KEY caps the values per key and instance (later ones are stored as
"other"). This imports one slow log of ``--events`` such statements (one every 0.1 s, so
about ``events / 600`` minutes) through the agent's importer and the batch service, in
process on a SQLite store (as tests/backend/test_query_tags.py does), once with the cap
(``--cap``, default the setting's default) and once without it, and reports for each:
minute bucket rows stored, tag values recorded, events counted (must equal those sent),
the rows of ``group_by=tag:route`` and the seconds the import took. It also times the tag
parser per statement: with a comment seen before (parsed once, remembered), with a new
comment each time (the flood's), and without a comment.

Usage: .venv/bin/python bench/tag_flood.py [--events 20000] [--cap 100]
Last line: ``RESULT rows=R values=V counted=C groups=G seconds=S uncapped_rows=...
parse_us_tagged=T parse_us_new_comment=N parse_us_untagged=U``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import timeit
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from quanta.analysis.tags import tags_of
from quanta.auth.service import ensure_admin_token
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.main import create_app
from quanta.queries.models import QueryBucketMinute, TagValue
from quanta_agent.importer import ImportReport, import_file
from tests.backend.test_query_tags import InProcessShipper
from tests.fixtures.store import migrate_store

TOKEN = "qnt_bench_admin_token"
TAGGED = (
    "SELECT * FROM cart WHERE id = 7 "
    "/*action='show',route='%2Freq%2F{id}',traceparent='00-{id}-01'*/"
)
UNTAGGED = "SELECT * FROM cart WHERE id = 7"
REPEATED = "SELECT * FROM cart WHERE id = 7 /*action='show',route='%2Fcart',framework='django'*/"


def write_log(path: Path, events: int, start: datetime) -> None:
    with path.open("w", encoding="utf-8") as out:
        for n in range(events):
            ts = start + timedelta(milliseconds=100 * n)
            out.write(
                f"# Time: {ts.strftime('%Y-%m-%dT%H:%M:%S.%f')}Z\n"
                "# User@Host: app[app] @ web1 [10.0.0.1]  Id:    42\n"
                "# Query_time: 0.010000  Lock_time: 0.000010 Rows_sent: 1  Rows_examined: 1\n"
                f"SET timestamp={int(ts.timestamp())};\n"
                f"{TAGGED.format(id=uuid.UUID(int=n).hex)};\n"
            )


def run(log: Path, cap: int, start: datetime, events: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(
            env="test", data_dir=Path(data), database_url=None, redis_url=None,
            tag_values_per_key=cap,
        )  # fmt: skip
        migrate_store(settings)
        app = create_app(settings)
        with session_scope(app.state.session_factory) as session:
            ensure_admin_token(session=session, token=TOKEN)
        with TestClient(app, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            factory = app.state.session_factory
            began = time.perf_counter()
            report = ImportReport()
            shipper = InProcessShipper(client, factory, settings)
            import_file(log, shipper=shipper, batch_size=50_000, report=report)  # type: ignore[arg-type]
            seconds = time.perf_counter() - began
            with session_scope(factory) as session:
                rows = session.scalar(select(func.count()).select_from(QueryBucketMinute)) or 0
                counted = session.scalar(select(func.sum(QueryBucketMinute.count))) or 0
                values = session.scalar(select(func.count()).select_from(TagValue)) or 0
            window = {
                "from": (start - timedelta(hours=1)).isoformat(),
                "to": (start + timedelta(seconds=events / 10 + 3600)).isoformat(),
                "group_by": "tag:route",
                "limit": 1000,
            }
            groups = client.get("/api/v1/queries", params=window).json()["groups"]
        app.state.engine.dispose()
    return {
        "rows": rows, "values": values, "counted": counted, "groups": len(groups),
        "seconds": round(seconds, 2),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--cap", type=int, default=Settings().tag_values_per_key)
    args = parser.parse_args()
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=2)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "flood.log"
        write_log(log, args.events, start)
        capped = run(log, args.cap, start, args.events)
        uncapped = run(log, 10**9, start, args.events)
    loops = 20_000
    distinct = iter([TAGGED.format(id=uuid.UUID(int=n).hex) for n in range(10**6, 10**6 + loops)])
    parse_tagged = timeit.timeit(lambda: tags_of(REPEATED), number=loops) / loops * 1e6
    parse_distinct = timeit.timeit(lambda: tags_of(next(distinct)), number=loops) / loops * 1e6
    parse_untagged = timeit.timeit(lambda: tags_of(UNTAGGED), number=loops) / loops * 1e6
    print(f"events sent: {args.events}, cap: {args.cap} values per key and instance")
    for name, figures in (("capped", capped), ("uncapped", uncapped)):
        print(f"{name}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))
    print(
        f"tag parser: {parse_tagged:.1f} us per statement with a comment seen before, "
        f"{parse_distinct:.1f} us with a new comment, {parse_untagged:.2f} us without one"
    )
    result = " ".join(f"{k}={v}" for k, v in capped.items())
    result += " " + " ".join(f"uncapped_{k}={v}" for k, v in uncapped.items())
    print(
        f"RESULT {result} parse_us_tagged={parse_tagged:.1f} "
        f"parse_us_new_comment={parse_distinct:.1f} parse_us_untagged={parse_untagged:.2f}"
    )


if __name__ == "__main__":
    main()
