"""own classes index: the catalog's classes every read leaves out, indexed by their predicate

Each read of the metric store leaves out Quanta's own statements by a subquery of
``query_classes`` (quanta.queries.repository.own_query_ids) in every branch of its union;
without an index each was a scan of the whole catalog.

Revision ID: e1a4c7d2b9f6
Revises: d7c3b9e1f5a2
Create Date: 2026-11-29 02:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e1a4c7d2b9f6"
down_revision: str | None = "d7c3b9e1f5a2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As quanta.queries.models.OWN_CLASS_PREDICATE at this revision.
PREDICATE = "own_statement IS TRUE OR (own_seen IS TRUE AND app_seen IS FALSE)"


def upgrade() -> None:
    op.create_index(
        "ix_query_classes_own",
        "query_classes",
        ["query_id"],
        postgresql_where=sa.text(PREDICATE),
        sqlite_where=sa.text(PREDICATE),
    )


def downgrade() -> None:
    op.drop_index("ix_query_classes_own", table_name="query_classes")
