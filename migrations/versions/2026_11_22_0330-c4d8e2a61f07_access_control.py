"""access control: users, session tokens, token binding and last use, audit log

Revision ID: c4d8e2a61f07
Revises: 5b9d3f7e2c61
Create Date: 2026-11-22 03:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "c4d8e2a61f07"
down_revision: str | None = "5b9d3f7e2c61"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=10), nullable=False),
        sa.Column("created_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("last_login_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("name", name=op.f("uq_users_name")),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("actor_token_id", sa.Integer(), nullable=True),
        sa.Column("action", sa.String(length=200), nullable=False),
        sa.Column("target", sa.JSON(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index("ix_audit_log_at", "audit_log", ["at"], unique=False)
    with op.batch_alter_table("api_tokens") as batch:
        batch.add_column(
            sa.Column("kind", sa.String(length=10), nullable=False, server_default="api")
        )
        batch.add_column(sa.Column("instances", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("last_used_at", quanta.core.db.UTCDateTime(), nullable=True))
        batch.add_column(sa.Column("expires_at", quanta.core.db.UTCDateTime(), nullable=True))
        batch.add_column(sa.Column("user_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            op.f("fk_api_tokens_user_id_users"), "users", ["user_id"], ["id"], ondelete="CASCADE"
        )
        batch.create_index(op.f("ix_api_tokens_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("api_tokens") as batch:
        batch.drop_index(op.f("ix_api_tokens_user_id"))
        batch.drop_constraint(op.f("fk_api_tokens_user_id_users"), type_="foreignkey")
        for column in ("user_id", "expires_at", "last_used_at", "instances", "kind"):
            batch.drop_column(column)
    op.drop_index("ix_audit_log_at", table_name="audit_log")
    op.drop_table("audit_log")
    op.drop_table("users")
