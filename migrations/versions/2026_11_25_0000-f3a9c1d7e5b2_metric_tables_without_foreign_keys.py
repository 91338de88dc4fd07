"""metric tables without foreign keys

The buckets, the totals and the examples are written many thousand rows a batch, and
PostgreSQL checks a foreign key with a trigger and an index lookup per inserted row: half of
its time in the ingest (bench/ingest_pipeline.py). Their only writer inserts a batch's catalog
rows first in the same transaction, and deleting an instance or purging a query finds them by
their columns (see quanta.queries.models).

Revision ID: f3a9c1d7e5b2
Revises: e5f1b7c2d9a4
Create Date: 2026-11-25 00:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "f3a9c1d7e5b2"
down_revision: str | None = "e5f1b7c2d9a4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Table -> the tables its foreign keys refer to, by column.
FOREIGN_KEYS: dict[str, dict[str, str]] = {
    **{
        f"query_buckets_{resolution}": {"instance_id": "instances", "query_id": "query_classes"}
        for resolution in ("minute", "hour", "day")
    },
    **{
        f"query_totals_{resolution}": {"instance_id": "instances", "query_id": "query_classes"}
        for resolution in ("hour", "day")
    },
    **{
        f"instance_totals_{resolution}": {"instance_id": "instances"}
        for resolution in ("minute", "hour", "day")
    },
    "query_examples": {"instance_id": "instances", "query_id": "query_classes"},
}
REFERRED_COLUMN = {"instances": "id", "query_classes": "query_id"}


def _name(table: str, column: str, referred: str) -> str:
    return f"fk_{table}_{column}_{referred}"


def upgrade() -> None:
    for table, references in FOREIGN_KEYS.items():
        with op.batch_alter_table(table) as batch_op:
            for column, referred in references.items():
                batch_op.drop_constraint(_name(table, column, referred), type_="foreignkey")


def downgrade() -> None:
    for table, references in FOREIGN_KEYS.items():
        with op.batch_alter_table(table) as batch_op:
            for column, referred in references.items():
                batch_op.create_foreign_key(
                    _name(table, column, referred), referred, [column], [REFERRED_COLUMN[referred]]
                )
