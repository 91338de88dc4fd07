"""user lifecycle: users can be disabled

Revision ID: c9e5a1f3d7b2
Revises: b8d4f0e2c6a1
Create Date: 2026-11-25 19:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "c9e5a1f3d7b2"
down_revision: str | None = "b8d4f0e2c6a1"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("disabled_at", quanta.core.db.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("disabled_at")
