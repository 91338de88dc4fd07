"""The sources an agent collects from an instance: one registry that the agent's config, the
ingest wire format, the instances domain and the query reads derive from.

A source is a name on the wire (``IngestBatchIn.source``) and in the agent's config
(``sources``). ``slowlog`` and ``perfschema`` carry query buckets, so either can be the
instance's primary source (the one whose buckets count in totals); ``stats`` carries table,
index and user statistics, never query load.

Example:
    >>> SOURCES
    ('slowlog', 'perfschema', 'stats')
    >>> [s for s in SOURCES if s not in QUERY_SOURCES]
    ['stats']
    >>> DEFAULT_PRIMARY_SOURCE
    'slowlog'
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "DEFAULT_PRIMARY_SOURCE",
    "QUERY_SOURCES",
    "SOURCES",
    "QuerySourceName",
    "SourceName",
]

# The Literals are the definitions (pydantic and mypy read them); the tuples are derived.
SourceName = Literal["slowlog", "perfschema", "stats"]
"""A source's name, as the agent's config and the ingest API spell it."""

QuerySourceName = Literal["slowlog", "perfschema"]
"""A source whose buckets can be an instance's totals (its primary source)."""

SOURCES: Final[tuple[SourceName, ...]] = get_args(SourceName)
"""Every source, in the order the docs list them."""

QUERY_SOURCES: Final[tuple[QuerySourceName, ...]] = get_args(QuerySourceName)
"""The sources that carry query buckets (statistics batches are not query load)."""

DEFAULT_PRIMARY_SOURCE: Final[QuerySourceName] = "slowlog"
"""The source whose buckets count for an instance that has not chosen one yet, and the one
that takes over when it reports (unless an admin pinned the choice): a slow log sees every
statement it logs, prepared ones included (MariaDB's performance_schema does not digest
COM_STMT_EXECUTE), with per-call latency (percentiles, Max), users and hosts;
performance_schema has none of those there."""
