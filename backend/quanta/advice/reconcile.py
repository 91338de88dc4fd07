"""Reconciling a query's stored suggestions with what the advisor says now.

Each piece of advice becomes an :class:`Item` (one per table and DDL, with a content hash)
and :func:`store` upserts the items into the query's stored suggestions on an instance:

* the same table and DDL with the same content keeps its row and its status (a dismissal
  stays dismissed);
* advice that changed updates the row (same table) and makes it ``new`` again;
* a suggestion whose columns are now the leading columns of an existing index becomes
  ``applied`` (and ``new`` again if that index disappears);
* advice the advisor no longer gives is removed, unless it was applied.
"""

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quanta.advice.models import Suggestion, SuggestionStatus
from quanta.analysis.advisor import Action, TableAdvice
from quanta.analysis.advisor.render import numbers_text
from quanta.tables import service as tables_service

__all__ = [
    "INDEXED_ACTIONS",
    "Item",
    "item_of",
    "needs_validation",
    "one_per_key",
    "rejected",
    "store",
]

INDEXED_ACTIONS = (Action.ADD.value, Action.REPLACE.value)


@dataclass(frozen=True, slots=True)
class Item:
    """One piece of advice, as it would be stored."""

    table: str
    action: str
    columns: list[dict[str, Any]]
    ddl: str
    reason: str
    notes: list[str]
    redundant: list[str]
    content_hash: str


def item_of(advice: TableAdvice, prefix: str) -> Item:
    """One piece of the advisor's advice as it would be stored, ``prefix`` before its reason
    (why it was advised from the fingerprint, when it was)."""
    columns = [{"name": c.name, "desc": c.desc, "rule": c.rule.value} for c in advice.columns]
    notes = list(advice.notes)
    if advice.alternative is not None:
        notes.append(f"Alternative: {advice.alternative.ddl} ({advice.alternative.reason})")
    reason = prefix + advice.reason
    redundant = list(advice.redundant)
    # The estimates move with the statistics: shown, but not a change of the advice.
    numbers = [numbers_text(advice)] if advice.rows_after is not None else []
    return Item(
        table=advice.table,
        action=advice.action.value,
        columns=columns,
        ddl=advice.ddl,
        reason=reason,
        notes=notes + numbers,
        redundant=redundant,
        content_hash=_content_hash(
            advice.table, advice.action.value, columns, advice.ddl, reason, notes, redundant
        ),
    )


def one_per_key(items: Sequence[Item]) -> list[Item]:
    """One item per (table, DDL): a table read twice (a self-join, a subquery) can get the
    same index twice, or two reasons for no index; the first is kept, with the others'
    reasons as notes."""
    merged: dict[tuple[str, str], Item] = {}
    for item in items:
        key = (item.table, item.ddl)
        first = merged.get(key)
        if first is None:
            merged[key] = item
        elif item.reason != first.reason and item.reason not in first.notes:
            notes = [*first.notes, item.reason]
            merged[key] = Item(
                table=first.table,
                action=first.action,
                columns=first.columns,
                ddl=first.ddl,
                reason=first.reason,
                notes=notes,
                redundant=first.redundant,
                content_hash=_content_hash(
                    first.table,
                    first.action,
                    first.columns,
                    first.ddl,
                    first.reason,
                    notes,
                    first.redundant,
                ),
            )
    return list(merged.values())


def _content_hash(*fields: Any) -> str:
    """SHA-256 of what a suggestion says (its JSON, keys sorted)."""
    encoded = json.dumps(list(fields), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()


def needs_validation(item: Item, existing: Sequence[Suggestion]) -> bool:
    """Whether an add/replace item is checked on the sandbox: it is new or changed, or its
    stored row was never checked or its check failed."""
    if item.action not in INDEXED_ACTIONS:
        return False
    same = [r for r in existing if (r.table_name, r.ddl) == (item.table, item.ddl)]
    if not same or same[0].content_hash != item.content_hash:
        return True
    # Never checked, or the check failed (sandbox down): try again.
    return same[0].validation is None or same[0].validation.get("improved") is None


def store(
    *,
    session: Session,
    query_id: str,
    instance_id: int,
    items: Sequence[Item],
    existing: Sequence[Suggestion],
    documents: Mapping[str, Mapping[str, Any]],
    validations: Mapping[tuple[str, str], dict[str, Any]],
    now: datetime,
) -> tuple[list[int], list[int]]:
    """Upsert the advice into the stored suggestions; (ids created, ids changed)."""
    for stored in existing:
        _track_applied(stored, documents.get(stored.table_name), now)
    applied_tables = {r.table_name for r in existing if r.status == SuggestionStatus.APPLIED}
    by_key = {(r.table_name, r.ddl): r for r in existing}
    new_keys = {(i.table, i.ddl) for i in items}
    used: set[int] = set()
    created_rows: list[Suggestion] = []
    changed: list[int] = []
    for item in items:
        key = (item.table, item.ddl)
        if item.action == Action.NONE.value and item.table in applied_tables:
            continue  # the applied suggestion already says an index serves this table
        row = by_key.get(key)
        if row is not None:
            used.add(row.id)
            if key in validations:
                row.validation = validations[key]
            if row.content_hash != item.content_hash:
                _fill(row, item, now)
                changed.append(row.id)
            continue
        spare = next(
            (
                r
                for r in existing
                if r.table_name == item.table
                and r.id not in used
                and (r.table_name, r.ddl) not in new_keys
                and r.status != SuggestionStatus.APPLIED
            ),
            None,
        )
        if spare is not None:
            used.add(spare.id)
            _fill(spare, item, now)
            spare.validation = validations.get(key)
            changed.append(spare.id)
            continue
        added = Suggestion(query_id=query_id, instance_id=instance_id, created_at=now)
        _fill(added, item, now)
        added.validation = validations.get(key)
        session.add(added)
        created_rows.append(added)
    for stored in existing:
        if stored.id not in used and stored.status != SuggestionStatus.APPLIED:
            session.delete(stored)  # advice the advisor no longer gives
    session.flush()
    return [r.id for r in created_rows], changed


def _fill(row: Suggestion, item: Item, now: datetime) -> None:
    row.table_name = item.table
    row.action = item.action
    row.columns = item.columns
    row.ddl = item.ddl
    row.reason = item.reason
    row.notes = item.notes
    row.redundant = item.redundant
    row.content_hash = item.content_hash
    row.status = SuggestionStatus.NEW.value
    row.updated_at = now


def _track_applied(row: Suggestion, document: Mapping[str, Any] | None, now: datetime) -> None:
    """``applied`` when an index now starts with the suggested columns; back to ``new`` when
    an applied suggestion's index is gone."""
    if row.action not in INDEXED_ACTIONS or document is None:
        return
    wanted = tuple(str(c["name"]).lower() for c in row.columns)
    present = any(
        columns[: len(wanted)] == wanted for _name, columns in tables_service.indexes_of(document)
    )
    if present and row.status != SuggestionStatus.APPLIED:
        row.status = SuggestionStatus.APPLIED.value
        row.updated_at = now
    elif not present and row.status == SuggestionStatus.APPLIED:
        row.status = SuggestionStatus.NEW.value
        row.updated_at = now


def rejected(row: Suggestion) -> bool:
    """The sandbox showed the index does not improve the plan."""
    return row.validation is not None and row.validation.get("improved") is False
