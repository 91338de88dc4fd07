"""tags and labels: query tags as a bucket dimension, instance labels, channel routing

Every bucket table gains ``tags`` (the statements' tags, canonical, '' for none; part of the
hour and day buckets' key); ``instance_tag_values`` holds the values each instance's keys
have had (capped by QUANTA_TAG_VALUES_PER_KEY); instances gain ``labels``, channels ``tags``
and ``labels`` (what they are limited to). See quanta.analysis.tags and quanta.queries.tags.

Revision ID: d7c3b9e1f5a2
Revises: b5d9e3f7a1c8
Create Date: 2026-11-28 17:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "d7c3b9e1f5a2"
down_revision: str | None = "b5d9e3f7a1c8"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY = ["instance_id", "bucket_start", "query_id", "schema_name", "user_name", "client_host"]
KEYED = ("query_buckets_hour", "query_buckets_day")


def _tags() -> sa.Column[str]:
    return sa.Column("tags", sa.String(length=500), nullable=False, server_default="")


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    if postgresql:  # the partitioned parents: their partitions follow
        op.add_column("query_buckets_minute", _tags())
        for table in KEYED:
            op.add_column(table, _tags())
            op.drop_constraint(f"pk_{table}", table, type_="primary")
            op.create_primary_key(f"pk_{table}", table, [*KEY, "source", "tags"])
    else:
        op.add_column("query_buckets_minute", _tags())
        for table in KEYED:
            with op.batch_alter_table(table, recreate="always") as batch_op:
                batch_op.add_column(_tags())
                batch_op.drop_constraint(f"pk_{table}", type_="primary")
                batch_op.create_primary_key(f"pk_{table}", [*KEY, "source", "tags"])
    op.create_table(
        "instance_tag_values",
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("tag_key", sa.String(length=32), nullable=False),
        sa.Column("tag_value", sa.String(length=100), nullable=False),
        sa.Column("first_seen", quanta.core.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint(
            "instance_id", "tag_key", "tag_value", name=op.f("pk_instance_tag_values")
        ),
    )
    op.add_column("instances", sa.Column("labels", sa.JSON(), nullable=False, server_default="{}"))
    for name in ("tags", "labels"):
        op.add_column(
            "notify_channels", sa.Column(name, sa.JSON(), nullable=False, server_default="{}")
        )


def downgrade() -> None:
    for name in ("labels", "tags"):
        op.drop_column("notify_channels", name)
    op.drop_column("instances", "labels")
    op.drop_table("instance_tag_values")
    bind = op.get_bind()
    # Buckets that differ only by their tags would collide in the old key.
    for table in KEYED:
        tagged = bind.execute(sa.text(f"SELECT count(*) FROM {table} WHERE tags <> ''")).scalar()
        if tagged:
            raise RuntimeError(f"{table} holds {tagged} tagged buckets: the old key cannot")
    if bind.dialect.name == "postgresql":
        for table in KEYED:
            op.drop_constraint(f"pk_{table}", table, type_="primary")
            op.drop_column(table, "tags")
            op.create_primary_key(f"pk_{table}", table, [*KEY, "source"])
        op.drop_column("query_buckets_minute", "tags")
    else:
        for table in KEYED:
            with op.batch_alter_table(table, recreate="always") as batch_op:
                batch_op.drop_constraint(f"pk_{table}", type_="primary")
                batch_op.drop_column("tags")
                batch_op.create_primary_key(f"pk_{table}", [*KEY, "source"])
        with op.batch_alter_table("query_buckets_minute", recreate="always") as batch_op:
            batch_op.drop_column("tags")
