"""The wire models (quanta.wire) are the one definition of what the agent sends and the server
takes: every batch the agent builds validates on the server's request model, member for
member, and a member renamed on either side fails here."""

from __future__ import annotations

import gzip
import json
import random
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from quanta import wire
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.folder import MinuteFolder
from quanta.analysis.metrics import MAX_COUNTER
from quanta.analysis.slowlog import parse_slow_log
from quanta.ingest.schemas import IngestBatchIn
from quanta_agent.aggregates import aggregates, extended_metrics
from quanta_agent.batcher import EventBatcher, MinuteBatcher
from quanta_agent.checkpoint import Checkpoint, FileIdentity
from quanta_agent.health import InstanceHealth
from quanta_agent.payload import construct_row, to_json
from quanta_agent.policy import ExamplePolicy
from quanta_agent.shipper import Shipper
from quanta_agent.tailer import SlowLogBatch, SlowLogEntry

ROOT = Path(__file__).resolve().parents[2]
# Percona Server's extended verbosity (every extended metric) and a sqlcommenter tag.
LOG = b"""# Time: 2024-03-01T12:00:01.000100Z
# User@Host: app[app] @ web1 [10.0.0.5]  Id: 42
# Schema: shop  Last_errno: 0  Killed: 0
# Query_time: 0.250000  Lock_time: 0.000100  Rows_sent: 1  Rows_examined: 1200  Rows_affected: 0
# Bytes_sent: 5841  Tmp_tables: 1  Tmp_disk_tables: 1  Tmp_table_sizes: 0
# Full_scan: Yes  Full_join: No  Tmp_table: Yes  Tmp_table_on_disk: Yes
# Filesort: Yes  Filesort_on_disk: No  Merge_passes: 0
#   InnoDB_IO_r_ops: 12  InnoDB_IO_r_bytes: 196608  InnoDB_IO_r_wait: 0.004170
#   InnoDB_rec_lock_wait: 0.000000  InnoDB_queue_wait: 0.000000
use shop;
SET timestamp=1709294401;
SELECT * FROM users WHERE email = 'ann@example.com' /*team='payments'*/;
# Time: 2024-03-01T12:00:02.000100Z
# User@Host: app[app] @ web1 [10.0.0.5]  Id: 42
# Query_time: 1.500000  Lock_time: 0.000100 Rows_sent: 0  Rows_examined: 10
SET timestamp=1709294402;
UPDATE orders SET state = 'paid' WHERE id = 7;
"""
NOW = datetime(2024, 3, 1, 12, 5, tzinfo=UTC).timestamp()
CHECKPOINT = Checkpoint("slow.log", FileIdentity(1, 2, 0, ""), 100, time_line=None, db=None, seq=0)


def tailed() -> SlowLogBatch:
    """The log as the tailer hands it on."""
    entries = tuple(
        SlowLogEntry(event, truncated=False) for event in parse_slow_log(LOG.splitlines(True))
    )
    return SlowLogBatch("b1", entries, CHECKPOINT)


def spooled(policy: ExamplePolicy, *, buckets: bool) -> dict[str, Any]:
    """The body the fold stage spools for the log, decoded."""
    bodies: list[bytes] = []
    common: dict[str, Any] = {
        "instance": "db1", "policy": policy, "max_length": 10_000,
        "spool": lambda _id, body, _n, _c: bodies.append(body), "save_position": lambda _c: None,
    }  # fmt: skip
    if buckets:
        minutes = MinuteBatcher(
            grace=5, max_statements=1000, max_bytes=10**9, wall_clock=lambda: NOW, **common
        )
        minutes.take(tailed())
        minutes.flush()
    else:
        EventBatcher(**common).take(tailed())
    (body,) = bodies
    sent: dict[str, Any] = json.loads(gzip.decompress(body))
    return sent


def status_report() -> dict[str, Any]:
    """The status report the shipper sends, decoded."""
    sent: list[bytes] = []
    shipper = Shipper(server="http://127.0.0.1:9", token="t", instance="db1")
    shipper._post_once = lambda body: sent.append(body)  # type: ignore[method-assign,assignment,return-value]
    health = InstanceHealth(["slowlog"], host="db-host")
    health.read("slowlog", None)
    health.delivery_failed("connection refused")
    status = health.status("slowlog", interval=60, spooled=(2, 4096), dropped=1)
    status.labels = {"env": "prod"}
    assert shipper.report("slowlog", status)
    shipper.close()
    report: dict[str, Any] = json.loads(gzip.decompress(sent[0]))
    return report


def unknown_members(sent: Any, model: type[BaseModel]) -> list[str]:
    """Members of the JSON an agent sent that the model does not declare, at any depth (a
    model that ignores extra members, as the status report does, would drop them)."""
    if not isinstance(sent, dict):
        return []
    found = [name for name in sent if name not in model.model_fields]
    for name, value in sent.items():
        if name not in model.model_fields:
            continue
        inner = _model_in(model.model_fields[name].annotation)
        if inner is not None:
            for item in value if isinstance(value, list) else [value]:
                found += [f"{name}.{m}" for m in unknown_members(item, inner)]
    return found


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        if (found := _model_in(arg)) is not None:
            return found
    return None


def batches() -> dict[str, dict[str, Any]]:
    return {
        "buckets full": spooled(ExamplePolicy.FULL, buckets=True),
        "buckets masked": spooled(ExamplePolicy.MASKED, buckets=True),
        "events full": spooled(ExamplePolicy.FULL, buckets=False),
        "events off": spooled(ExamplePolicy.OFF, buckets=False),
        "status report": status_report(),
    }


@pytest.mark.parametrize("name", list(batches()))
def test_what_the_agent_builds_validates_on_the_server_member_for_member(name: str) -> None:
    sent = batches()[name]
    batch = IngestBatchIn.model_validate_json(json.dumps(sent))
    assert unknown_members(sent, IngestBatchIn) == []
    assert batch.instance == "db1"
    # Read back as the server reads it, every member the agent set is there, unchanged.
    back = json.loads(batch.model_dump_json(exclude_unset=True))
    assert back == sent


def test_the_values_the_agent_builds_are_of_the_declared_types() -> None:
    # model_construct does not validate: serialising with warnings as errors shows a value
    # of another type than the model declares (a str for a datetime, a dict for a model).
    buckets = spooled(ExamplePolicy.FULL, buckets=True)
    model = IngestBatchIn.model_validate_json(json.dumps(buckets))
    assert model.buckets is not None
    assert sum(model.buckets.count) == 2
    assert model.buckets.bytes_sent == [5841, None]  # type: ignore[attr-defined]
    assert model.buckets.tags == ["team=payments", ""]
    for policy in ExamplePolicy:
        folder = MinuteFolder(Fingerprinter(), random.Random(0))
        for entry in tailed().entries:
            folder.add(entry.event, extended_metrics(entry.event, MAX_COUNTER))
        rows = aggregates(folder.fold(), policy=policy, max_length=100)
        built = rows.batch(batch_id="b", instance="db1", policy=policy)
        built.__pydantic_serializer__.to_json(built, exclude_unset=True, warnings="error")


@pytest.mark.parametrize(
    ("kind", "path", "renamed"),
    [
        ("buckets full", ("buckets", "query_time_sum"), "query_time_total"),
        ("buckets full", ("picks", 0, "slowest", "query_time"), "time"),
        ("buckets full", ("queries", 0, "first_seen"), "first"),
        ("events full", ("events", 0, "rows_examined"), "rows_read"),
        ("events full", (), "examples_policy"),
    ],
)
def test_a_member_renamed_on_one_side_is_refused(
    kind: str, path: tuple[str | int, ...], renamed: str
) -> None:
    sent = batches()[kind]
    holder: Any = sent
    for step in path[:-1]:
        holder = holder[step]
    old = path[-1] if path else "batch_id"
    if not path:
        holder[renamed] = "full"  # a member the server does not know
    else:
        holder[renamed] = holder.pop(old)
    with pytest.raises(ValidationError, match=renamed if not path else "Extra inputs"):
        IngestBatchIn.model_validate_json(json.dumps(sent))


def test_a_status_member_renamed_is_caught_though_the_server_ignores_it() -> None:
    # The status report ignores members a newer agent adds, so a rename would pass silently:
    # the agent's members must all be declared.
    report = status_report()
    assert unknown_members(report, IngestBatchIn) == []
    report["agent"]["queued"] = report["agent"].pop("spooled")
    assert unknown_members(report, IngestBatchIn) == ["agent.queued"]


def test_the_server_narrows_the_wire_models_it_derives_from() -> None:
    assert issubclass(IngestBatchIn, wire.IngestBatchIn)
    wire.IngestBatchIn.model_validate({"batch_id": "b", "instance": "db<1>"})
    with pytest.raises(ValidationError, match="instance name"):
        IngestBatchIn.model_validate({"batch_id": "b", "instance": "db<1>"})
    with pytest.raises(ValidationError, match=r"agent\.labels"):
        IngestBatchIn.model_validate(
            {"batch_id": "b", "instance": "db1",
             "agent": {"version": "1", "host": "h", "interval": 60, "labels": {"Bad Key": "x"}}}
        )  # fmt: skip


def test_the_agents_contract_names_every_package_of_the_server_but_analysis_and_wire() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = {c["name"]: c for c in config["tool"]["importlinter"]["contracts"]}
    packages = {
        f"quanta.{path.stem}"
        for path in (ROOT / "backend" / "quanta").iterdir()
        if not path.name.startswith(("_", ".")) and (path.is_dir() or path.suffix == ".py")
    } - {"quanta.analysis", "quanta.wire"}
    for name in (
        "the agent imports only quanta.analysis and quanta.wire of the server",
        "wire is a leaf shared by agent and server: pydantic and quanta.analysis only",
    ):
        assert packages <= set(contracts[name]["forbidden_modules"]), name


def test_a_row_built_without_model_construct_is_the_same_model() -> None:
    fields: dict[str, Any] = {
        "query": "SELECT 1", "query_time": 0.5, "ts": datetime(2024, 3, 1, tzinfo=UTC),
        "truncated": True,
    }  # fmt: skip
    fast = construct_row(wire.SlowLogExampleIn, dict(fields))
    usual = wire.SlowLogExampleIn.model_construct(**fields)
    assert type(fast) is wire.SlowLogExampleIn
    assert fast.model_fields_set == usual.model_fields_set == set(fields)
    expected = {
        "query": "SELECT 1", "query_time": 0.5, "ts": "2024-03-01T00:00:00+00:00",
        "truncated": True,
    }  # fmt: skip
    assert to_json(fast) == to_json(usual)
    assert json.loads(to_json(fast)) == expected
    assert (fast.__pydantic_extra__, fast.__pydantic_private__) == (None, None)
