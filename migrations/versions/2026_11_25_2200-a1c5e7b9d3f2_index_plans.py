"""index plans: the latest workload index plan per (instance, table), told to chat once

``index_plans`` keeps one row per table of an instance: the plan (adds with the queries they
serve, drops, estimates), the sandbox's comparison and the plan's signature. Deliveries get a
``plan_id`` with its own unique key, so a channel receives a plan once per signature.

Revision ID: a1c5e7b9d3f2
Revises: f2b8d4c6e0a3
Create Date: 2026-11-25 22:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "a1c5e7b9d3f2"
down_revision: str | None = "f2b8d4c6e0a3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "index_plans",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("table_name", sa.String(length=129), nullable=False),
        sa.Column("signature", sa.String(length=64), nullable=False),
        sa.Column("ddl", sa.Text(), nullable=False),
        sa.Column("rows_before_per_s", sa.Float(), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("validation", sa.JSON(), nullable=True),
        sa.Column("window_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("window_end", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("computed_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("changed_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f("fk_index_plans_instance_id_instances")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_index_plans")),
        sa.UniqueConstraint(
            "instance_id", "table_name", name=op.f("uq_index_plans_instance_id_table_name")
        ),
    )
    with op.batch_alter_table("notify_deliveries") as batch_op:
        batch_op.add_column(sa.Column("plan_id", sa.Integer(), nullable=True))
        batch_op.create_unique_constraint(
            op.f("uq_notify_deliveries_channel_id_plan_id_content_hash"),
            ["channel_id", "plan_id", "content_hash"],
        )


def downgrade() -> None:
    with op.batch_alter_table("notify_deliveries") as batch_op:
        batch_op.drop_constraint(
            op.f("uq_notify_deliveries_channel_id_plan_id_content_hash"), type_="unique"
        )
        batch_op.drop_column("plan_id")
    op.drop_table("index_plans")
