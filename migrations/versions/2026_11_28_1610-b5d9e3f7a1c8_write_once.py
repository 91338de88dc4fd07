"""write once: ingest appends minute rows; beat rolls hours, days and totals up from them

Minute buckets lose their primary key (two parts of a minute are two rows that reads sum) and
gain ``rollup_id``, the id of the write's entry in ``rollup_pending`` (0: rolled up: every
row stored so far is, since hours and days were written at ingest until now). Minute examples
move to ``query_examples_minute``, appended the same way; ``query_examples`` keeps hours and
days. See quanta.queries.rollup.

Revision ID: b5d9e3f7a1c8
Revises: f0b1c2d3e4a5
Create Date: 2026-11-28 16:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import quanta.core.db

revision: str = "b5d9e3f7a1c8"
down_revision: str | None = "f0b1c2d3e4a5"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MINUTES = "query_buckets_minute"
EXAMPLE_COLUMNS = [
    f"{kind}_{name}"
    for kind in ("slowest", "sampled")
    for name in ("text", "query_time", "ts", "schema", "literals", "truncated")
]


def _example_columns() -> list[sa.Column[object]]:
    columns: list[sa.Column[object]] = [sa.Column("seen", sa.BigInteger(), nullable=False)]
    for kind in ("slowest", "sampled"):
        columns += [
            sa.Column(f"{kind}_text", sa.Text(), nullable=False),
            sa.Column(f"{kind}_query_time", sa.Float(), nullable=False),
            sa.Column(f"{kind}_ts", quanta.core.db.UTCDateTime(), nullable=False),
            sa.Column(f"{kind}_schema", sa.String(length=64), nullable=False),
            sa.Column(f"{kind}_literals", sa.String(length=10), nullable=False),
            sa.Column(f"{kind}_truncated", sa.Boolean(), nullable=False),
        ]
    return columns


def upgrade() -> None:
    op.create_table(
        "rollup_pending",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("hour_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("due_at", quanta.core.db.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rollup_pending")),
        sqlite_autoincrement=True,  # ids never reused: rolled-up rows keep theirs
    )
    op.create_index("ix_rollup_pending_due_at", "rollup_pending", ["due_at"])
    op.create_index("ix_rollup_pending_hour_start", "rollup_pending", ["hour_start"])

    rollup_id = sa.Column("rollup_id", sa.BigInteger(), nullable=False, server_default="0")
    if op.get_bind().dialect.name == "postgresql":
        # The partitioned parent: its partitions follow.
        op.drop_constraint(f"pk_{MINUTES}", MINUTES, type_="primary")
        op.add_column(MINUTES, rollup_id)
    else:
        with op.batch_alter_table(MINUTES, recreate="always") as batch_op:
            batch_op.drop_constraint(f"pk_{MINUTES}", type_="primary")
            batch_op.add_column(rollup_id)
    op.create_index(
        f"ix_{MINUTES}_instance_id_bucket_start", MINUTES, ["instance_id", "bucket_start"]
    )
    op.create_index(f"ix_{MINUTES}_rollup_id", MINUTES, ["rollup_id"])

    op.create_table(
        "query_examples_minute",
        sa.Column("query_id", sa.String(length=16), nullable=False),
        sa.Column("bucket_start", quanta.core.db.UTCDateTime(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("rollup_id", sa.BigInteger(), nullable=False, server_default="0"),
        *_example_columns(),
    )
    for name, columns in (
        ("query_id_bucket_start", ["query_id", "bucket_start"]),
        ("bucket_start", ["bucket_start"]),
        ("rollup_id", ["rollup_id"]),
    ):
        op.create_index(f"ix_query_examples_minute_{name}", "query_examples_minute", columns)
    moved = ", ".join(["query_id", "bucket_start", "instance_id", "seen", *EXAMPLE_COLUMNS])
    op.execute(
        f"INSERT INTO query_examples_minute ({moved}) "
        f"SELECT {moved} FROM query_examples WHERE resolution = 'minute'"
    )
    op.execute("DELETE FROM query_examples WHERE resolution = 'minute'")


def downgrade() -> None:
    key = "instance_id, bucket_start, query_id, schema_name, user_name, client_host, source"
    bind = op.get_bind()
    # Pending minutes are not in the hours and days yet, and a minute in parts does not fit
    # the old key: the old store would lose either.
    pending = bind.execute(sa.text("SELECT count(*) FROM rollup_pending")).scalar()
    in_parts = f"SELECT 1 FROM {MINUTES} GROUP BY {key} HAVING count(*) > 1"
    parts = bind.execute(sa.text(f"SELECT count(*) FROM ({in_parts}) p")).scalar()
    if pending or parts:
        raise RuntimeError(
            f"{pending} roll-up entries pending, {parts} minutes stored in parts: let beat roll "
            "them up and minute retention expire them before downgrading"
        )
    moved = ", ".join(["query_id", "bucket_start", "instance_id", "seen", *EXAMPLE_COLUMNS])
    op.execute(
        f"INSERT INTO query_examples (resolution, {moved}) "
        f"SELECT 'minute', {moved} FROM query_examples_minute"
    )
    op.drop_table("query_examples_minute")
    op.drop_index(f"ix_{MINUTES}_rollup_id", MINUTES)
    op.drop_index(f"ix_{MINUTES}_instance_id_bucket_start", MINUTES)
    if bind.dialect.name == "postgresql":
        op.drop_column(MINUTES, "rollup_id")
        op.create_primary_key(f"pk_{MINUTES}", MINUTES, key.split(", "))
    else:
        with op.batch_alter_table(MINUTES, recreate="always") as batch_op:
            batch_op.drop_column("rollup_id")
            batch_op.create_primary_key(f"pk_{MINUTES}", key.split(", "))
    op.drop_index("ix_rollup_pending_hour_start", "rollup_pending")
    op.drop_index("ix_rollup_pending_due_at", "rollup_pending")
    op.drop_table("rollup_pending")
