"""Reconciling a query's stored suggestions with what the advisor says now.

Each piece of advice becomes an :class:`Item` (one per table and DDL, with a content hash)
and :func:`store` upserts the items into the query's stored suggestions on an instance:

* the same table and DDL with the same content keeps its row and its status (a dismissal
  stays dismissed);
* advice that changed updates the row (same table) and makes it ``new`` again, except an
  index suggestion whose advice became ``none`` (nothing left to do: another index serves
  the query now), which becomes ``superseded``, never an empty ``new``;
* a suggestion whose columns are now the leading columns of an existing index (counting the
  primary key InnoDB appends to it) becomes ``applied`` (and ``new`` again if that index
  disappears);
* advice the advisor no longer gives is removed, unless it was applied.

Across the queries of an instance, :func:`merge_redundant` merges a new suggestion whose
columns another new suggestion's index holds as its left-most ones, primary key appended
((email) into (email, name); (email, id) and (email) are one index on InnoDB) into that one:
``superseded`` with ``merged_into_id``, back to ``new`` when the other goes.
"""

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quanta.advice.models import Suggestion, SuggestionStatus
from quanta.analysis.advisor import Action, SchemaError, TableAdvice
from quanta.analysis.advisor.engine import leads_with
from quanta.analysis.advisor.render import numbers_text
from quanta.analysis.advisor.schema import Table, parse_table

__all__ = [
    "INDEXED_ACTIONS",
    "Item",
    "item_of",
    "merge_redundant",
    "needs_validation",
    "one_per_key",
    "rejected",
    "store",
    "tables_of",
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
    tables = tables_of(documents)
    for stored in existing:
        _track_applied(stored, tables.get(stored.table_name), now)
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
    """The row says what the item says: ``new``, or ``superseded`` when an index suggestion
    (or a superseded one) has nothing left to do."""
    had_index = row.action in INDEXED_ACTIONS or row.status == SuggestionStatus.SUPERSEDED
    nothing_left = item.action == Action.NONE.value and had_index
    row.table_name = item.table
    row.action = item.action
    row.columns = item.columns
    row.ddl = item.ddl
    row.reason = item.reason
    row.notes = item.notes
    row.redundant = item.redundant
    row.content_hash = item.content_hash
    row.status = (SuggestionStatus.SUPERSEDED if nothing_left else SuggestionStatus.NEW).value
    row.merged_into_id = None
    row.updated_at = now


def tables_of(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, Table]:
    """The snapshot documents as the advisor's tables (one that does not parse is left out:
    its suggestions keep their status)."""
    tables = {}
    for name, document in documents.items():
        try:
            tables[name] = parse_table(name, document)
        except SchemaError:
            continue
    return tables


def _columns(row: Suggestion) -> list[str]:
    return [str(c["name"]).lower() for c in row.columns]


def _track_applied(row: Suggestion, table: Table | None, now: datetime) -> None:
    """``applied`` when an index now starts with the suggested columns (the primary key
    InnoDB appends counted: (email) serves a suggested (email, id)); back to ``new`` when an
    applied suggestion's index is gone."""
    if row.action not in INDEXED_ACTIONS or table is None:
        return
    wanted = _columns(row)
    present = any(leads_with(table, index.columns, wanted) for index in table.all_indexes)
    if present and row.status != SuggestionStatus.APPLIED:
        row.status = SuggestionStatus.APPLIED.value
        row.merged_into_id = None
        row.updated_at = now
    elif not present and row.status == SuggestionStatus.APPLIED:
        row.status = SuggestionStatus.NEW.value
        row.updated_at = now


def merge_redundant(
    rows: Sequence[Suggestion], tables: Mapping[str, Table], now: datetime
) -> list[int]:
    """Merge redundant suggestions of one instance (see the module docstring); the ids merged
    by this pass.

    ``rows`` are every suggestion on ``tables`` of the instance. A new add/replace suggestion
    whose columns another's index holds as its left-most ones (strictly fewer, or the same
    index written otherwise with a lower id) is merged into the widest such one that is new,
    not rejected by the sandbox, and not merged itself; one merged before whose target no
    longer qualifies is new again.
    """
    merged: list[int] = []
    for name, table in tables.items():
        pool = [
            r
            for r in rows
            if r.table_name == name
            and r.action in INDEXED_ACTIONS
            and not rejected(r)
            and (
                r.status == SuggestionStatus.NEW
                or (r.status == SuggestionStatus.SUPERSEDED and r.merged_into_id is not None)
            )
        ]
        redundant = {r.id for r in pool if any(_holds(table, other, r) for other in pool)}
        targets = sorted(
            (r for r in pool if r.id not in redundant), key=lambda r: (-len(r.columns), r.id)
        )
        for row in sorted(pool, key=lambda r: r.id):
            target = next((t for t in targets if _holds(table, t, row)), None)
            into = target.id if target is not None else None
            if into == row.merged_into_id:
                continue
            row.merged_into_id = into
            row.status = (
                SuggestionStatus.NEW if into is None else SuggestionStatus.SUPERSEDED
            ).value
            row.updated_at = now
            if into is not None:
                merged.append(row.id)
    return merged


def _holds(table: Table, wider: Suggestion, row: Suggestion) -> bool:
    """Whether ``wider``'s index makes ``row``'s redundant: it holds row's columns as its
    left-most ones, and is wider (or the same index, written otherwise, with a lower id)."""
    if wider.id == row.id or wider.ddl == row.ddl:
        return False
    mine, theirs = _columns(row), _columns(wider)
    if not leads_with(table, theirs, mine):
        return False
    return not leads_with(table, mine, theirs) or wider.id < row.id


def rejected(row: Suggestion) -> bool:
    """The sandbox showed the index does not improve the plan."""
    return row.validation is not None and row.validation.get("improved") is False
