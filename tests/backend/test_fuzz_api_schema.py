"""schemathesis against the app's own OpenAPI schema, in-process: no generated request
(valid or not, with an admin token) may get a 5xx answer."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import Case, GenerationMode

from quanta.auth.service import ensure_admin_token
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.main import API_PREFIX, create_app
from tests.fixtures.store import migrate_store

# Each mode sends some thousand requests one after the other: started late, it would be the
# last test running.
pytestmark = pytest.mark.long(seconds=35)

ADMIN_TOKEN = "qnt_fuzz_admin_token"
EXAMPLES_PER_OPERATION = 10


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.BaseSchema]:
    data_dir: Path = tmp_path_factory.mktemp("schemathesis")
    # Short timeouts: generated DSNs and webhook URLs point nowhere.
    app_settings = Settings(
        env="test",
        data_dir=data_dir,
        monitored_connect_timeout_seconds=1,
        monitored_statement_timeout_seconds=1.0,
        notify_timeout_seconds=1.0,
        notify_max_attempts=1,
        ingest_rate_limit="100000/minute",
        login_rate_limit="100000/minute",
        login_address_rate_limit="100000/minute",
    )
    migrate_store(app_settings)
    app = create_app(app_settings)
    with session_scope(app.state.session_factory) as session:
        ensure_admin_token(session=session, token=ADMIN_TOKEN)
    yield schemathesis.openapi.from_asgi(f"{API_PREFIX}/openapi.json", app)
    app.state.engine.dispose()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_generated_request_gets_a_server_error(
    api_schema: schemathesis.BaseSchema, mode: GenerationMode
) -> None:
    """Valid requests (positive) and ones that break the schema (negative) alike."""
    failures: list[str] = []
    calls = 0
    operations = [result.ok() for result in api_schema.get_all_operations()]  # type: ignore[union-attr]
    for operation in operations:

        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            database=None,
            derandomize=True,  # the same requests every run: a failure reproduces
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def exercise(case: Case[Any]) -> None:
            nonlocal calls
            calls += 1
            try:
                response = case.call(headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
            except Exception as exc:  # the in-process client re-raises what the app did not handle
                failures.append(f"{case.method} {case.path} -> {exc!r}: {case.as_curl_command()}")
                return
            if response.status_code >= 500:
                failures.append(
                    f"{case.method} {case.path} -> {response.status_code}: "
                    f"{case.as_curl_command()}\n    {response.text[:300]}"
                )

        try:
            exercise()
        except Unsatisfiable:
            # Nothing to break in an operation without parameters or body (negative mode).
            assert mode is GenerationMode.NEGATIVE
    assert failures == [], "\n".join(failures)
    assert len(operations) >= 30
    assert calls >= len(operations) * 3
