"""`quanta digest` and `quanta fingerprint` from the command line, and the parallel reader."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.cli import app
from quanta.digest import runner
from quanta.digest.report import to_json
from quanta.digest.runner import DigestOptions, digest_files

START = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
cli = CliRunner()


def write_log(path: Path, entries: int = 300) -> Path:
    """A log with `use` only when the database changes, and two malformed entries."""
    lines: list[str] = []
    database = None
    for n in range(entries):
        at = START + timedelta(minutes=n)
        db = "shop" if n < entries // 2 else "crm"
        lines.append(f"# Time: {at.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}\n")
        lines.append(f"# User@Host: app[app] @ web{n % 3} [10.0.0.{n % 3}]  Id: {n % 5}\n")
        seconds = 0.001 * (n % 10 + 1) if n % 3 else 0.2
        lines.append(
            f"# Query_time: {seconds:.6f}  Lock_time: 0.000010 Rows_sent: {n % 4}  "
            "Rows_examined: 10\n"
        )
        if db != database:
            lines.append(f"use {db};\n")
            database = db
        lines.append(f"SET timestamp={int(at.timestamp())};\n")
        shard = n % 2
        lines.append(
            f"SELECT * FROM orders_{shard} WHERE id = {n};\n" if n % 3 else f"UPDATE t SET a={n};\n"
        )
        if n in (100, 200):
            lines.append("# Query_time: not-a-number\nSELECT 0;\n")
    path.write_text("".join(lines))
    return path


def malformed_lines(path: Path) -> list[int]:
    """Line numbers of the malformed entries write_log puts in."""
    lines = path.read_text().splitlines()
    return [n for n, line in enumerate(lines, 1) if line == "# Query_time: not-a-number"]


def invoke(*args: str, stdin: str | None = None) -> Any:
    return cli.invoke(app, list(args), input=stdin)


def test_json_report(tmp_path: Path) -> None:
    log = write_log(tmp_path / "slow.log")
    result = invoke("digest", str(log), "--format", "json", "--limit", "0", "--jobs", "1")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["global"]["events"] == 300
    assert report["global"]["skipped"] == 2
    assert report["global"]["ts_min"] == START.isoformat()
    assert report["global"]["ts_max"] == (START + timedelta(minutes=299)).isoformat()
    classes = {c["fingerprint"]: c for c in report["classes"]}
    assert set(classes) == {
        "update t set a=?",
        "select * from orders_0 where id=?",
        "select * from orders_1 where id=?",
    }
    update = classes["update t set a=?"]
    assert update["count"] == 100
    assert update["query_id"] == query_id("update t set a=?")
    assert update["query_time"]["sum"] == pytest.approx(20.0)
    assert update["query_time"]["p50"] == pytest.approx(0.2, rel=0.01)
    assert update["databases"] == {"shop": 50, "crm": 50}
    assert update["hosts"] == {"web0": 100}
    assert update["example"]["query"] == "UPDATE t SET a=0"  # the first of the slowest
    assert update["example"]["database"] == "shop"
    sums = [c["query_time"]["sum"] for c in report["classes"]]
    assert sums == sorted(sums, reverse=True)
    first_bad = malformed_lines(log)[0]
    assert f"skipped {log}:{first_bad}: entry has an invalid Query_time" in result.stderr


def test_text_report_has_the_profile_and_the_details(tmp_path: Path) -> None:
    log = write_log(tmp_path / "slow.log")
    result = invoke("digest", str(log), "--limit", "2", "--jobs", "1")
    assert result.exit_code == 0, result.output
    text = result.stdout
    update_id = query_id("update t set a=?")
    assert f"#    1 0x{update_id}    20.0000" in text
    assert "# MISC 0xMISC" in text
    assert "<1 ITEMS>" in text
    assert "# Query 1: ID 0x" + update_id in text
    assert "# Databases    shop (50/50%), crm (50/50%)" in text
    assert "# Query_time distribution" in text
    assert "# 100ms  " + "#" * 64 in text
    assert "UPDATE t SET a=0\\G" in text


def test_time_range_limit_and_grouping(tmp_path: Path) -> None:
    log = write_log(tmp_path / "slow.log")
    since = (START + timedelta(minutes=100)).isoformat()
    until = (START + timedelta(minutes=130)).isoformat()
    args = ["digest", str(log), "--format", "json", "--jobs", "1", "--since", since]
    args += ["--until", until, "--group", "orders_[0-9]+=orders_N"]
    report = json.loads(invoke(*args, "--limit", "0").stdout)
    assert report["global"]["events"] == 30
    assert report["global"]["filtered_out"] == 270
    assert [(c["fingerprint"], c["count"]) for c in report["classes"]] == [
        ("update t set a=?", 10),
        ("select * from orders_N where id=?", 20),
    ]
    report = json.loads(invoke(*args, "--limit", "1").stdout)
    assert [c["fingerprint"] for c in report["classes"]] == ["update t set a=?"]
    assert report["global"]["classes"] == 2


def test_configured_grouping_rules_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from quanta.core.config import get_settings

    log = write_log(tmp_path / "slow.log", entries=30)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QUANTA_GROUPING_RULES", '["orders_[0-9]+=orders_N"]')
    get_settings.cache_clear()
    try:
        args = ["digest", str(log), "--format", "json", "--limit", "0", "--jobs", "1"]
        report = json.loads(invoke(*args).stdout)
    finally:
        get_settings.cache_clear()
    assert {c["fingerprint"] for c in report["classes"]} == {
        "update t set a=?",
        "select * from orders_N where id=?",
    }


def test_digest_without_configuration_does_not_load_the_settings(tmp_path: Path) -> None:
    # Nothing configures Quanta (no QUANTA_* variable, no .env): the rules are the default
    # (none), and the settings machinery, most of the command's start-up, is not imported.
    import os
    import subprocess
    import sys

    log = write_log(tmp_path / "slow.log", entries=30)
    script = (
        "import sys\n"
        "from quanta.cli import app\n"
        f"sys.argv = ['quanta', 'digest', {str(log)!r}, '--format', 'json', '--jobs', '1']\n"
        "try:\n    app()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('pydantic_settings', 'quanta.core.config') if m in sys.modules))"
    )
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("QUANTA_")}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    report_line, loaded = done.stdout.strip().rsplit("\n", 1)
    assert loaded == "[]"
    fingerprints = {c["fingerprint"] for c in json.loads(report_line)["classes"]}
    assert "select * from orders_0 where id=?" in fingerprints


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "yesterday"], "is not a time"),
        (["--group", "orders_("], "PATTERN=REPLACEMENT"),
        (["--limit", "-1"], "greater than or equal to 0"),
    ],
)
def test_bad_options_say_what_is_wrong(tmp_path: Path, args: list[str], message: str) -> None:
    log = write_log(tmp_path / "slow.log", entries=3)
    result = invoke("digest", str(log), *args)
    assert result.exit_code == 2
    assert message in result.output


def test_parallel_parts_give_the_same_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = write_log(tmp_path / "slow.log", entries=900)
    first = write_log(tmp_path / "first.log", entries=10)
    one = digest_files([first, log], DigestOptions(jobs=1))
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(runner, "PART_BYTES", 4096)
    assert len(runner._split(log, 2)) > 20  # many parts, most starting without a 'use'
    seen: list[int] = []
    parallel = digest_files([first, log], DigestOptions(jobs=2), on_bytes=seen.append)
    assert sum(seen) == first.stat().st_size + log.stat().st_size
    assert rounded(to_json(parallel, 0)) == rounded(to_json(one, 0))
    assert parallel.skipped == one.skipped
    assert parallel.skipped == [
        (str(path), line, "entry has an invalid Query_time")
        for path in (first, log)
        for line in malformed_lines(path)
    ]


def rounded(data: Any) -> Any:
    """Floats to 9 significant digits: parts are summed in a different order."""
    if isinstance(data, float):
        return float(f"{data:.9g}")
    if isinstance(data, dict):
        return {key: rounded(value) for key, value in data.items()}
    if isinstance(data, list):
        return [rounded(value) for value in data]
    return data


def test_fingerprint_arguments_stdin_and_json() -> None:
    sql = "SELECT * FROM `Orders` WHERE id = 42"
    expected = fingerprint(sql)
    result = invoke("fingerprint", sql, "SELECT 1")
    assert result.stdout.splitlines() == [
        f"{query_id(expected)}\t{expected}",
        f"{query_id('select ?')}\tselect ?",
    ]
    result = invoke("fingerprint", "--json", stdin=f"{sql}\nselect 2\n")
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"query_id": query_id(expected), "fingerprint": expected},
        {"query_id": query_id("select ?"), "fingerprint": "select ?"},
    ]
    result = invoke("fingerprint", "--group", "orders_[0-9]+=orders_N", "select a from orders_5")
    assert result.stdout == f"{query_id('select a from orders_N')}\tselect a from orders_N\n"
