"""diagnostics runs name where they ran

``explain_runs.ran_on`` and ``profile_runs.ran_on`` name the servers a run reached (the
monitored server for EXPLAIN, the execution target for ANALYZE and profiles), as its audit
entry does.

Revision ID: b4e8d2f6a0c3
Revises: e3a7c1d5f9b4
Create Date: 2026-11-28 15:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "b4e8d2f6a0c3"
down_revision: str | None = "e3a7c1d5f9b4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RUN_TABLES = ("explain_runs", "profile_runs")


def upgrade() -> None:
    for table in RUN_TABLES:
        with op.batch_alter_table(table) as batch_op:
            batch_op.add_column(sa.Column("ran_on", sa.JSON(), nullable=True))


def downgrade() -> None:
    for table in RUN_TABLES:
        with op.batch_alter_table(table) as batch_op:
            batch_op.drop_column("ran_on")
