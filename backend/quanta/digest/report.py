"""The report of `quanta digest`: pt-query-digest's text layout, or JSON."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from quanta.analysis.digest import Digest, Metric, QueryClassDigest
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.ptstats import Buckets, micro_t, shorten
from quanta.digest.runner import DigestRun

__all__ = ["render_text", "to_json"]

PERCENTILES = (0.5, 0.95, 0.99)
_BAR_WIDTH = 64
_TOP_VALUES = 3
_ITEM_WIDTH = 40
# pt-query-digest's report width, and the attributes of its overall table in its order and
# with its labels (cut to 12 characters as it cuts them).
_LINE_LENGTH = 74
_OVERALL_ATTRIBUTES = (
    ("query_time", "Exec time"),
    ("lock_time", "Lock time"),
    ("rows_sent", "Rows sent"),
    ("rows_examined", "Rows examine"),
    ("rows_affected", "Rows affecte"),
)
_QUERY_SIZE = ("query_length", "Query size")
# pt-query-digest's order of the header attributes it knows (sort_attribs' num_order):
# these come between Rows affecte and Query size, any other after it, by name.
_PT_ATTRIBUTE_ORDER = (
    "Exec_orig_time",
    "Transmit_time",
    "Rows_read",
    "Bytes_sent",
    "Merge_passes",
    "Tmp_tables",
    "Tmp_disk_tables",
    "Tmp_table_sizes",
)
# Attributes pt-query-digest never shows in the header: those it reads as strings (it joins
# Log_slow_rate_type and Log_slow_rate_limit into one, "query:10"), and Killed, which it
# takes for a Yes/No one although it is logged as a number (Killed: 0): it never counts a Yes.
_PT_HIDDEN = frozenset(
    ("Status_code", "Statement_id", "Error_no", "Last_errno", "Log_slow_rate_limit", "Killed")
)
_PT_LABELS = {"Tmp_disk_tables": "Tmp disk tbl", "Tmp_table_sizes": "Tmp tbl size"}
_LABEL_WIDTH = 12
_TABLE_RE = re.compile(r"\b(?:from|join|into|update|table)\s+([\w$.]+)")


def to_json(run: DigestRun, limit: int) -> dict[str, Any]:
    """The digest as plain data: global totals and the ``limit`` worst classes (0: all)."""
    digest = run.digest
    ranked = digest.ranked()
    return {
        "global": {
            "events": digest.events,
            "skipped": len(run.skipped),
            "filtered_out": run.filtered_out,
            "classes": len(ranked),
            "query_time": {"sum": digest.query_time.sum},
            "ts_min": _iso(digest.ts_min),
            "ts_max": _iso(digest.ts_max),
        },
        "classes": [_class_json(c) for c in (ranked[:limit] if limit else ranked)],
    }


def _class_json(query_class: QueryClassDigest) -> dict[str, Any]:
    example = query_class.example
    return {
        "query_id": query_class.query_id,
        "fingerprint": query_class.fingerprint,
        "count": query_class.count,
        "query_time": _timed_json(query_class.query_time, query_class.query_time_histogram),
        "lock_time": _metric_json(query_class.lock_time),
        "rows_sent": _metric_json(query_class.rows_sent),
        "rows_examined": _metric_json(query_class.rows_examined),
        "rows_affected": _metric_json(query_class.rows_affected),
        "query_length": _metric_json(query_class.query_length),
        "attributes": {
            name: _metric_json(metric) for name, metric in sorted(query_class.attributes.items())
        },
        "databases": dict(query_class.databases.most_common()),
        "users": dict(query_class.users.most_common()),
        "hosts": dict(query_class.hosts.most_common()),
        "first_seen": _iso(query_class.first_seen),
        "last_seen": _iso(query_class.last_seen),
        "example": None
        if example is None
        else {
            "query": example.query,
            "query_time": example.query_time,
            "ts": _iso(example.ts),
            "database": example.database,
        },
    }


def _metric_json(metric: Metric) -> dict[str, float | int | None] | None:
    """Sum, extremes and mean; None when no event carried the metric."""
    if not metric.count:
        return None
    return {
        "sum": _number(metric.sum),
        "min": _number(metric.min),
        "max": _number(metric.max),
        "avg": metric.avg,
    }


def _timed_json(metric: Metric, histogram: LatencyHistogram) -> dict[str, Any] | None:
    data = _metric_json(metric)
    if data is None:
        return None
    p50, p95, p99 = histogram.quantiles(PERCENTILES)
    return {**data, "p50": p50, "p95": p95, "p99": p99}


def _number(value: float) -> float | int:
    value = float(value)
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _iso(ts: datetime | None) -> str | None:
    return None if ts is None else ts.isoformat()


def render_text(run: DigestRun, files: Sequence[str], limit: int) -> str:
    """pt-query-digest's report: overall stats, the profile, then each class in detail."""
    digest = run.digest
    ranked = digest.ranked()
    shown = ranked[:limit] if limit else ranked
    total_time = digest.query_time.sum
    lines = [f"# Files: {', '.join(files)}", _overall(digest, len(ranked), total_time)]
    if digest.ts_min is not None and digest.ts_max is not None:
        lines.append(f"# Time range: {_iso(digest.ts_min)} to {_iso(digest.ts_max)}")
    lines.append(
        f"# Skipped: {len(run.skipped)} malformed entries"
        + (f", {run.filtered_out} outside the time range" if run.filtered_out else "")
    )
    lines += _overall_attributes(digest)
    lines += ["", *_profile(shown, ranked, total_time)]
    for rank, query_class in enumerate(shown, 1):
        lines += ["", *_class_detail(rank, query_class, digest.events, total_time)]
    return "\n".join(lines) + "\n"


def _overall(digest: Digest, unique: int, total_time: float) -> str:
    """pt-query-digest's Overall line: events and classes in decimal units (4.80k is 4,800
    events), queries per second and concurrency over the logged time span."""
    events = digest.events
    qps = concurrency = 0.0
    if events and digest.ts_min is not None and digest.ts_max is not None:
        span = (digest.ts_max - digest.ts_min).total_seconds()
        if span > 0:
            qps, concurrency = events / span, total_time / span
    line = (
        f"# Overall: {shorten(events, divisor=1000)} total, {shorten(unique, divisor=1000)} "
        f"unique, {shorten(qps, divisor=1000)} QPS, {shorten(concurrency, divisor=1000)}x "
        "concurrency "
    )
    return line + "_" * (_LINE_LENGTH - len(line))


def _overall_attributes(digest: Digest) -> list[str]:
    """pt-query-digest's overall attribute table: total, min, max, avg, 95%, stddev, median
    of each numeric attribute (the InnoDB ones in a section of their own), then the share of
    Yes of each Yes/No attribute some event had ("Boolean")."""
    lines = [
        _attribute_line("Attribute", "total", "min", "max", "avg", "95%", "stddev", "median"),
        _attribute_line("=" * 12, *["=" * 7] * 7),
    ]
    numeric, flags = digest.attribute_names()
    numeric -= _PT_HIDDEN
    known = [name for name in _PT_ATTRIBUTE_ORDER if name in numeric]
    others = sorted(n for n in numeric if n not in known and not n.startswith("InnoDB_"))
    innodb = sorted((n for n in numeric if n.startswith("InnoDB_")), key=str.upper)
    for name, label in _OVERALL_ATTRIBUTES:
        lines += _stats_line(label, name.endswith("_time"), *digest.overall(name))
    for name in known:
        lines += _stats_line(_label(name), _is_time(name), *digest.overall_attribute(name))
    lines += _stats_line(_QUERY_SIZE[1], False, *digest.overall(_QUERY_SIZE[0]))
    for name in others:
        lines += _stats_line(_label(name), _is_time(name), *digest.overall_attribute(name))
    if innodb:
        lines.append("# InnoDB:")
        for name in innodb:
            lines += _stats_line(_label(name), _is_time(name), *digest.overall_attribute(name))
    shares = [
        _flag_line(_label(name), metric)
        for name in sorted(flags, key=str.upper)
        if (metric := digest.overall_attribute(name)[0]).sum > 0
    ]
    return lines + (["# Boolean:", *shares] if shares else [])


def _stats_line(label: str, timed: bool, metric: Metric, buckets: Buckets) -> list[str]:
    """One row of the overall table, none when no event had the attribute."""
    if not metric.count:
        return []
    p95, stddev, median = buckets.stats(count=metric.count, minimum=metric.min, maximum=metric.max)
    values = (metric.sum, metric.min, metric.max, metric.sum / metric.count, p95, stddev, median)
    fmt = micro_t if timed else shorten
    return [_attribute_line(label, *(fmt(v) for v in values))]


def _flag_line(label: str, metric: Metric) -> str:
    """pt-query-digest's Boolean row: '# Filesort      31% yes,  68% no' (truncated %)."""
    yes = int(metric.sum * 100 / metric.count)
    no = int((metric.count - metric.sum) * 100 / metric.count)
    return f"# {label:<{_LABEL_WIDTH}} {yes:3d}% yes, {no:3d}% no"


def _label(name: str) -> str:
    """pt-query-digest's label of an attribute: underscores as spaces, InnoDB_ dropped,
    12 characters."""
    if name in _PT_LABELS:
        return _PT_LABELS[name]
    text = name.replace("_", " ")
    text = text.removeprefix("InnoDB ")
    return text[:_LABEL_WIDTH]


def _is_time(name: str) -> bool:
    # pt-query-digest prints an attribute as a time when 'time' is in its name or it ends
    # in 'wait' (m/time|wait$/).
    return "time" in name or name.endswith("wait")


def _attribute_line(label: str, *values: str) -> str:
    # pt-query-digest's num_format, with its empty pct column: '# %-12s %3s %7s ...'.
    return f"# {label:<12} {'':3} " + " ".join(f"{v:>7}" for v in values).rstrip()


def _profile(
    shown: Sequence[QueryClassDigest], ranked: Sequence[QueryClassDigest], total: float
) -> list[str]:
    lines = [
        "# Profile",
        "# Rank Query ID           Response time    Calls  R/Call   V/M Item",
        "# ==== ================== ================ ====== ======= ===== " + "=" * 16,
    ]
    for rank, query_class in enumerate(shown, 1):
        lines.append(_profile_row(f"{rank:4d}", f"0x{query_class.query_id}", query_class, total))
    rest = ranked[len(shown) :]
    if rest:
        time_sum = sum(c.query_time.sum for c in rest)
        calls = sum(c.count for c in rest)
        share = _share(time_sum, total)
        lines.append(
            f"# MISC 0xMISC             {time_sum:10.4f} {share:5.1f}% {calls:6d} "
            f"{time_sum / calls:7.4f}   0.0 <{len(rest)} ITEMS>"
        )
    return lines


def _profile_row(rank: str, query_id: str, query_class: QueryClassDigest, total: float) -> str:
    metric = query_class.query_time
    share = _share(metric.sum, total)
    return (
        f"# {rank} {query_id} {metric.sum:10.4f} {share:5.1f}% {query_class.count:6d} "
        f"{metric.avg or 0:7.4f} {_variance_to_mean(metric):5.2f} {_item(query_class)}"
    )


def _class_detail(
    rank: int, query_class: QueryClassDigest, events: int, total_time: float
) -> list[str]:
    qt = query_class.query_time
    lines = [
        f"# Query {rank}: ID 0x{query_class.query_id}, {query_class.count} calls, "
        f"{_share(qt.sum, total_time):.1f}% of response time",
        f"# Scores: V/M = {_variance_to_mean(qt):.2f}",
    ]
    if query_class.first_seen is not None and query_class.last_seen is not None:
        lines.append(
            f"# Time range: {_iso(query_class.first_seen)} to {_iso(query_class.last_seen)}"
        )
    lines += [
        "# Attribute    pct   total     min     max     avg     p50     p95     p99",
        "# ============ === ======= ======= ======= ======= ======= ======= =======",
        f"# Count        {_share(query_class.count, events):3.0f} {query_class.count:7d}",
        _time_row("Exec time", qt, query_class.query_time_histogram, total_time),
        _time_row("Lock time", query_class.lock_time, None, None),
    ]
    for label, metric in (
        ("Rows sent", query_class.rows_sent),
        ("Rows examine", query_class.rows_examined),
        ("Rows affecte", query_class.rows_affected),
        ("Query size", query_class.query_length),
        *((name[:12], m) for name, m in sorted(query_class.attributes.items())),
    ):
        if metric.count:
            lines.append(_amount_row(label, metric))
    lines += [
        "# String:",
        _top_values("Databases", query_class.databases),
        _top_values("Hosts", query_class.hosts),
        _top_values("Users", query_class.users),
        "# Query_time distribution",
        *_distribution(query_class.query_time_histogram),
    ]
    example = query_class.example
    if example is not None:
        lines.append(f"# Example: {example.query_time:.6f}s at {_iso(example.ts)}")
        if example.database:
            lines.append(f"USE `{example.database}`\\G")
        lines.append(f"{example.query}\\G")
    return lines


def _time_row(
    label: str, metric: Metric, histogram: LatencyHistogram | None, total: float | None
) -> str:
    p50, p95, p99 = histogram.quantiles(PERCENTILES) if histogram else (None, None, None)
    pct = f"{_share(metric.sum, total):3.0f}" if total else "   "
    values = (metric.sum, metric.min, metric.max, metric.avg, p50, p95, p99)
    return f"# {label:<12} {pct} " + " ".join(f"{_duration(v):>7}" for v in values)


def _amount_row(label: str, metric: Metric) -> str:
    values = (metric.sum, metric.min, metric.max, metric.avg)
    return f"# {label:<12}     " + " ".join(f"{_amount(v):>7}" for v in values)


def _top_values(label: str, counts: Counter[str]) -> str:
    total = sum(counts.values())
    top = counts.most_common(_TOP_VALUES)
    text = ", ".join(
        f"{name or '(none)'} ({count}/{_share(count, total):.0f}%)" for name, count in top
    )
    more = len(counts) - len(top)
    return f"# {label:<12} {text}" + (f"... {more} more" if more > 0 else "")


def _distribution(histogram: LatencyHistogram) -> list[str]:
    decades = histogram.decades()
    most = max((count for _, count in decades), default=0)
    return [
        f"# {label:>5}  " + "#" * (round(_BAR_WIDTH * count / most) if most else 0)
        for label, count in decades
    ]


def _variance_to_mean(metric: Metric) -> float:
    """Variance-to-mean ratio of response time: how dispersed a query's latency is."""
    avg, stddev = metric.avg, metric.stddev
    if not avg or stddev is None:
        return 0.0
    return stddev * stddev / avg


def _item(query_class: QueryClassDigest) -> str:
    """Statement type and tables, as pt-query-digest's Item column: 'SELECT orders users'."""
    fingerprint = query_class.fingerprint
    verb = fingerprint.split(" ", 1)[0].upper()
    tables = dict.fromkeys(_TABLE_RE.findall(fingerprint))
    return f"{verb} {' '.join(tables)}".strip()[:_ITEM_WIDTH]


def _share(part: float, total: float | None) -> float:
    return 100.0 * part / total if total else 0.0


def _duration(seconds: float | None) -> str:
    """Seconds the way pt-query-digest prints them: 184s, 85ms, 287us, 2ks."""
    if seconds is None:
        return "-"
    if seconds == 0:
        return "0"
    for limit, unit, scale in ((1e-3, "us", 1e6), (1.0, "ms", 1e3), (1e3, "s", 1.0)):
        if seconds < limit:
            return f"{seconds * scale:.0f}{unit}"
    return f"{seconds / 1e3:.0f}ks"


def _amount(value: float | None) -> str:
    """A count the way pt-query-digest prints it: 49.96, 903.64k, 88.40M (k = 1024)."""
    if value is None:
        return "-"
    for scale, unit in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.2f}{unit}"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"
