"""transient batches: raw payloads dropped once processed, stored examples redacted

``ingest_batches.payload_gzip`` becomes nullable: processing a batch now drops its payload
(the row stays, so a resent batch is still recognised). Here the payloads of every batch
already processed are dropped, and the stored examples of credential-bearing statements
(``CREATE USER ... IDENTIFIED BY 'x'``, ``SET PASSWORD``, ...) get their secret redacted as
new ones are (quanta.analysis.redact). Downgrading cannot bring payloads back: they become
empty.

Revision ID: b8d4f0e2c6a1
Revises: a7c3e9d1b5f0
Create Date: 2026-11-25 19:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quanta.analysis.redact import TRIGGER_WORDS, redact

revision: str = "b8d4f0e2c6a1"
down_revision: str | None = "a7c3e9d1b5f0"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EXAMPLE_KEY = ("query_id", "resolution", "bucket_start", "instance_id")
TEXT_COLUMNS = ("slowest_text", "sampled_text")

batches = sa.table(
    "ingest_batches",
    sa.column("status", sa.String),
    sa.column("payload_gzip", sa.LargeBinary),
)
examples = sa.table(
    "query_examples",
    *(sa.column(name) for name in EXAMPLE_KEY),
    *(sa.column(name, sa.Text) for name in TEXT_COLUMNS),
)


def upgrade() -> None:
    with op.batch_alter_table("ingest_batches") as batch_op:
        batch_op.alter_column("payload_gzip", existing_type=sa.LargeBinary(), nullable=True)
    op.execute(batches.update().where(batches.c.status != "queued").values(payload_gzip=None))
    _redact_examples()


def downgrade() -> None:
    op.execute(batches.update().where(batches.c.payload_gzip.is_(None)).values(payload_gzip=b""))
    with op.batch_alter_table("ingest_batches") as batch_op:
        batch_op.alter_column("payload_gzip", existing_type=sa.LargeBinary(), nullable=False)


def _redact_examples() -> None:
    conn = op.get_bind()
    candidate = sa.or_(
        *(
            sa.func.lower(examples.c[column]).contains(word, autoescape=True)
            for column in TEXT_COLUMNS
            for word in TRIGGER_WORDS  # only examples with one may hold a secret
        )
    )
    rows = conn.execute(sa.select(examples).where(candidate)).mappings().all()
    for row in rows:
        changed = {c: redact(row[c]) for c in TEXT_COLUMNS if redact(row[c]) != row[c]}
        if changed:
            key = sa.and_(*(examples.c[name] == row[name] for name in EXAMPLE_KEY))
            conn.execute(examples.update().where(key).values(**changed))
