"""initial schema

Revision ID: d02a91dd951a
Revises:
Create Date: 2026-11-21 23:29:03.882282
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "d02a91dd951a"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("created_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("revoked_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_api_tokens_token_hash")),
    )
    op.create_table(
        "instances",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("created_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_instances")),
        sa.UniqueConstraint("name", name=op.f("uq_instances_name")),
    )
    op.create_table(
        "query_classes",
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("fingerprint", sa.Text(), nullable=False),
        sa.Column("first_seen", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("last_seen", quanta.core.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("query_id", name=op.f("pk_query_classes")),
    )
    op.create_table(
        "ingest_batches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_id", sa.Integer(), nullable=False),
        sa.Column("batch_id", sa.String(length=64), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("payload_gzip", sa.LargeBinary(), nullable=False),
        sa.Column("event_count", sa.Integer(), nullable=False),
        sa.Column(
            "status",
            sa.Enum("queued", "done", name="batchstatus", native_enum=False, length=10),
            nullable=False,
        ),
        sa.Column("received_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("processed_at", quanta.core.db.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f("fk_ingest_batches_instance_id_instances")
        ),
        sa.ForeignKeyConstraint(
            ["token_id"], ["api_tokens.id"], name=op.f("fk_ingest_batches_token_id_api_tokens")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ingest_batches")),
        sa.UniqueConstraint(
            "token_id", "batch_id", name=op.f("uq_ingest_batches_token_id_batch_id")
        ),
    )
    with op.batch_alter_table("ingest_batches", schema=None) as batch_op:
        batch_op.create_index(
            "ix_ingest_batches_status_received_at", ["status", "received_at"], unique=False
        )

    op.create_table(
        "query_buckets",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("schema_name", sa.String(length=64), nullable=False),
        sa.Column("user_name", sa.String(length=128), nullable=False),
        sa.Column("client_host", sa.String(length=255), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.Column("query_time_sum", sa.Float(), nullable=False),
        sa.Column("query_time_min", sa.Float(), nullable=False),
        sa.Column("query_time_max", sa.Float(), nullable=False),
        sa.Column("lock_time_sum", sa.Float(), nullable=True),
        sa.Column("rows_sent_sum", sa.BigInteger(), nullable=True),
        sa.Column("rows_examined_sum", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f("fk_query_buckets_instance_id_instances")
        ),
        sa.ForeignKeyConstraint(
            ["query_id"],
            ["query_classes.query_id"],
            name=op.f("fk_query_buckets_query_id_query_classes"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_query_buckets")),
        sa.UniqueConstraint(
            "bucket_start",
            "instance_id",
            "query_id",
            "schema_name",
            "user_name",
            "client_host",
            "source",
            name="uq_query_buckets_dimensions",
        ),
    )
    with op.batch_alter_table("query_buckets", schema=None) as batch_op:
        batch_op.create_index(
            "ix_query_buckets_query_id_bucket_start", ["query_id", "bucket_start"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("query_buckets", schema=None) as batch_op:
        batch_op.drop_index("ix_query_buckets_query_id_bucket_start")

    op.drop_table("query_buckets")
    with op.batch_alter_table("ingest_batches", schema=None) as batch_op:
        batch_op.drop_index("ix_ingest_batches_status_received_at")

    op.drop_table("ingest_batches")
    op.drop_table("query_classes")
    op.drop_table("instances")
    op.drop_table("api_tokens")
