"""The UI's API client is generated from frontend/openapi.json: it must match the app."""

import json
from pathlib import Path

from quanta.core.config import Settings
from quanta.main import create_app

COMMITTED = Path(__file__).resolve().parents[2] / "frontend" / "openapi.json"


def test_committed_schema_matches_the_app(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path, database_url=None))
    assert json.loads(COMMITTED.read_text()) == app.openapi(), (
        "frontend/openapi.json is stale: run `.venv/bin/quanta openapi --output "
        "frontend/openapi.json && (cd frontend && npm run gen:api)`"
    )


def test_operation_ids_are_stable(tmp_path: Path) -> None:
    schema = create_app(Settings(data_dir=tmp_path, database_url=None)).openapi()
    operation_ids = {op["operationId"] for path in schema["paths"].values() for op in path.values()}
    assert {"list_queries", "whoami", "ingest_batch", "get_ingest_batch"} <= operation_ids
