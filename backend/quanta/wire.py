"""The ingest wire format: what agents POST to /api/v1/ingest, one definition for both ends.

The agent builds its batches from these models and the server validates them with the same
ones (``quanta.ingest.schemas`` derives its request model from :class:`IngestBatchIn`,
adding only the server's rules for instance names and labels). A leaf: it imports pydantic
and ``quanta.analysis`` only, so the agent uses it without the server's dependencies.

The agent does not validate what it builds: it fills the models with
``model_construct`` (no validation, no copy) and writes them with :func:`encode_json`;
the server validates. JSON on the wire is what ``json.dumps`` writes of the members set.
"""

import binascii
from datetime import UTC, datetime, timedelta
from operator import attrgetter
from types import UnionType
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    Self,
    TypeVar,
    Union,
    get_args,
    get_origin,
)

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    StringConstraints,
    WithJsonSchema,
    create_model,
    model_validator,
)

from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.metrics import MAX_COUNTER, MAX_STATEMENT_SECONDS, METRICS, Metric
from quanta.analysis.sources import SourceName
from quanta.analysis.tags import MAX_TAGS_CHARS

MAX_QUERY_CHARS = 1_000_000

_T = TypeVar("_T")

# Statements one aggregated batch may account for (the stored count is a 32-bit integer).
MAX_BATCH_STATEMENTS = 2**31 - 1

# One poll of a digest table (performance_schema_digests_size tops out around 1M rows) or of
# the statistics tables fits in a batch; the body size limits still apply.
MAX_ROWS_PER_KIND = 100_000

# What the store can hold and sum. A batch's value beyond these bounds is a wrapped counter,
# a corrupt log or a forged batch, never data: it is refused with a 422 naming the field, so
# that no sum (a bucket, a rollup, the fleet's totals) can become infinite or overflow.
# MAX_STATEMENT_SECONDS (one statement's time) and MAX_COUNTER are the metric registry's.
PS_TIMER_MAX_SECONDS = 2**64 / 1e12
"""performance_schema timers are picoseconds in a BIGINT UNSIGNED: about 213.5 days."""
MAX_TOTAL_SECONDS = 1e12
"""A sum of seconds over an interval (a bucket's, a user's busy time): some 31,700 years.
Sums of any number of these stay finite in a double."""
MAX_BATCH_SUM = MAX_COUNTER
"""What one batch may add to any counter, whatever its rows: the stored 64-bit sums (minute,
hour and day buckets) then take over a thousand batches at the limit to overflow."""
MAX_PS_HISTOGRAM_BUCKETS = 450
"""events_statements_histogram_by_digest has 450 buckets per digest."""
EARLIEST_TIME = datetime(2000, 1, 1, tzinfo=UTC)
"""No time in a batch is older: a year-1970 timestamp is an unset clock."""
MAX_CLOCK_SKEW = timedelta(days=1)
"""How far ahead of the server's clock a batch's times may be (agents' clocks drift)."""

ExamplePolicyName = Literal["full", "masked", "off"]
Dimension = Annotated[str, StringConstraints(max_length=255)]
# A bucket's tags, canonical (quanta.analysis.tags); the server keeps the configured keys.
TagsText = Annotated[str, StringConstraints(max_length=MAX_TAGS_CHARS)]
Counter = Annotated[int, Field(ge=0, le=MAX_COUNTER)]
StatementSeconds = Annotated[float, Field(ge=0, le=MAX_STATEMENT_SECONDS, allow_inf_nan=False)]
TimerSeconds = Annotated[float, Field(ge=0, le=PS_TIMER_MAX_SECONDS, allow_inf_nan=False)]
TotalSeconds = Annotated[float, Field(ge=0, le=MAX_TOTAL_SECONDS, allow_inf_nan=False)]


def _plausible_time(value: datetime) -> datetime:
    """A time between 2000 and a day ahead of now: else a broken clock or a forged batch."""
    if value < EARLIEST_TIME:
        raise ValueError(f"{value.isoformat()} is before {EARLIEST_TIME.year}")
    if value > datetime.now(UTC) + MAX_CLOCK_SKEW:
        raise ValueError(
            f"{value.isoformat()} is more than {MAX_CLOCK_SKEW.days} day ahead of the "
            "server's clock: check the agent host's clock"
        )
    return value


# Written as isoformat() does (UTC as +00:00), not as pydantic does (UTC as Z): the JSON on
# the wire stays what agents of every version send. The method itself, called from the
# serializer without a Python frame: a batch has some 100,000 times.
_AS_ISOFORMAT = PlainSerializer(datetime.isoformat, return_type=str, when_used="json")
Timestamp = Annotated[AwareDatetime, AfterValidator(_plausible_time), _AS_ISOFORMAT]


def _minutes_isoformat(starts: list[datetime]) -> list[str]:
    """A column of minute starts as isoformat() writes them, each distinct minute once (a
    batch has thousands of buckets of a few minutes)."""
    written = {start: start.isoformat() for start in set(starts)}
    return [written[start] for start in starts]


MinuteStarts = Annotated[
    list[AwareDatetime],
    Field(max_length=MAX_ROWS_PER_KIND, fail_fast=True),
    PlainSerializer(_minutes_isoformat, return_type=list[str], when_used="json"),
]


class SlowLogEventIn(BaseModel):
    """One slow-log entry as the agent parsed it."""

    model_config = ConfigDict(extra="forbid")

    ts: Timestamp
    query: Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS)]
    query_time: StatementSeconds
    lock_time: StatementSeconds | None = None
    rows_sent: int | None = Field(default=None, ge=0, le=MAX_COUNTER)
    rows_examined: int | None = Field(default=None, ge=0, le=MAX_COUNTER)
    db: Dimension | None = None
    user: Dimension | None = None
    host: Dimension | None = None
    # Extended attributes (Percona/MariaDB verbosity, MySQL 8 log_slow_extra): null when the
    # log does not give them, never 0. The metric fields are those of the registry
    # (quanta.analysis.metrics) that a slow log gives (tests/backend/test_metric_registry.py).
    rows_affected: Counter | None = None
    bytes_sent: Counter | None = None
    tmp_tables: Counter | None = Field(default=None, description="Temporary tables created.")
    tmp_disk_tables: Counter | None = Field(
        default=None, description="Temporary tables created on disk."
    )
    filesort: bool | None = None
    filesort_on_disk: bool | None = None
    full_scan: bool | None = None
    full_join: bool | None = None
    merge_passes: Counter | None = None
    innodb_io_r_ops: Counter | None = Field(default=None, description="Pages read from disk.")
    innodb_io_r_bytes: Counter | None = None
    innodb_io_r_wait: StatementSeconds | None = None
    innodb_rec_lock_wait: StatementSeconds | None = None
    innodb_queue_wait: StatementSeconds | None = None
    errors: Counter | None = Field(default=None, description="1 if the statement failed.")
    warnings: Counter | None = None
    truncated: bool = Field(
        default=False, description="The agent cut the statement to its configured length."
    )


def _decode_histogram(value: object) -> LatencyHistogram:
    """A histogram from its base64 byte form (LatencyHistogram.to_bytes), structure checked."""
    if isinstance(value, LatencyHistogram):
        return value
    if not isinstance(value, str):
        raise ValueError("a histogram is a base64 string")
    try:
        data = binascii.a2b_base64(value, strict_mode=True)
    except binascii.Error as exc:
        raise ValueError(f"histogram is not base64: {exc}") from None
    histogram = LatencyHistogram()
    histogram.merge_bytes(data)  # ValueError with the reason when it is not a histogram
    if (histogram.maximum or 0.0) > MAX_STATEMENT_SECONDS:
        raise ValueError(f"histogram holds {histogram.maximum} s, above {MAX_STATEMENT_SECONDS}")
    return histogram


def _encode_histogram(value: LatencyHistogram | bytes) -> str:
    """A histogram's base64 byte form; the agent's folder gives the bytes themselves (it
    never builds the object), the server a LatencyHistogram."""
    data = value if isinstance(value, bytes) else value.to_bytes()
    return binascii.b2a_base64(data, newline=False).decode()


EncodedHistogram = Annotated[
    LatencyHistogram,
    PlainValidator(_decode_histogram),
    PlainSerializer(_encode_histogram, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "format": "byte",
            "description": "A latency histogram in its stored byte form, base64.",
        }
    ),
]


class SlowLogQueryIn(BaseModel):
    """A query class of an aggregated slow-log batch; buckets and picks refer to it by its
    position in ``queries``."""

    model_config = ConfigDict(extra="forbid")

    # Empty for an entry that is only a comment (or 'ASC'): raw events of it form that class
    # too, so refusing it here would lose the whole batch for one such entry.
    fingerprint: Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS)]
    first_seen: Timestamp
    last_seen: Timestamp
    sample: Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS)] = Field(
        description="A statement of the class, for the tables it reads: the fingerprint "
        "when the agent's examples are masked or off."
    )


QueryPosition = Annotated[int, Field(ge=0)]
BucketCount = Annotated[int, Field(ge=1, le=MAX_COUNTER)]
# fail_fast: a list stops at its first bad row. Else a batch of 50,000 rows of 63 unknown
# members each makes pydantic build 3.3 million errors (1.4 GB and 40 s of one core).
Rows = Annotated[list[_T], Field(max_length=MAX_ROWS_PER_KIND, fail_fast=True)]
Column = Annotated[list[_T], Field(max_length=MAX_ROWS_PER_KIND, fail_fast=True)]


# Counter columns of the buckets: what a batch adds to each is bounded (MAX_BATCH_SUM).
BUCKET_COUNTER_COLUMNS = ("count", *(metric.name for metric in METRICS if metric.counter))


_BUCKETS_DOC = """Minutes of query classes, schemas, users and client hosts, folded by the agent: as
columns, the n-th value of every list being the n-th bucket's.

Columns, not one object per bucket: a batch holds tens of thousands of buckets, which as
columns travel in half the bytes and are validated five times faster. A sum column is
absent when no bucket has the attribute, and a value null when no event of its minute
had it (never 0 for unknown).
"""


class _SlowLogBucketColumns(BaseModel):
    """The columns of :class:`SlowLogBucketsIn` other than its sums: one per metric of the
    registry, added from it below."""

    model_config = ConfigDict(extra="forbid")

    query: Column[QueryPosition] = Field(description="Positions of the query classes in `queries`.")
    # Checked against the plausible range once, by its earliest and latest value (see
    # _consistent): an AfterValidator per value was a Python call and a clock read per bucket,
    # on the API and again in the worker.
    start: MinuteStarts = Field(description="Starts of the minutes.")
    db: Column[Dimension]
    user: Column[Dimension]
    host: Column[Dimension]
    tags: Column[TagsText] | None = Field(
        default=None, description="Tags of the statements, canonical; absent: none."
    )
    count: Column[BucketCount]
    query_time_sum: Column[TotalSeconds]
    query_time_min: Column[StatementSeconds]
    query_time_max: Column[StatementSeconds]
    histogram: Column[EncodedHistogram]
    lock_time_max: Column[StatementSeconds | None] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        lengths = {name: len(values) for name, values in self if values is not None}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"columns differ in length: {lengths}")
        rows = zip(
            self.start, self.count, self.histogram, self.query_time_min, self.query_time_max,
            self.query_time_sum, strict=True,
        )  # fmt: skip
        for extreme in (min(self.start, default=None), max(self.start, default=None)):
            if extreme is not None:
                try:
                    _plausible_time(extreme)
                except ValueError as exc:
                    raise ValueError(f"bucket {self.start.index(extreme)}: start {exc}") from None
        for n, (start, count, histogram, least, most, total) in enumerate(rows):
            if start.second or start.microsecond:
                raise ValueError(f"bucket {n}: start must be the start of a minute")
            if histogram.count != count:
                raise ValueError(
                    f"bucket {n}: histogram holds {histogram.count} values, count is {count}"
                )
            if least > most:
                raise ValueError(f"bucket {n}: query_time_min is above query_time_max")
            # count statements of at most `most` seconds each (a rounding margin allowed).
            if total > count * most * (1 + 1e-9) + 1e-6:
                raise ValueError(
                    f"bucket {n}: query_time_sum {total} is above count x query_time_max"
                )
        return self

    def counter_sums(self) -> dict[str, int]:
        """What the batch adds to each counter column, over all its buckets."""
        return {
            name: sum(filter(None, values))
            for name in BUCKET_COUNTER_COLUMNS
            if (values := getattr(self, name)) is not None
        }


def _sum_column(metric: Metric) -> Any:
    """A bucket column of the metric's sums: an integer counter or seconds; absent when no
    bucket has the metric, a value null when no event of its minute had it."""
    value = Counter if metric.counter else TotalSeconds
    return (Column[value | None] | None, None)  # type: ignore[valid-type]


if TYPE_CHECKING:
    SlowLogBucketsIn = _SlowLogBucketColumns
else:
    # One sum column per metric of the registry, in its order (the stored columns' order).
    SlowLogBucketsIn = create_model(
        "SlowLogBucketsIn",
        __base__=_SlowLogBucketColumns,
        __module__=__name__,
        __doc__=_BUCKETS_DOC,
        **{metric.name: _sum_column(metric) for metric in METRICS},
    )


class SlowLogExampleIn(BaseModel):
    """A statement an agent kept as an example (its literals masked if the batch says so)."""

    model_config = ConfigDict(extra="forbid")

    query: Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS)]
    query_time: StatementSeconds
    ts: Timestamp
    db: Dimension = ""
    truncated: bool = False


class SlowLogPickIn(BaseModel):
    """The examples of one query class and minute: the slowest, and one drawn uniformly."""

    model_config = ConfigDict(extra="forbid")

    query: int = Field(ge=0, description="Position of the query class in `queries`.")
    start: Timestamp = Field(description="Start of the minute.")
    seen: Annotated[int, Field(ge=1, le=MAX_COUNTER)] = Field(
        description="Statements the sampled one was drawn from."
    )
    slowest: SlowLogExampleIn
    sampled: SlowLogExampleIn

    @model_validator(mode="after")
    def _minute(self) -> Self:
        if self.start.second or self.start.microsecond:
            raise ValueError("start must be the start of a minute")
        return self


_BYTES_AS_IS = "Bytes, passed through."


class HistogramBucketIn(BaseModel):
    """One latency bucket of MySQL 8's events_statements_histogram_by_digest: its delta."""

    model_config = ConfigDict(extra="forbid")

    low: TimerSeconds = Field(description="Lower bound of the bucket, seconds (BUCKET_TIMER_LOW).")
    high: TimerSeconds = Field(
        description="Upper bound of the bucket, seconds (BUCKET_TIMER_HIGH)."
    )
    count: Counter = Field(description="Statements that fell in this bucket in the interval.")


class PerfSchemaDigestIn(BaseModel):
    """One (schema, digest) of events_statements_summary_by_digest over one poll interval.

    Every ``count_*``/``sum_*`` field is the increase since the previous poll (after a counter
    reset: the value since the reset), never a lifetime total; names follow the
    performance_schema columns, and timer columns are converted from picoseconds to seconds.
    ``min_timer_wait``/``max_timer_wait`` are passed through as the server keeps them (since
    the digest was first seen or last reset), except on a tagged row (``tags``), where they
    are its statements' own. A field the server does not have is null.
    """

    model_config = ConfigDict(extra="forbid")

    schema_name: Dimension | None = Field(description="SCHEMA_NAME; null: no default database.")
    digest: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    digest_text: Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS)] | None = None
    interval_start: Timestamp
    interval_end: Timestamp
    first_seen: Timestamp | None = None
    last_seen: Timestamp | None = None
    reset: bool = Field(
        default=False, description="Counters were reset in the interval (restart, TRUNCATE)."
    )
    count_star: Counter
    sum_timer_wait: TimerSeconds = Field(description="Total statement time, seconds.")
    min_timer_wait: TimerSeconds | None = Field(
        default=None, description="Seconds, passed through."
    )
    max_timer_wait: TimerSeconds | None = Field(
        default=None, description="Seconds, passed through."
    )
    sum_lock_time: TimerSeconds | None = Field(default=None, description="Seconds.")
    sum_cpu_time: TimerSeconds | None = Field(default=None, description="Seconds (MySQL 8.0.28+).")
    sum_errors: Counter | None = None
    sum_warnings: Counter | None = None
    sum_rows_affected: Counter | None = None
    sum_rows_sent: Counter | None = None
    sum_rows_examined: Counter | None = None
    sum_created_tmp_disk_tables: Counter | None = None
    sum_created_tmp_tables: Counter | None = None
    sum_select_full_join: Counter | None = None
    sum_select_full_range_join: Counter | None = None
    sum_select_range: Counter | None = None
    sum_select_range_check: Counter | None = None
    sum_select_scan: Counter | None = None
    sum_sort_merge_passes: Counter | None = None
    sum_sort_range: Counter | None = None
    sum_sort_rows: Counter | None = None
    sum_sort_scan: Counter | None = None
    sum_no_index_used: Counter | None = None
    sum_no_good_index_used: Counter | None = None
    count_secondary: Counter | None = None
    max_controlled_memory: Counter | None = Field(default=None, description=_BYTES_AS_IS)
    max_total_memory: Counter | None = Field(default=None, description=_BYTES_AS_IS)
    example: Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS)] | None = (
        None
    )
    example_literals: Literal["full", "masked"] | None = Field(
        default=None,
        description="How the example was taken: with its literals, or with them masked as ?.",
    )
    histogram: list[HistogramBucketIn] | None = Field(
        default=None,
        max_length=MAX_PS_HISTOGRAM_BUCKETS,
        description="Latency buckets (MySQL 8.0 only): their deltas.",
    )
    tags: TagsText = Field(
        default="",
        description=(
            "Tags of the statements this row counts, canonical (quanta.analysis.tags), from "
            "the SQL_TEXT of events_statements_history_long: the counters are those the "
            "history measured for them, and min/max_timer_wait theirs over the interval. "
            "'' (or absent): the digest's untagged rest. Rows of one digest sum."
        ),
    )

    @model_validator(mode="after")
    def _example_has_policy(self) -> Self:
        if (self.example is None) != (self.example_literals is None):
            raise ValueError("example and example_literals go together")
        return self


MAX_STAGE_ENTRIES = 1000
"""Stages or (stage, wait event) pairs of one sample: a statement has a few dozen stages."""
StageName = Annotated[str, StringConstraints(min_length=1, max_length=128)]


class StageTimeIn(BaseModel):
    """One stage of a sample: its summed time and how many times the sampled executions
    were in it."""

    model_config = ConfigDict(extra="forbid")

    stage: StageName = Field(description="The state as SHOW PROFILE names it (Sending data).")
    time_s: TotalSeconds
    calls: Counter


class StageWaitIn(BaseModel):
    """One wait event under one stage of a sample (``lost time``: between stages)."""

    model_config = ConfigDict(extra="forbid")

    stage: StageName
    event: StageName = Field(description="EVENT_NAME, e.g. wait/io/table/sql/handler.")
    time_s: TotalSeconds
    count: Counter


class StageSampleIn(BaseModel):
    """The stage profile of one query class's executions that performance_schema's history
    kept in one poll, filed in the minute of the poll interval's midpoint, beside the
    digest table's count of the same interval."""

    model_config = ConfigDict(extra="forbid")

    fingerprint: Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUERY_CHARS)]
    bucket_start: Timestamp
    executions_sampled: Counter = Field(
        description="Executions whose stages were all still in events_stages_history_long."
    )
    executions_total: Counter = Field(
        description="Executions events_statements_summary_by_digest counted in the interval."
    )
    response_s: TotalSeconds = Field(description="Summed response time of the sampled ones.")
    waits_sampled: Counter = Field(
        default=0, description="Sampled executions whose waits were all still kept."
    )
    stages: list[StageTimeIn] = Field(default=[], max_length=MAX_STAGE_ENTRIES)
    waits: list[StageWaitIn] = Field(default=[], max_length=MAX_STAGE_ENTRIES)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.bucket_start.second or self.bucket_start.microsecond:
            raise ValueError("bucket_start is the start of a minute")
        if self.waits_sampled > self.executions_sampled:
            raise ValueError("waits_sampled is more than executions_sampled")
        if len({stage.stage for stage in self.stages}) < len(self.stages):
            raise ValueError("a stage appears twice")
        return self


class StageCollectionIn(BaseModel):
    """Whether the server's consumers keep stages (and waits) for the stage profiles."""

    model_config = ConfigDict(extra="forbid")

    stages: bool
    waits: bool


StatsOrigin = Literal["userstat", "perfschema"]


class TableStatIn(BaseModel):
    """Per-table I/O over one interval (deltas): userstat TABLE_STATISTICS or P_S I/O waits."""

    model_config = ConfigDict(extra="forbid")

    origin: StatsOrigin
    schema_name: Dimension
    table_name: Dimension
    interval_start: Timestamp
    interval_end: Timestamp
    reset: bool = False
    rows_read: Counter | None = None
    rows_changed: Counter | None = None
    rows_changed_x_indexes: Counter | None = None
    count_star: Counter | None = None
    count_read: Counter | None = None
    count_write: Counter | None = None
    count_fetch: Counter | None = None
    count_insert: Counter | None = None
    count_update: Counter | None = None
    count_delete: Counter | None = None
    sum_timer_wait: TimerSeconds | None = None
    sum_timer_read: TimerSeconds | None = None
    sum_timer_write: TimerSeconds | None = None
    sum_timer_fetch: TimerSeconds | None = None
    sum_timer_insert: TimerSeconds | None = None
    sum_timer_update: TimerSeconds | None = None
    sum_timer_delete: TimerSeconds | None = None


class IndexStatIn(TableStatIn):
    """Per-index use over one interval (deltas); ``index_name`` null: reads using no index."""

    index_name: Dimension | None


class StatsObservedIn(BaseModel):
    """The interval one poll of the statistics covered, sent whether or not a counter moved:
    how the server knows its statistics are unbroken (an index is unused only over an
    unbroken window)."""

    model_config = ConfigDict(extra="forbid")

    origin: StatsOrigin
    interval_start: Timestamp
    interval_end: Timestamp
    reset: Literal["restart", "flush"] | None = Field(
        default=None,
        description="The counters were reset in the interval: the server restarted, or a "
        "FLUSH emptied them (reads before it are lost).",
    )


class UserStatIn(BaseModel):
    """Per-account activity over one interval (deltas): userstat USER_STATISTICS (MariaDB's
    or Percona Server's columns), and performance_schema's statement errors per user."""

    model_config = ConfigDict(extra="forbid")

    user: Dimension
    interval_start: Timestamp
    interval_end: Timestamp
    reset: bool = False
    concurrent_connections: Counter | None = Field(default=None, description="Passed through.")
    total_connections: Counter | None = None
    total_ssl_connections: Counter | None = None
    connected_time: TotalSeconds | None = None
    busy_time: TotalSeconds | None = None
    cpu_time: TotalSeconds | None = None
    bytes_received: Counter | None = None
    bytes_sent: Counter | None = None
    binlog_bytes_written: Counter | None = None
    rows_read: Counter | None = None
    rows_sent: Counter | None = None
    rows_fetched: Counter | None = None
    table_rows_read: Counter | None = None
    rows_deleted: Counter | None = None
    rows_inserted: Counter | None = None
    rows_updated: Counter | None = None
    select_commands: Counter | None = None
    update_commands: Counter | None = None
    other_commands: Counter | None = None
    commit_transactions: Counter | None = None
    rollback_transactions: Counter | None = None
    denied_connections: Counter | None = None
    lost_connections: Counter | None = None
    access_denied: Counter | None = None
    empty_queries: Counter | None = None
    max_statement_time_exceeded: Counter | None = None
    statement_errors: Counter | None = Field(
        default=None,
        description="Statements that ended in an error (performance_schema SUM_ERRORS).",
    )


def _counter_fields(model: type[BaseModel], *, skip: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The integer fields of a row model (counters), those passed through as they are
    (maxima, gauges) left out."""
    return tuple(
        name
        for name, field in model.model_fields.items()
        if name not in skip and _holds_int(field.annotation)
    )


def _holds_int(annotation: object) -> bool:
    """int, an Annotated int, or an optional one."""
    if annotation is int:
        return True
    if get_origin(annotation) is Annotated:
        return _holds_int(get_args(annotation)[0])
    if get_origin(annotation) in (Union, UnionType):
        return any(_holds_int(arg) for arg in get_args(annotation))
    return False


# Row fields whose values a batch's rows add to the same buckets.
_SUMMED_FIELDS: dict[str, tuple[str, ...]] = {
    "events": _counter_fields(SlowLogEventIn),
    "digests": _counter_fields(
        PerfSchemaDigestIn, skip=("max_controlled_memory", "max_total_memory")
    ),
    "stage_samples": _counter_fields(StageSampleIn),
}

# Which body fields belong to which source; a batch holds only its own source's kind.
_FIELDS_BY_SOURCE: dict[SourceName, tuple[str, ...]] = {
    "slowlog": ("events", "queries", "buckets", "picks"),
    "perfschema": ("digests", "digest_lost", "stage_samples", "stage_collection"),
    "stats": ("tables", "indexes", "users", "observed"),
}


class AgentStatusIn(BaseModel):
    """How an agent is doing with one source, sent every ``interval`` seconds in a batch of
    its own (no rows) even when the source has nothing to ship, so that a quiet source is
    told from one that stopped. Members a newer agent adds are ignored."""

    model_config = ConfigDict(extra="ignore")

    version: Annotated[str, StringConstraints(max_length=50)]
    host: Annotated[str, StringConstraints(max_length=255)]
    interval: float = Field(ge=1, le=86_400, description="Seconds until its next report.")
    read_at: Timestamp | None = Field(
        default=None, description="When the agent last read the source without an error."
    )
    read_failing: bool = Field(
        default=False, description="Its last attempt to read the source failed."
    )
    spooled: Counter = Field(default=0, description="Batches waiting in the agent's spool.")
    spooled_bytes: Counter = 0
    dropped: Counter = Field(
        default=0, description="Batches dropped for lack of spool space since it started."
    )
    rejected: Counter = Field(
        default=0, description="Batches the server refused for good since it started."
    )
    # The server narrows it to its rule for labels (quanta.core.names.Labels).
    labels: dict[str, str] | None = Field(
        default=None,
        description="The instance's labels from the agent's config: they replace the stored "
        "ones when they differ.",
    )
    last_error: Annotated[str, StringConstraints(max_length=500)] | None = Field(
        default=None,
        description="Its newest error, reading the source or reaching the server.",
    )
    last_error_at: Timestamp | None = None


class IngestBatchIn(BaseModel):
    """A batch from one agent for one instance and one source.

    A ``slowlog`` batch holds ``events``, or the agent's own aggregates of them: ``queries``,
    per-minute ``buckets`` and example ``picks``; a ``perfschema`` batch ``digests`` and
    ``digest_lost``, and the stage profiles ``stage_samples`` and ``stage_collection``; a
    ``stats`` batch ``tables``, ``indexes``, ``users`` and ``observed``.
    """

    model_config = ConfigDict(extra="forbid")

    batch_id: Annotated[
        str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._:-]+$")
    ]
    # The server narrows it to its rule for instance names (quanta.core.names.InstanceName).
    instance: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    source: SourceName = "slowlog"
    examples: ExamplePolicyName = Field(
        default="full",
        description="The agent's example policy: masked sends statements with their literals "
        "replaced, off sends them only to be fingerprinted (no example is kept).",
    )
    events: list[SlowLogEventIn] = Field(default=[], fail_fast=True)
    queries: Rows[SlowLogQueryIn] = []
    buckets: SlowLogBucketsIn | None = None
    picks: Rows[SlowLogPickIn] = []
    digests: Rows[PerfSchemaDigestIn] = []
    digest_lost: Counter | None = Field(
        default=None,
        description="Statements performance_schema could not file under a digest in the "
        "interval (increase of Performance_schema_digest_lost): the digest table is full.",
    )
    stage_samples: Rows[StageSampleIn] = []
    stage_collection: StageCollectionIn | None = Field(
        default=None,
        description="Whether the stage consumers are on (sent with every perfschema batch "
        "and when it changes).",
    )
    tables: Rows[TableStatIn] = []
    indexes: Rows[IndexStatIn] = []
    users: Rows[UserStatIn] = []
    observed: StatsObservedIn | None = None
    agent: AgentStatusIn | None = Field(
        default=None,
        description="The agent's own status for this source; a batch with it and no rows "
        "is a status report (nothing is stored but the status).",
    )

    @model_validator(mode="after")
    def _one_kind_per_source(self) -> Self:
        own = _FIELDS_BY_SOURCE[self.source]
        foreign = [
            name
            for fields in _FIELDS_BY_SOURCE.values()
            for name in fields
            if name not in own and getattr(self, name) not in (None, [])
        ]
        if foreign:
            raise ValueError(
                f"a '{self.source}' batch carries only {', '.join(own)}; "
                f"it also has {', '.join(foreign)}: send those in a batch of their own source"
            )
        if self.events and (self.queries or self.buckets or self.picks):
            raise ValueError("a slow-log batch carries events or their aggregates, not both")
        positions = (
            ("buckets", self.buckets.query if self.buckets else []),
            ("picks", [pick.query for pick in self.picks]),
        )
        for name, queries in positions:
            beyond = max(queries, default=-1)
            if beyond >= len(self.queries):
                raise ValueError(
                    f"{name} refer to query {beyond}; the batch has {len(self.queries)}"
                )
        self._check_sums()
        return self

    def _check_sums(self) -> None:
        """Refuse a batch whose rows add more to a counter than the store can take."""
        sums = [
            (f"{kind}.{name}", sum(filter(None, map(attrgetter(name), rows))))
            for kind, fields in _SUMMED_FIELDS.items()
            if (rows := getattr(self, kind))
            for name in fields
        ]
        if self.buckets is not None:
            sums += [(f"buckets.{name}", n) for name, n in self.buckets.counter_sums().items()]
        for name, total in sums:
            if total > MAX_BATCH_SUM:
                raise ValueError(
                    f"{name} adds up to {total} over the batch, above {MAX_BATCH_SUM}: "
                    "a wrapped counter, or send fewer rows per batch"
                )
        if self.buckets is not None and sum(self.buckets.count) > MAX_BATCH_STATEMENTS:
            raise ValueError(
                f"buckets.count adds up to more than {MAX_BATCH_STATEMENTS} statements: "
                "send fewer buckets per batch"
            )

    @property
    def has_rows(self) -> bool:
        """Whether the batch carries any data (else it is only a status report)."""
        return any(
            getattr(self, name) not in (None, [])
            for fields in _FIELDS_BY_SOURCE.values()
            for name in fields
        )

    def data_until(self) -> datetime | None:
        """The newest time the batch's rows cover (its lag is measured from it): the last
        event, the end of the last minute of buckets, or the end of the polled interval."""
        ends: list[datetime] = [event.ts for event in self.events]
        if self.buckets is not None:
            ends += [start + timedelta(minutes=1) for start in self.buckets.start]
        polled = (self.digests, self.tables, self.indexes, self.users)
        ends += [row.interval_end for rows in polled for row in rows]
        return max(ends, default=None)

    @property
    def event_count(self) -> int:
        """Statements the batch accounts for: its events, or the counts of its buckets."""
        return len(self.events) or (sum(self.buckets.count) if self.buckets else 0)
