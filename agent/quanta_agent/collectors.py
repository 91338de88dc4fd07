"""What the run loop needs of a periodic collector (performance_schema, statistics).

A collector is polled every ``poll_interval``; what it returns is shipped as one batch of
its source through the same spool and shipper as the slow log.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import Any, Protocol

from quanta_agent.config import InstanceSettings, Source

log = logging.getLogger(__name__)


class Collector(Protocol):
    """Something polled periodically for one instance.

    Attributes:
        source: The batch's ``source`` field, e.g. ``"perfschema"`` or ``"stats"``.
    """

    source: str

    def poll(self) -> dict[str, Any]:
        """Extra body fields for one batch, e.g. ``{"digests": [...], "digest_lost": 0}``.

        An empty dict means there is nothing to ship this time. Raising is allowed: the run
        loop logs the error and polls again at the next interval.
        """
        ...


CollectorFactory = Callable[[InstanceSettings], Collector]

# Where each periodic source's factory lives: (module, function).
FACTORIES: dict[Source, tuple[str, str]] = {
    Source.PERFSCHEMA: ("quanta_agent.perfschema", "make_perfschema_collector"),
    Source.STATS: ("quanta_agent.stats", "make_stats_collector"),
}


def find_factory(source: Source) -> CollectorFactory | None:
    """The factory of a periodic source, or None if this agent has none."""
    module_name, function = FACTORIES[source]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        return None
    factory: CollectorFactory | None = getattr(module, function, None)
    return factory


def make_collectors(instance: InstanceSettings) -> list[Collector]:
    """The collectors of an instance's periodic sources (those this agent has)."""
    collectors: list[Collector] = []
    for source in instance.sources:
        if source == Source.SLOWLOG:
            continue
        factory = find_factory(source)
        if factory is None:
            log.error("%s: source %s is not available in this agent", instance.name, source)
            continue
        collectors.append(factory(instance))
    return collectors


def batch_size(body: dict[str, Any]) -> int:
    """How many items a collector's batch carries (the lengths of its lists), for logs."""
    return sum(len(value) for value in body.values() if isinstance(value, list))


def split_fields(fields: dict[str, Any], max_rows: int) -> list[dict[str, Any]]:
    """Cut one poll's fields into bodies of at most ``max_rows`` rows per list.

    A large digest table polled at once would make a body the server refuses as too large;
    the values that are not lists (``digest_lost``) travel with the first part only.

    Example:
        >>> split_fields({"digests": [1, 2, 3], "digest_lost": 0}, 2)
        [{'digests': [1, 2], 'digest_lost': 0}, {'digests': [3]}]
    """
    if not fields:
        return []
    scalars = {key: value for key, value in fields.items() if not isinstance(value, list)}
    lists = {key: value for key, value in fields.items() if isinstance(value, list)}
    longest = max((len(rows) for rows in lists.values()), default=0)
    parts = []
    for start in range(0, max(longest, 1), max_rows):
        part = {key: rows[start : start + max_rows] for key, rows in lists.items()}
        parts.append({**part, **scalars} if start == 0 else part)
    return parts
