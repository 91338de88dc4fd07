"""suggestions: merged into another, and what the index plan did with them (issue 41)

``merged_into_id`` names the suggestion whose wider index holds this one's columns as its
left-most ones (status ``superseded``; no foreign key, the merge pass repairs a stale one);
``plan`` is the latest workload index plan's verdict on the suggestion (planned, served by
another index, left out and why, or not weighed).

Revision ID: e3a7c1d5f9b4
Revises: e3a7c9b1d5f4
Create Date: 2026-11-28 14:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "e3a7c1d5f9b4"
down_revision: str | None = "e3a7c9b1d5f4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("suggestions") as batch_op:
        batch_op.add_column(sa.Column("merged_into_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("plan", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("suggestions") as batch_op:
        batch_op.drop_column("plan")
        batch_op.drop_column("merged_into_id")
