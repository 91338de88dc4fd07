"""metric store: minute/hour/day buckets with histograms and extended metrics, examples,
query catalog details, instance settings

The old query_buckets table (minute buckets without histograms) is replaced. Its contents
are rebuilt from the raw batches, which are all kept: every batch goes back to 'queued' and
beat's re-enqueue job has the worker process it again into the new tables.

Revision ID: e6104266a145
Revises: d02a91dd951a
Create Date: 2026-11-22 01:00:51
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "e6104266a145"
down_revision: str | None = "d02a91dd951a"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RESOLUTIONS = ("minute", "hour", "day")
SUM_COLUMNS = (
    ("lock_time_sum", sa.Float()),
    ("lock_time_max", sa.Float()),
    ("rows_sent_sum", sa.BigInteger()),
    ("rows_examined_sum", sa.BigInteger()),
    ("rows_affected_sum", sa.BigInteger()),
    ("bytes_sent_sum", sa.BigInteger()),
    ("tmp_tables_sum", sa.BigInteger()),
    ("tmp_disk_tables_sum", sa.BigInteger()),
    ("filesort_sum", sa.BigInteger()),
    ("filesort_on_disk_sum", sa.BigInteger()),
    ("full_scan_sum", sa.BigInteger()),
    ("full_join_sum", sa.BigInteger()),
    ("merge_passes_sum", sa.BigInteger()),
    ("innodb_io_r_ops_sum", sa.BigInteger()),
    ("innodb_io_r_bytes_sum", sa.BigInteger()),
    ("innodb_io_r_wait_sum", sa.Float()),
    ("innodb_rec_lock_wait_sum", sa.Float()),
    ("innodb_queue_wait_sum", sa.Float()),
    ("errors_sum", sa.BigInteger()),
    ("warnings_sum", sa.BigInteger()),
    ("no_index_used_sum", sa.BigInteger()),
    ("no_good_index_used_sum", sa.BigInteger()),
)


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    with op.batch_alter_table("instances", schema=None) as batch_op:
        batch_op.add_column(sa.Column("primary_source", sa.String(length=20), nullable=True))
        batch_op.add_column(
            sa.Column("example_policy", sa.String(length=10), server_default="full", nullable=False)
        )
    with op.batch_alter_table("query_classes", schema=None) as batch_op:
        batch_op.add_column(sa.Column("statement_type", sa.String(length=20), nullable=True))
        batch_op.add_column(sa.Column("tables", sa.JSON(), nullable=True))

    with op.batch_alter_table("query_buckets", schema=None) as batch_op:
        batch_op.drop_index("ix_query_buckets_query_id_bucket_start")
    op.drop_table("query_buckets")

    op.create_table(
        "query_instances",
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("first_seen", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("last_seen", quanta.core.db.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f("fk_query_instances_instance_id_instances")
        ),
        sa.ForeignKeyConstraint(
            ["query_id"],
            ["query_classes.query_id"],
            name=op.f("fk_query_instances_query_id_query_classes"),
        ),
        sa.PrimaryKeyConstraint("query_id", "instance_id", name=op.f("pk_query_instances")),
    )
    for resolution in RESOLUTIONS:
        _create_bucket_table(f"query_buckets_{resolution}", postgresql)

    op.create_table(
        "query_examples",
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("resolution", sa.String(length=10), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("seen", sa.BigInteger(), nullable=False),
        *(
            column
            for prefix in ("slowest", "sampled")
            for column in (
                sa.Column(f"{prefix}_text", sa.Text(), nullable=False),
                sa.Column(f"{prefix}_query_time", sa.Float(), nullable=False),
                sa.Column(f"{prefix}_ts", quanta.core.db.UTCDateTime(), nullable=False),
                sa.Column(f"{prefix}_schema", sa.String(length=64), nullable=False),
                sa.Column(f"{prefix}_literals", sa.String(length=10), nullable=False),
                sa.Column(f"{prefix}_truncated", sa.Boolean(), nullable=False),
            )
        ),
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f("fk_query_examples_instance_id_instances")
        ),
        sa.ForeignKeyConstraint(
            ["query_id"],
            ["query_classes.query_id"],
            name=op.f("fk_query_examples_query_id_query_classes"),
        ),
        sa.PrimaryKeyConstraint(
            "query_id", "resolution", "bucket_start", "instance_id", name=op.f("pk_query_examples")
        ),
    )
    with op.batch_alter_table("query_examples", schema=None) as batch_op:
        batch_op.create_index(
            "ix_query_examples_resolution_bucket_start", ["resolution", "bucket_start"]
        )

    # Rebuild the metric store from the stored raw batches (see the module docstring).
    op.execute("UPDATE ingest_batches SET status = 'queued', processed_at = NULL")


def _create_bucket_table(name: str, postgresql: bool) -> None:
    op.create_table(
        name,
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("schema_name", sa.String(length=64), nullable=False),
        sa.Column("user_name", sa.String(length=128), nullable=False),
        sa.Column("client_host", sa.String(length=255), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.Column("query_time_sum", sa.Float(), nullable=False),
        sa.Column("query_time_min", sa.Float(), nullable=True),
        sa.Column("query_time_max", sa.Float(), nullable=True),
        sa.Column("histogram", sa.LargeBinary(), nullable=True),
        *(sa.Column(column, type_, nullable=True) for column, type_ in SUM_COLUMNS),
        sa.ForeignKeyConstraint(
            ["instance_id"], ["instances.id"], name=op.f(f"fk_{name}_instance_id_instances")
        ),
        sa.ForeignKeyConstraint(
            ["query_id"], ["query_classes.query_id"], name=op.f(f"fk_{name}_query_id_query_classes")
        ),
        sa.PrimaryKeyConstraint(
            "instance_id",
            "bucket_start",
            "query_id",
            "schema_name",
            "user_name",
            "client_host",
            "source",
            name=op.f(f"pk_{name}"),
        ),
        postgresql_partition_by="RANGE (bucket_start)",
    )
    with op.batch_alter_table(name, schema=None) as batch_op:
        batch_op.create_index(f"ix_{name}_query_id_bucket_start", ["query_id", "bucket_start"])
    if postgresql:
        # Rows outside every time partition land here; beat adds the time partitions.
        op.execute(f'CREATE TABLE "{name}_default" PARTITION OF "{name}" DEFAULT')


def downgrade() -> None:
    with op.batch_alter_table("query_examples", schema=None) as batch_op:
        batch_op.drop_index("ix_query_examples_resolution_bucket_start")
    op.drop_table("query_examples")
    for resolution in reversed(RESOLUTIONS):
        name = f"query_buckets_{resolution}"
        with op.batch_alter_table(name, schema=None) as batch_op:
            batch_op.drop_index(f"ix_{name}_query_id_bucket_start")
        op.drop_table(name)  # drops its partitions too
    op.drop_table("query_instances")
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
    with op.batch_alter_table("query_classes", schema=None) as batch_op:
        batch_op.drop_column("tables")
        batch_op.drop_column("statement_type")
    with op.batch_alter_table("instances", schema=None) as batch_op:
        batch_op.drop_column("example_policy")
        batch_op.drop_column("primary_source")
    # The old table is rebuilt from the raw batches as on upgrade.
    op.execute("UPDATE ingest_batches SET status = 'queued', processed_at = NULL")
