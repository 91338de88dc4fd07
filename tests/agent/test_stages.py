"""The stage sampler's reading of performance_schema's history tables, on recorded rows.

``data/stage_history_mariadb.json`` was captured from MariaDB 10.11 (SELECT * of one
thread's rows: a filesort query, a full scan, a CALL of a procedure running two
statements); ``data/stage_history_mysql8.json`` has MySQL 8.0's column sets and shapes
(statements nested in a transaction, a CALL with a nested statement that has its own
digest, waits in stages, in a wait and between stages). Each is read by the agent's row
readers and folded; the sums are checked against the rows themselves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.stages import LOST_TIME, HistoryCursor, Ring, fold_statements, take_new
from quanta_agent.stages import stage_of, statement_of, wait_of

DATA = Path(__file__).parent / "data"
FILES = {"mariadb": "stage_history_mariadb.json", "mysql8": "stage_history_mysql8.json"}
SORT = {
    "mariadb": "select * from t where a=? order by b desc limit ?",
    "mysql8": "select * from orders order by created_at desc limit ?",
}
SCAN = {
    "mariadb": "select count(*) from t where b like ?",
    "mysql8": "select count(*) from orders where note like ?",
}
SCAN_STAGE = {"mariadb": "Sending data", "mysql8": "executing"}


def recorded(flavor: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / FILES[flavor]).read_text())
    return data


def fold(data: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    rows = [r for r in data["statements"] if r["DIGEST"] is not None]
    top = [statement_of(r) for r in rows if r["NESTING_EVENT_TYPE"] != "STATEMENT"]
    nested = [statement_of(r) for r in data["statements"] if r["NESTING_EVENT_TYPE"] == "STATEMENT"]
    _, taken = take_new(HistoryCursor(), top=top, nested=nested)
    fingerprinter = Fingerprinter()

    def classify(schema: str | None, digest: str) -> tuple[str, str] | None:
        text = data["digests"].get(digest)
        return fingerprinter(text) if text else None

    samples, counts = fold_statements(
        taken,
        [stage_of(r) for r in data["stages"] if r["NESTING_EVENT_TYPE"] == "STATEMENT"],
        [wait_of(r) for r in data["waits"] if r["NESTING_EVENT_TYPE"] in ("STAGE", "STATEMENT")],
        stage_ring=Ring(rows=len(data["stages"]), size=10_000, oldest_end=None),
        wait_ring=Ring(rows=len(data["waits"]), size=10_000, oldest_end=None),
        classify=classify,
    )
    by_text = {sample.fingerprint: sample for sample in samples.values()}
    return by_text, counts


@pytest.mark.parametrize("flavor", sorted(FILES))
def test_filesort_and_full_scan_rank_their_stage_first(flavor: str) -> None:
    samples, _ = fold(recorded(flavor))
    sort, scan = samples[SORT[flavor]], samples[SCAN[flavor]]
    assert max(sort.stages, key=lambda name: sort.stages[name][0]) == "Creating sort index"
    assert max(scan.stages, key=lambda name: scan.stages[name][0]) == SCAN_STAGE[flavor]


@pytest.mark.parametrize("flavor", sorted(FILES))
def test_sums_equal_the_statements_own_times(flavor: str) -> None:
    data = recorded(flavor)
    samples, counts = fold(data)
    for sample in samples.values():
        texts = {
            t for d, t in data["digests"].items() if Fingerprinter()(t)[0] == sample.fingerprint
        }
        statements = [r for r in data["statements"] if data["digests"].get(r["DIGEST"]) in texts]
        own_stages = [
            s
            for r in statements
            for s in data["stages"]
            if s["THREAD_ID"] == r["THREAD_ID"] and s["NESTING_EVENT_ID"] == r["EVENT_ID"]
        ]
        assert sample.executions_sampled == len(statements)
        assert sample.response == sum(max(r["TIMER_WAIT"], _stage_sum(r, data)) for r in statements)
        assert sum(t for t, _ in sample.stages.values()) == sum(s["TIMER_WAIT"] for s in own_stages)
        assert sum(int(c) for _, c in sample.stages.values()) == len(own_stages)
    assert counts.sampled == sum(s.executions_sampled for s in samples.values())


def _stage_sum(statement: dict[str, Any], data: dict[str, Any]) -> int:
    return sum(
        s["TIMER_WAIT"]
        for s in data["stages"]
        if s["THREAD_ID"] == statement["THREAD_ID"]
        and s["NESTING_EVENT_ID"] == statement["EVENT_ID"]
    )


def test_mariadb_stored_program_statements_have_no_digest_and_are_not_filed() -> None:
    # MariaDB does not digest the statements a procedure runs: the CALL is sampled, they are
    # counted as unclassified (never filed under a wrong class).
    data = recorded("mariadb")
    samples, counts = fold(data)
    assert "call two_reads" in samples
    assert counts.unclassified == 2


def test_mysql8_shapes() -> None:
    samples, counts = fold(recorded("mysql8"))
    # Statements nested in a transaction are top-level; the CALL's statement has its digest.
    assert counts.statements == counts.sampled == 5
    assert samples[SCAN["mysql8"]].executions_sampled == 2
    inner = samples["select max(total) from orders where customer_id=?"]
    assert inner.executions_sampled == 1
    call = samples["call report"]
    # The CALL's own stages are few: the time of its statement is its lost time.
    assert call.response - sum(t for t, _ in call.stages.values()) > inner.response
    sort = samples[SORT["mysql8"]]
    assert sort.waits == {
        ("System lock", "wait/lock/table/sql/handler"): [5_000_000, 1],
        ("Creating sort index", "wait/io/table/sql/handler"): [8_700_000_000, 1],
        ("executing", "wait/io/table/sql/handler"): [120_000_000, 1],
        (LOST_TIME, "wait/io/socket/sql/client_connection"): [20_000_000, 1],
    }
    # A wait nested in a wait is in the outer one's time: not counted again.
    scan = samples[SCAN["mysql8"]]
    assert ("executing", "wait/synch/sxlock/innodb/index_tree_rw_lock") not in scan.waits
