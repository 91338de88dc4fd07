"""QUANTA_NATIVE=0 turns every C extension off, and the Python fallbacks give the same results.

A child process is started with the switch (the extensions are bound when the modules are
first imported, so it cannot be flipped inside this one); it reports what native.py says is
loaded and what the three accelerated paths give on a small corpus: every slow-log fixture
read in blocks, every fingerprint case through the Fingerprinter and literal_mask, and
histograms encoded, decoded and merged. This process computes the same with whatever it has
loaded (the extensions, in the default pass) and the two must be equal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from quanta.analysis import native
from tests.fixtures.servers import native_unavailable

DATA = Path(__file__).parent / "data"
CORPUS_SCRIPT = """
import io, json, random, sys
from pathlib import Path
from quanta.analysis import native
from quanta.analysis.fingerprinter import Fingerprinter, literal_mask
from quanta.analysis.histogram import LatencyHistogram, encode_values, merge_stored
from quanta.analysis.slowlog import ParseStats, read_slow_log

data = Path(sys.argv[1])
logs = {}
for path in sorted((data / "slowlogs").glob("*.log")):
    stats = ParseStats()
    # A small block size: entries straddle blocks, so the C reader's hand-over is exercised.
    events = list(read_slow_log(io.BytesIO(path.read_bytes()), stats, block_size=4096))
    logs[path.name] = [repr(event) for event in events] + [repr((stats.events, stats.skipped))]
statements = [
    block.split("=>")[0].strip()
    for block in (data / "fingerprints.txt").read_text(encoding="utf-8").split("\\n\\n")
    if "=>" in block and not block.startswith("##")
]
fingerprinter = Fingerprinter()
fingerprints = [[literal_mask(sql), *map(str, fingerprinter(sql))] for sql in statements]
draw = random.Random(30)
histograms = []
for size in (0, 1, 7, 100, 2000):
    values = [draw.lognormvariate(-4, 2) for _ in range(size)] + [0.0] * (size % 3)
    histogram = LatencyHistogram()
    histogram.add_many(values)
    encoded = histogram.to_bytes()
    merged = LatencyHistogram.from_bytes(encoded)
    merged.merge_bytes(encoded)
    twice = merge_stored(encoded, encode_values(values))
    histograms.append([encoded.hex(), merged.to_bytes().hex(), twice.hex()])
print(json.dumps({
    "enabled": native.enabled(),
    "loaded": native.loaded(),
    "summary": native.summary(),
    "results": {"logs": logs, "fingerprints": fingerprints, "histograms": histograms},
}))
"""


def corpus_results(native_switch: str | None) -> dict[str, Any]:
    """The corpus script's report from a child process with QUANTA_NATIVE set (or unset)."""
    env = {k: v for k, v in os.environ.items() if k != native.ENV_SWITCH}
    if native_switch is not None:
        env[native.ENV_SWITCH] = native_switch
    result = subprocess.run(
        [sys.executable, "-c", CORPUS_SCRIPT, str(DATA)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_switch_off_loads_nothing_and_the_fallbacks_agree_with_native_code() -> None:
    off = corpus_results("0")
    assert off["enabled"] is False
    assert off["loaded"] == {"_histogram": False, "_literal_mask": False, "_slowlog": False}
    assert off["summary"] == "native code: off (QUANTA_NATIVE=0), pure Python"
    on = corpus_results(None)
    assert on["enabled"] is True
    if not all(on["loaded"].values()):
        native_unavailable("every extension", "the C code this test compares with")
    # The corpus is not trivial: every accelerated path had work to do.
    logs, fingerprints = on["results"]["logs"], on["results"]["fingerprints"]
    assert len(logs) >= 15
    assert sum(len(events) for events in logs.values()) > 100
    assert len(fingerprints) > 300
    assert off["results"] == on["results"]


def test_summary_names_every_loaded_extension() -> None:
    loaded = native.loaded()
    assert sorted(loaded) == sorted(native.EXTENSIONS)
    summary = native.summary()
    if not native.enabled():
        assert not any(loaded.values())
    elif all(loaded.values()):
        assert summary == "native code: _histogram, _literal_mask, _slowlog"
    else:
        assert "not built: " in summary
    for name, is_on in loaded.items():
        assert (name in summary) == (is_on or native.enabled())


def test_doctests() -> None:
    import doctest

    assert doctest.testmod(native).failed == 0
