"""What credential redaction costs the agent per event, on the benchmark corpus.

Parses a realistic slow log (bench/_slowlog_corpus.py: 235 statement shapes, the usual
spellings, comments and hints) and times the agent's per-event step under the ``full``
policy (``quanta_agent.events.wire_event``) with and without
``quanta.analysis.redact.redact``, taking turns, best of ``--runs``. Also reports how many
statements pass the cheap pre-check (hold a word of some credential form) and so are
tokenized, and the cost of a cached fingerprint for scale.

Usage: .venv/bin/python bench/redaction_cost.py [--events N] [--runs R]
Last line: ``RESULT redact_ns_per_event=X wire_event_ns=Y tokenized_share=Z``.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import quanta_agent.events as batcher
from bench._slowlog_corpus import iter_slow_log
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.redact import might_hold_secret, redact
from quanta.analysis.slowlog import SlowLogEvent, parse_slow_log
from quanta_agent.policy import ExamplePolicy

EVENTS = 50_000
RUNS = 5
SEED = 42


def _time_wire(events: list[SlowLogEvent], now: datetime) -> float:
    start = time.perf_counter()
    for event in events:
        batcher.wire_event(
            event, policy=ExamplePolicy.FULL, max_length=10_000, truncated=False, fallback_ts=now
        )
    return (time.perf_counter() - start) / len(events) * 1e9


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=EVENTS)
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args(argv)
    text = "".join(iter_slow_log(args.events, SEED)).encode()
    events = list(parse_slow_log(io.BytesIO(text)))
    now = datetime.now(UTC)
    with_redact, without = [], []
    for _ in range(args.runs):
        batcher.redact = redact
        with_redact.append(_time_wire(events, now))
        batcher.redact = lambda sql: sql  # type: ignore[assignment]
        without.append(_time_wire(events, now))
    batcher.redact = redact
    on, off = min(with_redact), min(without)
    tokenized = sum(might_hold_secret(e.query) for e in events) / len(events)
    fingerprinter = Fingerprinter()
    for event in events:
        fingerprinter(event.query)
    start = time.perf_counter()
    for event in events:
        fingerprinter(event.query)
    cached = (time.perf_counter() - start) / len(events) * 1e9
    mean_chars = sum(len(e.query) for e in events) / len(events)
    print(f"corpus: {len(events):,} events, {mean_chars:.0f} characters a statement on average")
    print(f"wire_event: {off:.0f} ns without redaction, {on:.0f} ns with (+{on - off:.0f} ns)")
    print(f"statements tokenized (hold a credential word): {tokenized:.2%}")
    print(f"for scale, a cached fingerprint: {cached:.0f} ns")
    print(
        f"RESULT redact_ns_per_event={on - off:.0f} wire_event_ns={off:.0f} "
        f"tokenized_share={tokenized:.4f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
