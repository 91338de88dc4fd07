"""Statements on suggestions (a query's examples are the queries domain's: read through
quanta.queries.service.latest_examples)."""

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from quanta.advice.models import Suggestion, SuggestionStatus


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
