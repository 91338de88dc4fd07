"""Helpers several test modules share: one copy here instead of one per module.

Fixtures live in tests/fixtures/ (registered in tests/conftest.py); these are plain functions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.config import Settings
from quanta.core.db import session_scope

T = TypeVar("T")

POLL_INTERVAL = 0.05


def poll(
    condition: Callable[[], T], timeout: float, *, interval: float = POLL_INTERVAL
) -> T | None:
    """Call ``condition`` until it returns something truthy or ``timeout`` seconds pass.

    Returns that value, or the falsy value of one last call made at the deadline. A wait on
    a condition instead of a fixed sleep: it ends as soon as the thing happened.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    return condition()


def wait_until(
    condition: Callable[[], T],
    timeout: float,
    what: str,
    *,
    interval: float = POLL_INTERVAL,
    on_fail: Callable[[], str] = str,
) -> T:
    """:func:`poll`, failing the test with ``what`` (and ``on_fail()``) when it times out."""
    value = poll(condition, timeout, interval=interval)
    if not value:
        raise AssertionError(f"timed out after {timeout:g}s waiting for {what}\n{on_fail()}")
    return value


def process_all(factory: sessionmaker[Session], settings: Settings | None = None) -> int:
    """Process every stored ingest batch in id order, as the worker would; events counted."""
    from quanta.ingest import service
    from quanta.ingest.models import IngestBatch

    settings = settings or Settings(env="test")
    with session_scope(factory) as session:
        ids = list(session.scalars(select(IngestBatch.id).order_by(IngestBatch.id)))
    counted = 0
    for batch_pk in ids:
        with session_scope(factory) as session:
            counted += service.process_batch(session=session, settings=settings, batch_pk=batch_pk)
    return counted
