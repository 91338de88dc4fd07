"""day one: an instance's primary source chosen by an admin is pinned

Until now the first batch set ``instances.primary_source`` for good, so the agent's
performance_schema poll at start-up nearly always won. Now the slow log (which sees every
statement, prepared ones included, with per-call latency, users and hosts) takes over when it
reports, unless an admin chose the source: ``primary_source_pinned`` records that choice.

Query classes record who ran them: ``own_seen`` (the instance's monitoring account, from its
DSN) and ``app_seen`` (anyone else). A class only the monitoring account ran is Quanta's own
and is left out of top lists, impact views and advice by default.

Revision ID: f2b8d4c6e0a3
Revises: d0f6b2a4e8c3
Create Date: 2026-11-25 20:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "f2b8d4c6e0a3"
down_revision: str | None = "d0f6b2a4e8c3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("instances") as batch_op:
        batch_op.add_column(
            sa.Column("primary_source_pinned", sa.Boolean(), nullable=False, server_default="0")
        )
    with op.batch_alter_table("query_classes") as batch_op:
        batch_op.add_column(sa.Column("own_seen", sa.Boolean(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("app_seen", sa.Boolean(), nullable=False, server_default="0"))


def downgrade() -> None:
    # Not batch mode: SQLite would rebuild the table, which other tables' foreign keys forbid;
    # ALTER TABLE DROP COLUMN (SQLite 3.35+, PostgreSQL) needs no rebuild.
    op.drop_column("query_classes", "app_seen")
    op.drop_column("query_classes", "own_seen")
    op.drop_column("instances", "primary_source_pinned")
