"""Use cases of agent health: note what each batch and status report says, and tell per
instance and source whether its agent is reporting, failing to read it, or has stopped."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from quanta.agents import repository
from quanta.agents.models import AgentSource
from quanta.agents.schemas import AgentSourceOut, SourceState

# A source is stopped after this many of its agent's report intervals without a word.
MISSED_REPORTS = 3


@dataclass(frozen=True, slots=True)
class ReceivedBatch:
    """What a data batch tells about its source: when it came and what it covered."""

    instance_id: int
    source: str
    received_at: datetime
    rows: int
    data_until: datetime | None
    agent_version: str | None


def record_batch(*, session: Session, batch: ReceivedBatch) -> None:
    """Note a data batch of the source: the last batch, its size and how late it came."""
    values = {
        "instance_id": batch.instance_id,
        "source": batch.source,
        "last_seen_at": batch.received_at,
        "last_batch_at": batch.received_at,
        "last_batch_rows": batch.rows,
        "data_until": batch.data_until,
    }
    if batch.agent_version is not None:
        values["agent_version"] = batch.agent_version
    repository.upsert(session, values)


@dataclass(frozen=True, slots=True)
class AgentStatus:
    """What an agent's status report says of one source (ingest's AgentStatusIn, checked)."""

    version: str
    host: str
    interval: float
    read_at: datetime | None
    read_failing: bool
    spooled: int
    spooled_bytes: int
    dropped: int
    rejected: int
    last_error: str | None
    last_error_at: datetime | None


def record_status(
    *,
    session: Session,
    instance_id: int,
    source: str,
    status: AgentStatus,
    received_at: datetime,
) -> None:
    """Note an agent's status report for the source (it replaces the previous one)."""
    repository.upsert(
        session,
        {
            "instance_id": instance_id,
            "source": source,
            "last_seen_at": received_at,
            "agent_version": status.version,
            "agent_host": status.host,
            "report_interval": status.interval,
            "read_at": status.read_at,
            "read_failing": status.read_failing,
            "spooled": status.spooled,
            "spooled_bytes": status.spooled_bytes,
            "dropped": status.dropped,
            "rejected": status.rejected,
            "last_error": status.last_error,
            "last_error_at": status.last_error_at,
        },
    )


def source_state(row: AgentSource, *, now: datetime, silence_seconds: float) -> SourceState:
    """stopped when nothing came for ``silence_seconds`` (or three of the agent's report
    intervals, if longer); failing when the agent reports that its last read failed;
    else reporting."""
    allowed = max(silence_seconds, MISSED_REPORTS * (row.report_interval or 0.0))
    if (now - row.last_seen_at).total_seconds() > allowed:
        return "stopped"
    return "failing" if row.read_failing else "reporting"


def list_sources(
    *, session: Session, now: datetime, silence_seconds: float, with_errors: bool
) -> list[AgentSourceOut]:
    """Every instance's sources as their agents last reported them; the agents' error texts
    only ``with_errors`` (they can quote the monitored server)."""
    return [
        _out(row, name, now=now, silence_seconds=silence_seconds, with_errors=with_errors)
        for row, name in repository.with_instances(session)
    ]


def _out(
    row: AgentSource, instance: str, *, now: datetime, silence_seconds: float, with_errors: bool
) -> AgentSourceOut:
    lag = None
    if row.last_batch_at is not None and row.data_until is not None:
        lag = max(0.0, (row.last_batch_at - row.data_until).total_seconds())
    return AgentSourceOut(
        instance=instance,
        instance_id=row.instance_id,
        source=row.source,
        state=source_state(row, now=now, silence_seconds=silence_seconds),
        silent_seconds=max(0.0, (now - row.last_seen_at).total_seconds()),
        last_seen_at=row.last_seen_at,
        last_batch_at=row.last_batch_at,
        last_batch_rows=row.last_batch_rows,
        lag_seconds=lag,
        agent_version=row.agent_version,
        agent_host=row.agent_host,
        read_at=row.read_at,
        spooled=row.spooled,
        spooled_bytes=row.spooled_bytes,
        dropped=row.dropped,
        rejected=row.rejected,
        last_error=row.last_error if with_errors else None,
        last_error_at=row.last_error_at,
    )
