"""Statements on suggestions, and the few catalog reads advice needs.

The newest examples of a query are read here with a plain filter on the queries domain's
model because that domain has no use case that returns exactly this; nothing here writes
to it.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from quanta.advice.models import Suggestion, SuggestionStatus
from quanta.queries.models import QueryExample, QueryExampleMinute

# Newest example buckets looked at for the latest usable statement: enough to get past a
# run of truncated ones, bounded so a long-lived query does not read all of its history.
EXAMPLE_ROWS_SCANNED = 50


@dataclass(frozen=True, slots=True)
class StoredExample:
    """One stored statement of a query: its text, database, time and whether it is usable
    for EXPLAIN (full literals, not truncated)."""

    text: str
    schema_name: str
    ts: datetime
    literals: str
    truncated: bool


def latest_examples(session: Session, query_id: str, instance_id: int) -> list[StoredExample]:
    """The stored statements of a query on an instance, newest first."""
    rows: list[Any] = []
    for model in (QueryExampleMinute, QueryExample):
        rows += session.scalars(
            select(model)
            .where(model.query_id == query_id, model.instance_id == instance_id)
            .order_by(model.bucket_start.desc())
            .limit(EXAMPLE_ROWS_SCANNED)
        )
    found = [
        StoredExample(
            text=getattr(row, f"{kind}_text"),
            schema_name=getattr(row, f"{kind}_schema"),
            ts=getattr(row, f"{kind}_ts"),
            literals=getattr(row, f"{kind}_literals"),
            truncated=getattr(row, f"{kind}_truncated"),
        )
        for row in rows
        for kind in ("slowest", "sampled")
    ]
    return sorted(found, key=lambda e: e.ts, reverse=True)


def suggestions(
    session: Session, query_id: str, instance_id: int | None = None
) -> list[Suggestion]:
    """A query's suggestions (on one instance or all), by instance, table and id."""
    statement = select(Suggestion).where(Suggestion.query_id == query_id)
    if instance_id is not None:
        statement = statement.where(Suggestion.instance_id == instance_id)
    return list(
        session.scalars(
            statement.order_by(Suggestion.instance_id, Suggestion.table_name, Suggestion.id)
        )
    )


def get(session: Session, suggestion_id: int) -> Suggestion | None:
    """One suggestion by id."""
    return session.get(Suggestion, suggestion_id)


def queries_on_tables(session: Session, instance_id: int, tables: Sequence[str]) -> list[str]:
    """The query_ids with suggestions on any of these tables of an instance, sorted."""
    if not tables:
        return []
    return sorted(
        session.scalars(
            select(Suggestion.query_id)
            .where(Suggestion.instance_id == instance_id, Suggestion.table_name.in_(tables))
            .distinct()
        )
    )


def suggested_tables(session: Session, instance_id: int) -> list[str]:
    """The tables of an instance that have suggestions, sorted."""
    return sorted(
        session.scalars(
            select(Suggestion.table_name).where(Suggestion.instance_id == instance_id).distinct()
        )
    )


def advised_query_ids(session: Session, instance_id: int, query_ids: Sequence[str]) -> set[str]:
    """Of these query_ids, the ones already advised on an instance."""
    if not query_ids:
        return set()
    return set(
        session.scalars(
            select(Suggestion.query_id)
            .where(Suggestion.instance_id == instance_id, Suggestion.query_id.in_(query_ids))
            .distinct()
        )
    )


def on_tables(session: Session, instance_id: int, tables: Sequence[str]) -> list[Suggestion]:
    """Every suggestion on these tables of an instance (all queries), by id."""
    if not tables:
        return []
    return list(
        session.scalars(
            select(Suggestion)
            .where(Suggestion.instance_id == instance_id, Suggestion.table_name.in_(tables))
            .order_by(Suggestion.id)
        )
    )


def of_instance(session: Session, instance_id: int) -> list[Suggestion]:
    """Every suggestion of an instance, by id."""
    return list(
        session.scalars(
            select(Suggestion).where(Suggestion.instance_id == instance_id).order_by(Suggestion.id)
        )
    )


def applied_since(session: Session, instance_id: int, since: datetime) -> list[int]:
    """The ids of an instance's suggestions that became applied at or after ``since``."""
    return list(
        session.scalars(
            select(Suggestion.id).where(
                Suggestion.instance_id == instance_id,
                Suggestion.status == SuggestionStatus.APPLIED.value,
                Suggestion.updated_at >= since,
            )
        )
    )


def by_ids(session: Session, ids: Sequence[int]) -> dict[int, Suggestion]:
    """Suggestions by id (the ones that exist)."""
    if not ids:
        return {}
    return {s.id: s for s in session.scalars(select(Suggestion).where(Suggestion.id.in_(ids)))}


def applied_after(session: Session, since: datetime) -> list[Suggestion]:
    """Suggestions that became applied since ``since`` (their last change), oldest first."""
    stmt = (
        select(Suggestion)
        .where(Suggestion.status == SuggestionStatus.APPLIED.value, Suggestion.updated_at >= since)
        .order_by(Suggestion.updated_at)
    )
    return list(session.scalars(stmt))
