"""Fuzzing the ingest payload decoder and POST /ingest (hypothesis): malformed gzip, gzip
bombs, huge strings, deep nesting and wrong types are 4xx with a message; nothing is stored."""

import gzip
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.core.http import RateLimiter
from quanta.ingest.models import IngestBatch
from quanta.ingest.service import (
    DecodedBatch,
    IngestError,
    InvalidPayload,
    PayloadTooLarge,
    decode_batch,
)

DECODED_LIMIT = 64 * 1024
SMALL = Settings(
    env="test", ingest_max_body_bytes=32 * 1024, ingest_max_decoded_bytes=DECODED_LIMIT,
    ingest_max_events=50,
)  # fmt: skip
FUZZ = settings(
    max_examples=150,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

EVENT = {"ts": "2026-01-01T00:00:00Z", "query": "SELECT 1", "query_time": 0.1}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
# Near-valid batches: the right keys with values of any type, so validation is exercised deeply.
near_batches = st.fixed_dictionaries(
    {
        "batch_id": st.one_of(st.just("b1"), json_values),
        "instance": st.one_of(st.just("db1"), json_values),
        "events": st.one_of(
            st.lists(
                st.fixed_dictionaries(
                    {k: st.one_of(st.just(v), json_values) for k, v in EVENT.items()}
                ),
                max_size=3,
            ),
            json_values,
        ),
    },
    optional={"source": json_values, "examples": json_values, "digests": json_values},
)


def _decode(body: bytes, encoding: str | None) -> DecodedBatch | IngestError:
    try:
        return decode_batch(body=body, content_encoding=encoding, settings=SMALL)
    except IngestError as exc:
        return exc


@FUZZ
@given(body=st.binary(max_size=4096), encoding=st.sampled_from([None, "gzip", "identity", "br"]))
def test_arbitrary_bytes_decode_or_fail_with_a_message(body: bytes, encoding: str | None) -> None:
    outcome = _decode(body, encoding)
    if isinstance(outcome, IngestError):
        assert str(outcome)
    else:
        assert outcome.batch.batch_id


@FUZZ
@given(batch=near_batches, compress=st.booleans())
def test_wrong_types_are_invalid_payloads_never_crashes(
    batch: dict[str, Any], compress: bool
) -> None:
    raw = json.dumps(batch).encode()
    body = gzip.compress(raw) if compress else raw
    outcome = _decode(body, "gzip" if compress else None)
    if isinstance(outcome, IngestError):
        assert isinstance(outcome, (InvalidPayload, PayloadTooLarge))
        assert str(outcome)


@FUZZ
@given(data=st.binary(min_size=1, max_size=2048), cut=st.integers(min_value=0, max_value=60))
def test_corrupt_or_truncated_gzip_is_invalid(data: bytes, cut: int) -> None:
    whole = gzip.compress(data)
    truncated = whole[: max(1, len(whole) - 1 - cut)]
    outcome = _decode(truncated, "gzip")
    assert isinstance(outcome, InvalidPayload)
    assert "gzip" in str(outcome)
    flipped = bytearray(whole)
    flipped[min(len(flipped) - 1, 10 + cut)] ^= 0xFF
    assert isinstance(_decode(bytes(flipped), "gzip"), IngestError)


@pytest.mark.parametrize("factor", [1, 16, 400])
def test_gzip_bombs_stop_at_the_decoded_limit(factor: int) -> None:
    # Zeros compress ~1000:1: a body under the wire limit that inflates far past the limit.
    bomb = gzip.compress(b"0" * (DECODED_LIMIT * factor + 1), compresslevel=9)
    assert len(bomb) < SMALL.ingest_max_body_bytes
    outcome = _decode(bomb, "gzip")
    assert isinstance(outcome, PayloadTooLarge)
    assert str(outcome) == f"Decompressed body exceeds {DECODED_LIMIT} bytes."


def test_a_bomb_inside_a_valid_gzip_member_chain_is_bounded() -> None:
    # Two concatenated members: the second one must not slip past the limit.
    first = gzip.compress(json.dumps({"batch_id": "b", "instance": "i"}).encode())
    second = gzip.compress(b" " * (DECODED_LIMIT * 4))
    outcome = _decode(first + second, "gzip")
    assert isinstance(outcome, InvalidPayload)
    assert "single gzip member" in str(outcome)


@pytest.mark.parametrize("depth", [100, 1_000, 20_000])
def test_deep_nesting_is_invalid(depth: int) -> None:
    nested = "[" * depth + "]" * depth
    body = f'{{"batch_id": "b", "instance": "i", "events": [{nested}]}}'.encode()
    outcome = _decode(gzip.compress(body), "gzip")
    assert isinstance(outcome, InvalidPayload)
    assert str(outcome).startswith("Invalid batch")


def test_huge_strings_and_too_many_events() -> None:
    huge = {"batch_id": "b", "instance": "i" * 200_000, "events": []}
    outcome = _decode(json.dumps(huge).encode(), None)
    assert isinstance(outcome, PayloadTooLarge)  # over the wire limit as sent
    compressed = gzip.compress(json.dumps({**huge, "instance": "i" * 50_000}).encode())
    outcome = _decode(compressed, "gzip")
    assert isinstance(outcome, InvalidPayload)
    assert "instance" in str(outcome)
    many = {"batch_id": "b", "instance": "i", "events": [EVENT] * 51}
    outcome = _decode(gzip.compress(json.dumps(many).encode()), "gzip")
    assert isinstance(outcome, PayloadTooLarge)
    assert "limit is 50" in str(outcome)


# ------------------------------------------------------------------------ over HTTP


def _stored(factory: sessionmaker[Session]) -> int:
    with session_scope(factory) as session:
        return session.scalar(select(func.count()).select_from(IngestBatch)) or 0


@pytest.fixture
def fuzz_client(
    client: TestClient, settings: Settings, session_factory: sessionmaker[Session]
) -> TestClient:
    unlimited = settings.model_copy(update={"ingest_rate_limit": "1000000/minute"})
    client.app.state.rate_limiter = RateLimiter(unlimited)  # type: ignore[attr-defined]
    return client


bad_bodies = st.one_of(
    st.binary(max_size=2048).map(lambda b: (b, None)),
    st.binary(max_size=2048).map(lambda b: (b, "gzip")),
    near_batches.map(lambda b: (gzip.compress(json.dumps(b).encode()), "gzip")),
    st.integers(min_value=1, max_value=5000).map(lambda d: (("[" * d + "]" * d).encode(), None)),
)


@settings(
    max_examples=60,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=bad_bodies)
def test_http_answers_4xx_with_a_message_and_stores_nothing_on_rejection(
    fuzz_client: TestClient,
    session_factory: sessionmaker[Session],
    case: tuple[bytes, str | None],
) -> None:
    body, encoding = case
    before = _stored(session_factory)
    headers = {"Content-Encoding": encoding} if encoding else {}
    response = fuzz_client.post("/api/v1/ingest", content=body, headers=headers)
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert response.status_code in (413, 422)
        assert response.json()["detail"]
        assert _stored(session_factory) == before
    else:
        assert _stored(session_factory) in (before, before + 1)


def test_http_gzip_bomb_is_413_and_stores_nothing(
    fuzz_client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    body = gzip.compress(b"0" * (settings.ingest_max_decoded_bytes + 1), compresslevel=9)
    response = fuzz_client.post(
        "/api/v1/ingest", content=body, headers={"Content-Encoding": "gzip"}
    )
    assert response.status_code == 413
    assert "Decompressed body exceeds" in response.json()["detail"]
    assert _stored(session_factory) == 0
