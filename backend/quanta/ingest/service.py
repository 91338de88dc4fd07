"""Use cases of ingest: accept a batch durably, then process it in the worker."""

import gzip
import logging
import zlib
from dataclasses import dataclass, fields
from datetime import datetime, timedelta

from pydantic import ValidationError
from sqlalchemy import update
from sqlalchemy.exc import DataError, IntegrityError, OperationalError
from sqlalchemy.orm import Session

from quanta.agents import service as agents
from quanta.analysis.aggregate import digest_buckets, digest_events, digest_perfschema
from quanta.analysis.buckets import BatchDigest
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.auth.service import Principal
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.db import run_after_commit, utcnow
from quanta.core.observability import (
    QueueState,
    record_batch_failed,
    record_events_counted,
    record_ingest_batch,
)
from quanta.core.tasks import PROCESS_BATCH_TASK, enqueue, enqueue_after_commit
from quanta.ingest import repository
from quanta.ingest.models import MAX_ERROR_CHARS, BatchStatus, IngestBatch
from quanta.ingest.schemas import (
    MAX_ROWS_PER_KIND,
    AgentStatusIn,
    IngestBatchIn,
    IngestBatchOut,
)
from quanta.ingest.shape import ShapeError, ShapeLimits, TooMany, check_shape
from quanta.instances.service import (
    adopt_primary_source,
    find_instance,
    get_or_create_instance,
    monitoring_user,
    set_labels,
)
from quanta.queries import rollup
from quanta.queries.classes import admit_classes
from quanta.queries.tags import bound_tags
from quanta.queries.writes import mark_runners, record_digest
from quanta.stages.service import record_stage_samples
from quanta.statistics.service import record_statistics
from quanta.tables.service import changed_tables, refresh_soon

log = logging.getLogger(__name__)

# What happens to a batch whose task could not be queued (the broker is down).
_BATCH_STAYS_QUEUED = "it stays queued for the re-enqueue job"

# The product name in the agent's User-Agent: quanta-agent/<version>.
AGENT_PRODUCT = "quanta-agent"


class IngestError(errors.QuantaError):
    """A batch the server cannot accept; the message says why."""


class PayloadTooLarge(errors.PayloadTooLarge, IngestError):
    """The request body or its decompressed form exceeds the configured limits."""


class InvalidPayload(errors.Unprocessable, IngestError):
    """The body is not a valid batch."""


class BatchNotFound(errors.NotFound, IngestError):
    """No batch with that id."""


class InstanceNotAllowed(errors.Forbidden, IngestError):
    """The token is bound to other instances than the batch's."""


@dataclass(frozen=True, slots=True)
class DecodedBatch:
    """A validated batch and the gzip bytes to store."""

    batch: IngestBatchIn
    payload_gzip: bytes


def decode_batch(*, body: bytes, content_encoding: str | None, settings: Settings) -> DecodedBatch:
    """Decompress and validate a request body; raise an IngestError that says what is wrong."""
    if len(body) > settings.ingest_max_body_bytes:
        raise PayloadTooLarge(f"Body exceeds {settings.ingest_max_body_bytes} bytes.")
    encoding = (content_encoding or "identity").strip().lower()
    if encoding == "gzip":
        raw = _gunzip(body, limit=settings.ingest_max_decoded_bytes)
        payload_gzip = body
    elif encoding == "identity":
        raw = body
        payload_gzip = gzip.compress(body, compresslevel=1)
    else:
        raise InvalidPayload(f"Unsupported Content-Encoding '{encoding}': use gzip or none.")
    batch = _validated(raw, settings)
    if isinstance(batch, IngestError):
        # Raised here, not where it was caught: the decoded body must not stay reachable from
        # the traceback (the server may keep it until a full garbage collection).
        del raw, body
        raise batch
    return DecodedBatch(batch=batch, payload_gzip=payload_gzip)


def _validated(raw: bytes, settings: Settings) -> IngestBatchIn | IngestError:
    """The batch, or why it is refused: its shape is counted before pydantic validates it,
    because pydantic builds the whole document before it measures a list."""
    try:
        check_shape(raw, _shape_limits(settings))
        return IngestBatchIn.model_validate_json(raw)
    except TooMany as exc:
        return PayloadTooLarge(str(exc))
    except ShapeError as exc:
        return InvalidPayload(str(exc))
    except ValidationError as exc:
        return InvalidPayload(_describe(exc))


def _shape_limits(settings: Settings) -> ShapeLimits:
    return ShapeLimits(
        default_items=MAX_ROWS_PER_KIND,
        items={"events": settings.ingest_max_events},
        max_values=settings.ingest_max_values,
    )


def agent_version(user_agent: str | None) -> str | None:
    """The agent's version from its User-Agent (``quanta-agent/0.4.0``), else None.

    >>> agent_version("quanta-agent/0.4.0"), agent_version("curl/8.5.0")
    ('0.4.0', None)
    """
    product, _, version = (user_agent or "").partition("/")
    return version.split()[0][:50] if product == AGENT_PRODUCT and version else None


def accept_batch(
    *,
    session: Session,
    settings: Settings,
    principal: Principal,
    decoded: DecodedBatch,
    user_agent: str | None = None,
) -> tuple[IngestBatchOut, bool]:
    """Store a batch and enqueue its processing after commit; a resent batch is not stored again.

    A batch without rows that carries the agent's status is a status report: only the
    status is kept (agents' health), nothing is stored or processed.

    Returns the batch's status and whether it was new.
    """
    batch = decoded.batch
    if not principal.may_ingest_for(batch.instance):
        allowed = ", ".join(sorted(principal.instances or ()))
        raise InstanceNotAllowed(
            f"This token may only send batches for {allowed}, not '{batch.instance}': "
            "create a token bound to that instance (quanta token create --instance NAME)."
        )
    received_at = utcnow()
    if batch.agent is not None and not batch.has_rows:
        return _status_report(session, batch, batch.agent, received_at), True
    existing = repository.find_batch(session, token_id=principal.token_id, batch_id=batch.batch_id)
    if existing is not None:
        record_ingest_batch(source=batch.source, events=batch.event_count, accepted=False)
        return _batch_out(existing), False
    instance = get_or_create_instance(session=session, name=batch.instance)
    row = IngestBatch(
        token_id=principal.token_id,
        batch_id=batch.batch_id,
        instance_id=instance.id,
        source=batch.source,
        payload_gzip=decoded.payload_gzip,
        event_count=batch.event_count,
        status=BatchStatus.QUEUED,
        received_at=received_at,
    )
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError:
        # The same batch arrived twice at once and the other request stored it first.
        existing = repository.find_batch(
            session, token_id=principal.token_id, batch_id=batch.batch_id
        )
        assert existing is not None
        record_ingest_batch(source=batch.source, events=batch.event_count, accepted=False)
        return _batch_out(existing), False
    agents.record_batch(
        session=session,
        batch=agents.ReceivedBatch(
            instance_id=instance.id,
            source=batch.source,
            received_at=received_at,
            rows=_rows(batch),
            data_until=batch.data_until(),
            agent_version=agent_version(user_agent),
        ),
    )
    if batch.agent is not None:
        agents.record_status(
            session=session,
            instance_id=instance.id,
            source=batch.source,
            status=_agent_status(batch.agent),
            received_at=received_at,
        )
    enqueue_after_commit(
        session, settings, PROCESS_BATCH_TASK, [row.id], otherwise=_BATCH_STAYS_QUEUED
    )
    run_after_commit(
        session,
        lambda: record_ingest_batch(source=batch.source, events=batch.event_count, accepted=True),
    )
    return _batch_out(row), True


def _status_report(
    session: Session, batch: IngestBatchIn, status: AgentStatusIn, received_at: datetime
) -> IngestBatchOut:
    """Keep an agent's status report for its instance and source; nothing else is stored."""
    instance = get_or_create_instance(session=session, name=batch.instance)
    if status.labels is not None:
        set_labels(session=session, instance=instance, labels=status.labels)
    agents.record_status(
        session=session,
        instance_id=instance.id,
        source=batch.source,
        status=_agent_status(status),
        received_at=received_at,
    )
    return IngestBatchOut(
        batch_id=batch.batch_id,
        status=BatchStatus.DONE,
        events=0,
        received_at=received_at,
        processed_at=received_at,
    )


def _agent_status(status: AgentStatusIn) -> agents.AgentStatus:
    """The wire's status report as the agents domain takes it."""
    names = {field.name for field in fields(agents.AgentStatus)}
    return agents.AgentStatus(**status.model_dump(include=names))


def _rows(batch: IngestBatchIn) -> int:
    """What a batch carries: statements (slow log), digests, or statistics rows."""
    if batch.source == "slowlog":
        return batch.event_count
    return len(batch.digests) + len(batch.tables) + len(batch.indexes) + len(batch.users)


def get_batch_status(*, session: Session, principal: Principal, batch_id: str) -> IngestBatchOut:
    """The status of a batch this token sent."""
    row = repository.find_batch(session, token_id=principal.token_id, batch_id=batch_id)
    if row is None:
        raise BatchNotFound(f"No batch '{batch_id}' was sent with this token.")
    return _batch_out(row)


def enqueue_batch(*, settings: Settings, batch_pk: int) -> None:
    """Ask a worker to process a stored batch; if the broker is down, beat re-enqueues it."""
    enqueue(settings, PROCESS_BATCH_TASK, [batch_pk], otherwise=_BATCH_STAYS_QUEUED)


def process_batch(
    *,
    session: Session,
    settings: Settings,
    batch_pk: int,
    fingerprinter: Fingerprinter | None = None,
) -> int:
    """Fold a stored batch into the metric store, exactly once; returns the events counted.

    Claiming the batch (queued -> done) is the first write of the transaction, so a second
    worker given the same batch waits on the row and then finds nothing to claim; if anything
    fails (or the worker dies), the rollback leaves the batch queued for a retry. Everything
    the batch adds (catalog, buckets of every resolution, examples) is in that transaction,
    and so is dropping the raw payload: once processed, a batch keeps only its row (for
    idempotency) and none of the statements it carried.
    """
    claimed = session.execute(
        update(IngestBatch)
        .where(IngestBatch.id == batch_pk, IngestBatch.status == BatchStatus.QUEUED)
        .values(status=BatchStatus.DONE, processed_at=utcnow())
    )
    if claimed.rowcount == 0:  # type: ignore[attr-defined]
        return 0
    row = session.get_one(IngestBatch, batch_pk)
    payload, row.payload_gzip = row.payload_gzip, None
    if payload is None:
        # Requeued by hand after its payload was dropped: nothing left to count.
        log.warning("batch %s has no payload left: nothing counted", batch_pk)
        return 0
    batch = IngestBatchIn.model_validate_json(gzip.decompress(payload))
    if batch.source == "slowlog" and batch.events:
        digest = digest_events(batch.events, fingerprinter)
        counted = len(batch.events)
    elif batch.source == "slowlog":
        digest = digest_buckets(
            batch.queries,
            batch.buckets,
            batch.picks,
            fingerprinter,
            masked=batch.examples != "full",
        )
        counted = batch.event_count
    elif batch.source == "perfschema":
        digest = digest_perfschema(batch.digests, fingerprinter)
        counted = sum(d.count_star for d in batch.digests)
    else:
        # Table/index/user statistics: the workload by table and account, the index
        # review; they are not query load.
        return record_statistics(
            session=session,
            settings=settings,
            instance_id=row.instance_id,
            tables=batch.tables,
            indexes=batch.indexes,
            users=batch.users,
            observed=batch.observed,
        )
    instance = find_instance(session=session, instance_id=row.instance_id)
    adopt_primary_source(session=session, instance=instance, source=batch.source)
    # Past the instance's class caps, new fingerprints are counted under "other queries":
    # decided here, so the writes below only see ordinary query ids.
    digest = admit_classes(
        session=session,
        settings=settings,
        instance_id=instance.id,
        instance=instance.name,
        digest=digest,
    )
    # Only the configured tag keys, each with a capped number of values per instance.
    digest = bound_tags(session=session, settings=settings, instance_id=instance.id, digest=digest)
    record_digest(
        session=session,
        instance_id=row.instance_id,
        source=batch.source,
        digest=digest,
        example_policy=_stricter_policy(instance.example_policy, batch.examples),
        example_max_chars=settings.example_max_chars,
    )
    _mark_runners(session, digest, monitoring_user(settings, instance))
    if batch.source == "perfschema":
        record_stage_samples(
            session=session,
            instance_id=row.instance_id,
            samples=batch.stage_samples,
            collection=batch.stage_collection,
            classify=fingerprinter or Fingerprinter(),
        )
    # An ALTER TABLE / CREATE INDEX / DROP INDEX just ran: read that table again soon, so an
    # applied suggestion becomes "applied" within minutes, not at the daily refresh (only a
    # statement that succeeded; debounced, and only tables already snapshotted: refresh_soon).
    refresh_soon(
        session=session,
        settings=settings,
        instance=instance,
        tables=changed_tables(_statements(digest)),
    )
    run_after_commit(session, lambda: record_events_counted(source=batch.source, events=counted))
    return counted


# Failures that come from the batch itself (a value the store cannot hold, a payload stored
# by an older, laxer version): processing it again cannot succeed.
_BATCH_AT_FAULT = (ValueError, ArithmeticError, DataError)


def begin_attempt(*, session: Session, settings: Settings, batch_pk: int) -> bool:
    """Count an attempt to process a queued batch, in its own transaction (so that a worker
    that dies on the batch still counts); False, and the batch marked failed, once it has had
    ``ingest_max_attempts``. False too when the batch is not queued (done, failed, gone)."""
    row = session.get(IngestBatch, batch_pk)
    if row is None or row.status != BatchStatus.QUEUED:
        return False
    if row.attempts >= settings.ingest_max_attempts:
        last = f"; last error: {row.error}" if row.error else ""
        _mark_failed(session, row, f"gave up after {row.attempts} attempts{last}")
        return False
    row.attempts += 1
    return True


def record_failure(
    *, session: Session, settings: Settings, batch_pk: int, error: BaseException
) -> BatchStatus | None:
    """Note why processing a batch failed: it is failed at once when the batch is at fault,
    else after its attempts; returns its status (None when it is gone)."""
    row = session.get(IngestBatch, batch_pk)
    if row is None or row.status != BatchStatus.QUEUED:
        return row.status if row is not None else None
    reason = failure_reason(error)
    if isinstance(error, _BATCH_AT_FAULT) or row.attempts >= settings.ingest_max_attempts:
        _mark_failed(session, row, reason)
    else:
        if isinstance(error, OperationalError) and row.attempts > 0:
            row.attempts -= 1  # the store refused (locked, unreachable): not the batch's fault
        row.error = reason
    return row.status


def failure_reason(error: BaseException) -> str:
    """One line saying why a batch failed, without the statement or the values it held."""
    if isinstance(error, ValidationError):
        text = _describe(error)
    else:
        text = str(getattr(error, "orig", None) or error).strip()
        text = text.splitlines()[0] if text else ""
        text = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return text[:MAX_ERROR_CHARS]


def _mark_failed(session: Session, row: IngestBatch, reason: str) -> None:
    row.status = BatchStatus.FAILED
    row.error = reason[:MAX_ERROR_CHARS]
    row.processed_at = utcnow()
    row.payload_gzip = None  # transient like a processed batch's: it holds the literals
    source = row.source
    log.warning("batch %s (%s) failed: %s", row.id, row.batch_id, row.error)
    run_after_commit(session, lambda: record_batch_failed(source=source))


# Example policies from the most to the least revealing.
_POLICY_ORDER = ("full", "masked", "off")


def _mark_runners(session: Session, digest: BatchDigest, monitor: str | None) -> None:
    """Record which classes the monitoring account ran and which anyone else did (slow-log
    buckets name the user; performance_schema's have none and say nothing)."""
    own: set[str] = set()
    app: set[str] = set()
    for key in digest.buckets:
        if key.user:
            (own if monitor is not None and key.user == monitor else app).add(key.query_id)
    mark_runners(session=session, own=sorted(own), app=sorted(app))


def _statements(digest: BatchDigest) -> list[tuple[str, str | None]]:
    """Each class's statement with a database it ran in (to qualify a DDL's table), for the
    classes that succeeded at least once: those whose every execution reported an error
    (slow-log Errno, performance_schema SUM_ERRORS) changed nothing. Where no error number
    is known (MariaDB's slow log has none), the class counts as succeeded."""
    schemas: dict[str, str] = {}
    executions: dict[str, int] = {}
    failures: dict[str, int | None] = {}
    for key, metrics in digest.buckets.items():
        if key.schema:
            schemas.setdefault(key.query_id, key.schema)
        executions[key.query_id] = executions.get(key.query_id, 0) + metrics.count
        errors = metrics.sums.get("errors")
        known = failures.get(key.query_id, 0)
        failures[key.query_id] = None if errors is None or known is None else known + int(errors)
    return [
        (seen.sample or seen.fingerprint, schemas.get(qid))
        for qid, seen in digest.queries.items()
        if not _always_failed(executions.get(qid, 0), failures.get(qid))
    ]


def _always_failed(executions: int, failures: int | None) -> bool:
    return failures is not None and executions > 0 and failures >= executions


def _stricter_policy(instance_policy: str, agent_policy: str) -> str:
    """The instance's policy or the agent's, whichever keeps less of the query text."""
    return max(instance_policy, agent_policy, key=_POLICY_ORDER.index)


def drop_processed_payloads(*, session: Session) -> int:
    """Drop the raw payload of every batch that is not queued (processed or given up).

    Processing drops its own batch's payload; this catches the rest (batches stored before
    payloads were transient, batches given up on) for retention and purges.
    """
    return repository.clear_processed_payloads(session)


def requeue_stale_batches(*, session: Session, settings: Settings) -> list[int]:
    """Re-enqueue batches whose task was lost (broker down at accept time, broker restart)."""
    cutoff = utcnow() - timedelta(seconds=settings.ingest_requeue_after_seconds)
    stale = repository.stale_batch_ids(session, received_before=cutoff)
    for batch_pk in stale:
        enqueue_batch(settings=settings, batch_pk=batch_pk)
    return stale


def queue_state(*, session: Session, settings: Settings) -> QueueState:
    """Batches stored but not processed yet, the age of the oldest (queue lag), and the
    roll-up's backlog and lag."""
    now = utcnow()
    depth, oldest = repository.queue_summary(session)
    age = max(0.0, (now - oldest).total_seconds()) if oldest is not None else 0.0
    failed = repository.count_failed(session)
    pending, lag = rollup.state(
        session=session, now=now, grace_seconds=settings.rollup_grace_seconds
    )
    return QueueState(
        depth=depth,
        oldest_age_seconds=age,
        failed=failed,
        rollup_pending=pending,
        rollup_lag_seconds=lag,
    )


def _gunzip(body: bytes, *, limit: int) -> bytes:
    # Bounded decompression: a small gzip bomb must not exhaust memory.
    decompressor = zlib.decompressobj(wbits=31)
    try:
        raw = decompressor.decompress(body, limit)
    except zlib.error as exc:
        raise InvalidPayload(f"Body is not valid gzip: {exc}.") from exc
    if decompressor.unconsumed_tail:
        raise PayloadTooLarge(f"Decompressed body exceeds {limit} bytes.")
    if not decompressor.eof:
        raise InvalidPayload("Body is truncated gzip.")
    if decompressor.unused_data:
        # A second gzip member would escape the limit here and be inflated unbounded by the
        # worker (gzip.decompress reads every member): accept exactly one.
        raise InvalidPayload("Body has data after the gzip stream: send a single gzip member.")
    return raw


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[:3]
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in first]
    more = f" (and {exc.error_count() - len(first)} more)" if exc.error_count() > len(first) else ""
    return "Invalid batch: " + "; ".join(parts) + more


def _batch_out(row: IngestBatch) -> IngestBatchOut:
    return IngestBatchOut(
        batch_id=row.batch_id,
        status=row.status,
        events=row.event_count,
        received_at=row.received_at,
        processed_at=row.processed_at,
        error=row.error if row.status == BatchStatus.FAILED else None,
    )
