"""`quanta digest`'s header against pt-query-digest's on the same log: the Overall line
(decimal units, QPS, concurrency) and the overall attribute table, character for character."""

import random
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

QUANTA = str(Path(sys.executable).parent / "quanta")
TABLES = ("orders", "customers", "items", "payments", "shipments", "carts")

pytestmark = pytest.mark.skipif(
    shutil.which("pt-query-digest") is None, reason="percona-toolkit is not installed"
)


def write_log(path: Path, events: int, seed: int) -> Path:
    """A MySQL 5.7 slow log: ``events`` over an hour, varied times, rows and sizes."""
    rng = random.Random(seed)
    start = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
    step = 3600 / events
    lines = []
    for n in range(events):
        at = start + timedelta(seconds=n * step + rng.random() * step / 2)
        examined = rng.choice([1, 10, 100, 20_000])
        lines += [
            f"# Time: {at.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}\n",
            f"# User@Host: app[app] @ web{n % 3} [10.0.0.{n % 3}]  Id: {n % 7}\n",
            f"# Query_time: {rng.lognormvariate(-6, 1.5):.6f}  Lock_time: "
            f"{rng.random() / 1e4:.6f} Rows_sent: {rng.randint(0, 50)}  Rows_examined: "
            f"{examined}  Rows_affected: {rng.randint(0, 3)}\n",
            f"SET timestamp={int(at.timestamp())};\n",
            f"SELECT * FROM {TABLES[n % len(TABLES)]} WHERE id = {n} AND note = 'x{n}';\n",
        ]
    path.write_text("".join(lines))
    return path


def header(text: str) -> dict[str, str]:
    """The Overall line and the attribute rows by label."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("# Overall:"):
            rows["Overall"] = line
        elif line.startswith("# ") and len(line) > 16 and line[2:14].strip():
            rows[line[2:14].strip()] = line
        if line.startswith("# Profile"):
            break
    return rows


@pytest.mark.parametrize(("events", "seed"), [(4800, 1), (977, 2)])
def test_header_reads_as_pt_query_digests(tmp_path: Path, events: int, seed: int) -> None:
    log = write_log(tmp_path / "slow.log", events, seed)
    ours = subprocess.run(
        [QUANTA, "digest", str(log), "--limit", "1"], capture_output=True, text=True, check=True
    ).stdout
    theirs = subprocess.run(
        ["pt-query-digest", "--limit", "1", str(log)], capture_output=True, text=True, check=True
    ).stdout
    mine, pt = header(ours), header(theirs)
    compared = ["Overall", "Attribute", "============", "Exec time", "Lock time", "Rows sent",
                "Rows examine", "Rows affecte", "Query size"]  # fmt: skip
    assert {k: mine.get(k) for k in compared} == {k: pt.get(k) for k in compared}
    if events == 4800:  # the count: decimal thousands, as pt-query-digest prints it
        assert mine["Overall"].startswith("# Overall: 4.80k total, 6 unique, 1.33 QPS, ")
