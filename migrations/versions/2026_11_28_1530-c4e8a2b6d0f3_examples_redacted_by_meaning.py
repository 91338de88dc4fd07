"""examples redacted by meaning: stored examples get the secrets given by position redacted

quanta.analysis.redact now also redacts a literal by what it is given to: a column whose
name is a secret name (``INSERT INTO users (login, password) VALUES ('a', 'x')``,
``password = SHA2('x', 256)``, key/value rows such as ``('smtp_password', 'x')``). The
examples stored before are redacted here as new ones are; downgrading keeps them redacted.

Revision ID: c4e8a2b6d0f3
Revises: b3d7f1a9c5e2
Create Date: 2026-11-28 15:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from quanta.analysis.redact import TRIGGER_WORDS, redact

revision: str = "c4e8a2b6d0f3"
down_revision: str | None = "b3d7f1a9c5e2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EXAMPLE_KEY = ("query_id", "resolution", "bucket_start", "instance_id")
TEXT_COLUMNS = ("slowest_text", "sampled_text")

examples = sa.table(
    "query_examples",
    *(sa.column(name) for name in EXAMPLE_KEY),
    *(sa.column(name, sa.Text) for name in TEXT_COLUMNS),
)


def upgrade() -> None:
    conn = op.get_bind()
    candidate = sa.or_(
        *(
            sa.func.lower(examples.c[column]).contains(word, autoescape=True)
            for column in TEXT_COLUMNS
            for word in TRIGGER_WORDS  # only examples with one may hold a secret
        )
    )
    rows = conn.execute(sa.select(examples).where(candidate)).mappings()
    updates = []
    for row in rows:
        changed = {c: redact(row[c]) for c in TEXT_COLUMNS if redact(row[c]) != row[c]}
        if changed:
            updates.append(({name: row[name] for name in EXAMPLE_KEY}, changed))
    for key, changed in updates:
        match = sa.and_(*(examples.c[name] == value for name, value in key.items()))
        conn.execute(examples.update().where(match).values(**changed))


def downgrade() -> None:
    """Nothing to undo: a redacted secret stays redacted."""
