"""execution targets: where examples may be executed; audited broad-privilege override;
who requested each diagnostics run

profiling_enabled let profiles and ANALYZE execute examples on the monitored server itself.
Nothing is executed there any more: an instance's execution target (a read-only replica or
sandbox) is the switch. The flag is dropped; an instance that had it on keeps EXPLAIN and
gets an audit entry saying profiling stopped until an admin configures a target (its DSN
is not copied: it points at the monitored server, which is not read-only).

Revision ID: a7c3e9d1b5f0
Revises: f3a9c1d7e5b2
Create Date: 2026-11-25 19:00:00
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "a7c3e9d1b5f0"
down_revision: str | None = "f3a9c1d7e5b2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_AUDIT = sa.table(
    "audit_log",
    sa.column("at", sa.DateTime()),  # naive UTC, as UTCDateTime stores it
    sa.column("actor", sa.String),
    sa.column("action", sa.String),
    sa.column("target", sa.JSON),
    sa.column("detail", sa.JSON),
)


# Columns of instances are added and dropped in place (SQLite 3.35+ has DROP COLUMN), never
# by batch mode's copy-drop-rename: DROP TABLE instances deletes its rows first, which the
# foreign keys of ingest batches, runs and snapshots refuse while they refer to them (and
# PRAGMA foreign_keys cannot be turned off inside the migration's transaction).
_IN_PLACE = "never"


def upgrade() -> None:
    bind = op.get_bind()
    profiled = bind.execute(
        sa.text("SELECT id, name FROM instances WHERE profiling_enabled = :on"), {"on": True}
    ).all()
    now = datetime.now(UTC).replace(tzinfo=None)
    for instance_id, name in profiled:
        bind.execute(
            _AUDIT.insert().values(
                at=now,
                actor="migration",
                action="profiling moved to execution targets",
                target={"instance_id": str(instance_id)},
                detail={
                    "instance": name,
                    "was": "profiling_enabled",
                    "now": "no execution target: EXPLAIN only until an admin sets "
                    "execution_target_dsn (a read-only replica or sandbox)",
                },
            )
        )
    with op.batch_alter_table("instances", recreate=_IN_PLACE) as batch:
        batch.add_column(sa.Column("target_dsn_encrypted", sa.Text(), nullable=True))
        batch.add_column(
            sa.Column("allow_broad_privileges", sa.Boolean(), nullable=False, server_default="0")
        )
        batch.drop_column("profiling_enabled")
    for table in ("explain_runs", "profile_runs"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("requested_by", sa.String(100), nullable=True))
            batch.add_column(sa.Column("requested_by_token_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    for table in ("explain_runs", "profile_runs"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("requested_by_token_id")
            batch.drop_column("requested_by")
    with op.batch_alter_table("instances", recreate=_IN_PLACE) as batch:
        batch.add_column(
            sa.Column("profiling_enabled", sa.Boolean(), nullable=False, server_default="0")
        )
        batch.drop_column("allow_broad_privileges")
        batch.drop_column("target_dsn_encrypted")
