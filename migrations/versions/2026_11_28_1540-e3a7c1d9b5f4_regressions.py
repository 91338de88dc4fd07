"""regressions: queries that got dearer per call than their baseline, told to chat once

``regressions`` keeps one row per regression of a query on an instance (its metric, baseline
and recent values, windows, evidence, cause, status). Deliveries get a ``regression_id`` with
its own unique key, so a channel receives a regression once and its resolution once.

Revision ID: e3a7c1d9b5f4
Revises: c4e8a2b6d0f3
Create Date: 2026-11-28 15:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "e3a7c1d9b5f4"
down_revision: str | None = "c4e8a2b6d0f3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "regressions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("kind", sa.String(length=12), nullable=False),
        sa.Column("metric", sa.String(length=30), nullable=False),
        sa.Column("before", sa.Float(), nullable=True),
        sa.Column("after", sa.Float(), nullable=True),
        sa.Column("since", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("detected_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("window_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("window_end", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("baseline_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("baseline_end", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("seasonal", sa.Boolean(), nullable=False),
        sa.Column("load", sa.Float(), nullable=False),
        sa.Column("load_share", sa.Float(), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("cause", sa.Text(), nullable=False),
        sa.Column("explain_run_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("announced_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.Column("resolved_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.Column("resolution", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f("fk_regressions_instance_id_instances")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_regressions")),
        sa.UniqueConstraint(
            "instance_id",
            "query_id",
            "since",
            name=op.f("uq_regressions_instance_id_query_id_since"),
        ),
    )
    op.create_index("ix_regressions_status", "regressions", ["status"])
    op.create_index(
        "ix_regressions_instance_id_detected_at", "regressions", ["instance_id", "detected_at"]
    )
    op.create_index("ix_regressions_query_id", "regressions", ["query_id"])
    with op.batch_alter_table("notify_deliveries") as batch_op:
        batch_op.add_column(sa.Column("regression_id", sa.Integer(), nullable=True))
        batch_op.create_unique_constraint(
            op.f("uq_notify_deliveries_channel_id_regression_id_content_hash"),
            ["channel_id", "regression_id", "content_hash"],
        )


def downgrade() -> None:
    with op.batch_alter_table("notify_deliveries") as batch_op:
        batch_op.drop_constraint(
            op.f("uq_notify_deliveries_channel_id_regression_id_content_hash"), type_="unique"
        )
        batch_op.drop_column("regression_id")
    op.drop_index("ix_regressions_query_id", table_name="regressions")
    op.drop_index("ix_regressions_instance_id_detected_at", table_name="regressions")
    op.drop_index("ix_regressions_status", table_name="regressions")
    op.drop_table("regressions")
