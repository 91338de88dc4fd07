"""instance connections: encrypted DSN and sandbox DSN, detected flavor/version, profiling

Revision ID: 3c1f0a9e7b21
Revises: e6104266a145
Create Date: 2026-11-22 02:45:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3c1f0a9e7b21"
down_revision: str | None = "e6104266a145"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("instances") as batch:
        batch.add_column(sa.Column("dsn_encrypted", sa.Text(), nullable=True))
        batch.add_column(sa.Column("sandbox_dsn_encrypted", sa.Text(), nullable=True))
        batch.add_column(sa.Column("flavor", sa.String(20), nullable=True))
        batch.add_column(sa.Column("version", sa.String(100), nullable=True))
        batch.add_column(
            sa.Column("profiling_enabled", sa.Boolean(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("instances") as batch:
        for column in (
            "profiling_enabled",
            "version",
            "flavor",
            "sandbox_dsn_encrypted",
            "dsn_encrypted",
        ):
            batch.drop_column(column)
