"""`quanta digest`'s header against pt-query-digest's on the same log: the Overall line
(decimal units, QPS, concurrency) and the overall attribute table, character for character;
on a Percona Server log also Bytes sent, the Tmp tables rows, the InnoDB and Boolean
sections."""

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


def write_log(path: Path, events: int, seed: int, *, percona: bool = False) -> Path:
    """A MySQL 5.7 slow log: ``events`` over an hour, varied times, rows and sizes; with
    ``percona``, Percona Server's extended verbosity (bytes, temporary tables, InnoDB I/O,
    Yes/No flags)."""
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
            *(percona_lines(rng) if percona else []),
            f"SET timestamp={int(at.timestamp())};\n",
            f"SELECT * FROM {TABLES[n % len(TABLES)]} WHERE id = {n} AND note = 'x{n}';\n",
        ]
    path.write_text("".join(lines))
    return path


def percona_lines(rng: random.Random) -> list[str]:
    """One entry's extended header lines, as Percona Server's log_slow_verbosity=full."""

    def flag(share: float) -> str:
        return "Yes" if rng.random() < share else "No"

    return [
        f"# Bytes_sent: {rng.randint(50, 90_000)}  Tmp_tables: {rng.choice([0, 0, 1, 2])}  "
        f"Tmp_disk_tables: {rng.choice([0, 0, 0, 1])}  Tmp_table_sizes: "
        f"{rng.choice([0, 0, 16384])}\n",
        f"# QC_Hit: No  Full_scan: {flag(0.3)}  Full_join: {flag(0.1)}  Tmp_table: "
        f"{flag(0.5)}  Tmp_table_on_disk: {flag(0.2)}\n",
        f"# Filesort: {flag(0.3)}  Filesort_on_disk: No  Merge_passes: {rng.choice([0, 0, 1])}\n",
        f"#   InnoDB_IO_r_ops: {rng.randint(0, 50)}  InnoDB_IO_r_bytes: {rng.randint(0, 800_000)}"
        f"  InnoDB_IO_r_wait: {rng.random() / 100:.6f}\n",
        f"#   InnoDB_rec_lock_wait: 0.000000  InnoDB_queue_wait: {rng.random() / 1e3:.6f}\n",
        f"#   InnoDB_pages_distinct: {rng.randint(1, 300)}\n",
    ]


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


def whole_header(text: str) -> list[str]:
    """Every line from the Overall line to the blank line before the profile."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# Overall:"))
    end = lines.index("", start)
    return [line for line in lines[start:end] if not line.startswith("# Time range:")]


def test_a_percona_logs_header_has_pt_query_digests_sections(tmp_path: Path) -> None:
    log = write_log(tmp_path / "slow.log", 900, 3, percona=True)
    ours = subprocess.run(
        [QUANTA, "digest", str(log), "--limit", "1"], capture_output=True, text=True, check=True
    ).stdout
    theirs = subprocess.run(
        ["pt-query-digest", "--limit", "1", str(log)], capture_output=True, text=True, check=True
    ).stdout
    # Quanta's own line (what it skipped) is not pt-query-digest's.
    mine = [line for line in whole_header(ours) if not line.startswith("# Skipped:")]
    assert mine == whole_header(theirs)
    labels = [line[2:14].strip() for line in mine]
    for label in ("Bytes sent", "Tmp tables", "Tmp disk tbl", "Tmp tbl size", "InnoDB:",
                  "IO r bytes", "Boolean:", "Filesort", "Full scan", "Tmp table on"):  # fmt: skip
        assert label in labels, label
