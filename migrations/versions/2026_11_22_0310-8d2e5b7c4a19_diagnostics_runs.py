"""diagnostics: EXPLAIN and profile runs of query examples on monitored instances

Revision ID: 8d2e5b7c4a19
Revises: a7e3c5d91b42
Create Date: 2026-11-22 03:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "8d2e5b7c4a19"
down_revision: str | None = "a7e3c5d91b42"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _run_columns() -> list[sa.Column[object]]:
    return [
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.String(16), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("requested_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("taken_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("examples", sa.JSON(), nullable=False),
        sa.Column("server_version", sa.String(100), nullable=True),
    ]


def _create(table: str, *columns: sa.Column[object]) -> None:
    op.create_table(
        table,
        *_run_columns(),
        *columns,
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f(f"fk_{table}_instance_id_instances")
        ),
        sa.ForeignKeyConstraint(
            ["query_id"],
            ["query_classes.query_id"],
            name=op.f(f"fk_{table}_query_id_query_classes"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
    )
    op.create_index(f"ix_{table}_query_id_instance_id_id", table, ["query_id", "instance_id", "id"])


def upgrade() -> None:
    _create(
        "explain_runs",
        sa.Column("verb", sa.String(20), nullable=True),
        sa.Column("tabular", sa.JSON(), nullable=True),
        sa.Column("document", sa.JSON(), nullable=True),
        sa.Column("analyze", sa.JSON(), nullable=True),
        sa.Column("findings", sa.JSON(), nullable=False),
        sa.Column("notes", sa.JSON(), nullable=False),
    )
    _create(
        "profile_runs",
        sa.Column("runs", sa.Integer(), nullable=True),
        sa.Column("response_us", sa.BigInteger(), nullable=True),
        sa.Column("lost_us", sa.BigInteger(), nullable=True),
        sa.Column("rows", sa.JSON(), nullable=False),
        sa.Column("run_response_us", sa.JSON(), nullable=False),
    )


def downgrade() -> None:
    for table in ("profile_runs", "explain_runs"):
        op.drop_index(f"ix_{table}_query_id_instance_id_id", table_name=table)
        op.drop_table(table)
