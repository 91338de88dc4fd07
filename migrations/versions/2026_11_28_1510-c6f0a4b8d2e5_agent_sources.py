"""agent health: per instance and source, the last batch, its lag and the agent's status

``agent_sources`` keeps, per instance and source, the last batch received, the newest time
its rows cover (its lag), and the status the agent reports (version, host, when it last read
the source, spool, batches dropped and refused, last error).

Revision ID: c6f0a4b8d2e5
Revises: b4e8d2f6a0c3
Create Date: 2026-11-28 15:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "c6f0a4b8d2e5"
down_revision: str | None = "b4e8d2f6a0c3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "agent_sources",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("last_seen_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("last_batch_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.Column("last_batch_rows", sa.Integer(), nullable=True),
        sa.Column("data_until", quanta.core.db.UTCDateTime(), nullable=True),
        sa.Column("agent_version", sa.String(length=50), nullable=True),
        sa.Column("agent_host", sa.String(length=255), nullable=True),
        sa.Column("report_interval", sa.Float(), nullable=True),
        sa.Column("read_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.Column("read_failing", sa.Boolean(), nullable=True),
        sa.Column("spooled", sa.Integer(), nullable=True),
        sa.Column("spooled_bytes", sa.BigInteger(), nullable=True),
        sa.Column("dropped", sa.Integer(), nullable=True),
        sa.Column("rejected", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_error_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f("fk_agent_sources_instance_id_instances")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_agent_sources")),
        sa.UniqueConstraint(
            "instance_id", "source", name=op.f("uq_agent_sources_instance_id_source")
        ),
    )


def downgrade() -> None:
    op.drop_table("agent_sources")
