"""Every place that lists the metrics agrees with the one registry (analysis/metrics.py): the
folder and the server's digests, the stored columns, the ingest wire format, and the agent's
slow-log and performance_schema mappings."""

import pytest
from pydantic import BaseModel
from sqlalchemy import BigInteger, Float

from quanta import wire as schemas
from quanta.analysis import aggregate, buckets, folder
from quanta.analysis.metrics import (
    MAX_COUNTER,
    MAX_STATEMENT_SECONDS,
    METRIC,
    METRICS,
    PERFSCHEMA_SUMS,
    SUM_METRICS,
    Kind,
)
from quanta.analysis.slowlog import SlowLogEvent
from quanta.queries.models import BUCKET_MODELS, QUERY_TOTALS_MODELS, TOTALS_MODELS
from quanta.queries.writes import SUM_COLUMNS
from quanta_agent import aggregates as agent
from quanta_agent.perfschema import DELTA_COLUMNS

NAMES = [metric.name for metric in METRICS]
MODELS = [*BUCKET_MODELS.values(), *TOTALS_MODELS.values(), *QUERY_TOTALS_MODELS.values()]


def test_the_registry_is_the_designed_list() -> None:
    """design.md's "Metrics" list, in the stored columns' order; names unique."""
    assert NAMES == [
        "lock_time", "rows_sent", "rows_examined", "rows_affected", "bytes_sent", "tmp_tables",
        "tmp_disk_tables", "filesort", "filesort_on_disk", "full_scan", "full_join",
        "merge_passes", "innodb_io_r_ops", "innodb_io_r_bytes", "innodb_io_r_wait",
        "innodb_rec_lock_wait", "innodb_queue_wait", "errors", "warnings", "no_index_used",
        "no_good_index_used",
    ]  # fmt: skip
    assert list(METRIC) == NAMES
    assert [m.name for m in METRICS if m.kind is Kind.SECONDS] == [
        "lock_time", "innodb_io_r_wait", "innodb_rec_lock_wait", "innodb_queue_wait",
    ]  # fmt: skip
    assert [m.name for m in METRICS if m.kind is Kind.FLAG] == [
        "filesort", "filesort_on_disk", "full_scan", "full_join",
    ]  # fmt: skip
    assert [m.name for m in METRICS if not m.slowlog] == ["no_index_used", "no_good_index_used"]


def test_aggregation_takes_its_metrics_from_the_registry() -> None:
    assert aggregate.SUM_METRICS is buckets.SUM_METRICS is SUM_METRICS
    assert list(SUM_METRICS) == NAMES
    assert folder.MAX_COUNTER == MAX_COUNTER == 2**53
    assert aggregate._PERFSCHEMA_SUMS == PERFSCHEMA_SUMS
    assert PERFSCHEMA_SUMS == {
        "lock_time": ("sum_lock_time",),
        "rows_sent": ("sum_rows_sent",),
        "rows_examined": ("sum_rows_examined",),
        "rows_affected": ("sum_rows_affected",),
        "tmp_tables": ("sum_created_tmp_tables",),
        "tmp_disk_tables": ("sum_created_tmp_disk_tables",),
        "filesort": ("sum_sort_scan", "sum_sort_range"),
        "full_scan": ("sum_select_scan",),
        "full_join": ("sum_select_full_join",),
        "merge_passes": ("sum_sort_merge_passes",),
        "errors": ("sum_errors",),
        "warnings": ("sum_warnings",),
        "no_index_used": ("sum_no_index_used",),
        "no_good_index_used": ("sum_no_good_index_used",),
    }
    # The usual entry's counters, which the folder keeps as columns of every event, are
    # the metrics the reader gives as fields of its events (lock_time has its own maximum).
    counted = [m.name for m in METRICS if m.event_field and m.kind is Kind.ROWS]
    assert list(folder._COUNTED) == counted
    assert set(counted) | {"lock_time"} <= set(folder.FOLDED_COLUMNS)
    event_fields = set(SlowLogEvent.__dataclass_fields__)
    assert {m.name for m in METRICS if m.event_field} <= event_fields


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__tablename__)
def test_every_metric_table_has_one_sum_column_per_metric(model: type) -> None:
    table = model.__table__  # type: ignore[attr-defined]
    sums = [c.name for c in table.c if c.name.endswith("_sum") and c.name != "query_time_sum"]
    assert sorted(sums) == sorted(m.column for m in METRICS)
    for metric in METRICS:
        column = table.c[metric.column]
        assert column.nullable, metric.name  # NULL: no source gave it, never 0
        assert isinstance(column.type, BigInteger if metric.counter else Float), metric.name
    assert list(SUM_COLUMNS) == [m.column for m in METRICS]


def _wire_type(model: type[BaseModel], name: str) -> tuple[str, float | None]:
    """(JSON type, maximum) of an optional field, from the model's JSON schema (what
    openapi.json publishes)."""
    (schema,) = [
        s for s in model.model_json_schema()["properties"][name]["anyOf"] if s["type"] != "null"
    ]
    return schema["type"], schema.get("maximum")


def test_a_slow_log_event_on_the_wire_has_every_metric_a_slow_log_gives() -> None:
    fields = set(schemas.SlowLogEventIn.model_fields)
    slowlog = [m.name for m in METRICS if m.slowlog]
    not_metrics = {"ts", "query", "query_time", "db", "user", "host", "truncated"}
    assert fields - not_metrics == set(slowlog)
    for metric in METRICS:
        if metric.slowlog:
            expected = {Kind.SECONDS: "number", Kind.FLAG: "boolean"}.get(metric.kind, "integer")
            assert _wire_type(schemas.SlowLogEventIn, metric.name) == (
                expected,
                metric.statement_bound,
            ), metric.name
    assert schemas.MAX_STATEMENT_SECONDS == MAX_STATEMENT_SECONDS


def test_the_bucket_columns_on_the_wire_are_one_per_metric() -> None:
    fields = set(schemas.SlowLogBucketsIn.model_fields)
    not_metrics = {
        "query", "start", "db", "user", "host", "tags", "count", "query_time_sum", "query_time_min",
        "query_time_max", "histogram", "lock_time_max",
    }  # fmt: skip
    assert fields - not_metrics == set(NAMES)
    for metric in METRICS:
        properties = schemas.SlowLogBucketsIn.model_json_schema()["properties"]
        (column,) = [s for s in properties[metric.name]["anyOf"] if s["type"] == "array"]
        (value,) = [s for s in column["items"]["anyOf"] if s["type"] != "null"]
        expected = (
            ("integer", MAX_COUNTER) if metric.counter else ("number", schemas.MAX_TOTAL_SECONDS)
        )
        assert (value["type"], value["maximum"]) == expected, metric.name
    counters = ("count", *(m.name for m in METRICS if m.counter))
    assert counters == schemas.BUCKET_COUNTER_COLUMNS


def test_a_digest_on_the_wire_and_the_agent_poll_carry_every_perfschema_column() -> None:
    columns = {c for m in METRICS for c in m.perfschema}
    assert len(columns) == 15
    assert columns <= set(schemas.PerfSchemaDigestIn.model_fields)
    assert {c.upper() for c in columns} <= set(DELTA_COLUMNS)


def test_the_agent_reads_each_extended_metric_by_the_registry_names() -> None:
    extended = {m.name for m in METRICS if m.slowlog and not m.event_field}
    mapped = {*agent._COUNTERS, *agent._SECONDS, *agent._FLAGS, *agent._DERIVED}
    assert mapped == extended
    for name, names in {**agent._COUNTERS, **agent._SECONDS, **agent._FLAGS}.items():
        assert names == METRIC[name].slowlog
    assert agent._COUNTERS == {
        "bytes_sent": ("Bytes_sent",),
        "tmp_tables": ("Tmp_tables", "Created_tmp_tables"),
        "tmp_disk_tables": ("Tmp_disk_tables", "Created_tmp_disk_tables"),
        "merge_passes": ("Merge_passes", "Sort_merge_passes"),
        "innodb_io_r_ops": ("InnoDB_IO_r_ops", "Pages_read"),
        "innodb_io_r_bytes": ("InnoDB_IO_r_bytes",),
    }
    assert agent._SECONDS == {
        "innodb_io_r_wait": ("InnoDB_IO_r_wait", "Pages_read_time"),
        "innodb_rec_lock_wait": ("InnoDB_rec_lock_wait",),
        "innodb_queue_wait": ("InnoDB_queue_wait",),
    }
    assert set(agent._FLAGS) == {"full_scan", "full_join", "filesort", "filesort_on_disk"}
    assert {k: v for k, v in agent._FLAG_COUNTS.items() if v} == {
        "tmp_tables": ("Tmp_table",),
        "tmp_disk_tables": ("Tmp_table_on_disk",),
    }
    assert agent._SORT_COUNTS == ("Sort_scan_count", "Sort_range_count")
    assert agent._ERRNO == ("Errno", "Last_errno")


def test_an_event_with_every_attribute_gives_every_extended_metric() -> None:
    """Each mapping end to end: one attribute of each metric gives that metric's field."""
    attributes = {m.slowlog[0]: 3 for m in METRICS if m.slowlog and not m.event_field}
    attributes |= {METRIC[n].slowlog[0]: True for n in ("filesort", "filesort_on_disk")}
    attributes |= {METRIC[n].slowlog[0]: True for n in ("full_scan", "full_join")}
    attributes["warnings"] = "Warning 1 a\nNote 2 b"
    fields = agent.extended_fields(attributes, MAX_COUNTER)
    assert set(fields) == {m.name for m in METRICS if m.slowlog and not m.event_field}
    assert fields == {
        "bytes_sent": 3, "tmp_tables": 3, "tmp_disk_tables": 3, "filesort": True,
        "filesort_on_disk": True, "full_scan": True, "full_join": True, "merge_passes": 3,
        "innodb_io_r_ops": 3, "innodb_io_r_bytes": 3, "innodb_io_r_wait": 3.0,
        "innodb_rec_lock_wait": 3.0, "innodb_queue_wait": 3.0, "errors": 1, "warnings": 2,
    }  # fmt: skip
