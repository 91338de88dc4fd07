"""pt-query-digest's statistics and number formats, for reports that must read the same.

pt-query-digest keeps each attribute's values in 1,000 logarithmic buckets (5 % wide, from
1 microsecond) and derives the 95th percentile, standard deviation and median from them;
it prints counts with decimal (``d=1000``) or binary (``d=1024``) unit steps and times in
us/ms/s. These functions do the same, so `quanta digest`'s header can be compared with its.

Example:
    >>> buckets = Buckets()
    >>> buckets.add_many([0.001, 0.002, 0.003])
    >>> [round(v, 6) for v in buckets.stats(count=3, minimum=0.001, maximum=0.003)]
    [0.002986, 0.000822, 0.001925]
    >>> shorten(4800, divisor=1000), shorten(561_983, divisor=1000), shorten(61_480)
    ('4.80k', '561.98k', '60.04k')
    >>> micro_t(0.000012), micro_t(0.7261), micro_t(12.4)
    ('12us', '726ms', '12s')
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from quanta.analysis import native

__all__ = ["Buckets", "micro_t", "shorten"]

BUCKET_SIZE = 1.05
NUM_BUCKETS = 1000
MIN_BUCKET = 0.000001
_BASE_LOG = math.log(BUCKET_SIZE)
_BASE_OFFSET = abs(1 - math.log(MIN_BUCKET) / _BASE_LOG)
_BUCKET_VALUES = [0.0] + [BUCKET_SIZE ** (i - 1) * MIN_BUCKET for i in range(1, NUM_BUCKETS)]
_UNITS = ("", "k", "M", "G", "T", "P", "E", "Z", "Y")

_CCounter = Callable[[dict[int, int], Sequence[float] | Sequence[int]], bool]
# The C counter (quanta.analysis.native): bucket_index per value in C, several times faster;
# it declines any value but a finite number. bucket_index stays the reference.
_pt_bucket_counts_c: _CCounter | None = (
    None if native.histogram is None else native.histogram.pt_bucket_counts
)


def bucket_index(value: float) -> int:
    """pt-query-digest's bucket of ``value`` (0 holds everything under 1 microsecond)."""
    if value < MIN_BUCKET:
        return 0
    return min(NUM_BUCKETS - 1, int(_BASE_OFFSET + math.log(value) / _BASE_LOG))


@dataclass(slots=True)
class Buckets:
    """How many values fell in each of pt-query-digest's buckets (sparse)."""

    counts: Counter[int] = field(default_factory=Counter)

    def add_many(self, values: Sequence[float] | Sequence[int]) -> None:
        """Count values."""
        if _pt_bucket_counts_c is None or not _pt_bucket_counts_c(self.counts, values):
            self._add_many_python(values)

    def _add_many_python(self, values: Sequence[float] | Sequence[int]) -> None:
        """:meth:`add_many` by :func:`bucket_index`: the reference, and any value; equal
        values (most row counts, sizes) are bucketed once."""
        for value, count in Counter(values).items():
            self.counts[bucket_index(value)] += count

    def merge(self, other: Buckets) -> None:
        """Fold in another attribute's buckets."""
        self.counts.update(other.counts)

    def stats(self, *, count: int, minimum: float, maximum: float) -> tuple[float, float, float]:
        """(95th percentile, standard deviation, median) as pt-query-digest computes them."""
        if count == 1 or maximum == minimum:
            return maximum, 0.0, maximum
        if count == 2:
            mean = (minimum + maximum) / 2
            return maximum, math.sqrt((maximum - mean) ** 2 * 2), mean
        cutoff = int(count * 0.95) if count >= 10 else count
        return _bucket_stats(self.counts, count, cutoff, minimum, maximum)


def _bucket_stats(
    counts: Counter[int], n: int, cutoff: int, minimum: float, maximum: float
) -> tuple[float, float, float]:
    # A line-by-line reading of EventAggregator::_calc_metrics: walk the buckets from the
    # top, the 95th is the first bucket past the values above the cutoff.
    left, top, above = n, n - cutoff, 0
    mid = n // 2
    median = 0.0
    previous = NUM_BUCKETS - 1
    bucket_95 = 0
    total = squares = 0.0
    for bucket in sorted(counts, reverse=True):
        count = counts[bucket]
        if not count:
            continue
        left -= count
        above += count
        if not bucket_95 and above > top:
            bucket_95 = bucket
        if not median and left <= mid:
            value = _BUCKET_VALUES[bucket]
            median = value if cutoff % 2 or count > 1 else (value + _BUCKET_VALUES[previous]) / 2
        total += count * _BUCKET_VALUES[bucket]
        squares += count * _BUCKET_VALUES[bucket] ** 2
        previous = bucket
    variance = squares / n - (total / n) ** 2
    stddev = min(math.sqrt(variance) if variance > 0 else 0.0, (maximum - minimum) / 2)
    return _BUCKET_VALUES[bucket_95], stddev, median


def shorten(number: float, *, divisor: int = 1024, precision: int = 2) -> str:
    """A number as pt-query-digest's ``shorten``: 502, 62.75, 60.04k (binary steps by
    default; its Overall line counts events with ``divisor=1000``)."""
    step = 0
    while number >= divisor and step < len(_UNITS) - 1:
        number /= divisor
        step += 1
    if step or not float(number).is_integer():
        return f"{number:.{precision}f}{_UNITS[step]}"
    return f"{int(number)}"


def micro_t(seconds: float) -> str:
    """A time as pt-query-digest's ``micro_t``: 12us, 726ms, 12s, 0."""
    # Perl truncates to microseconds first (a regex on the decimal text), then rounds.
    seconds = math.floor(max(seconds, 0.0) * 1e6 + 1e-9) / 1e6
    if 0 < seconds <= 0.000999:
        return f"{_plain(seconds * 1e6)}us"
    if 0.001 <= seconds <= 0.999999:
        return f"{seconds * 1000:.0f}ms"  # C's printf rounding, as Perl's sprintf
    if seconds >= 1:
        return f"{seconds:.0f}s"
    return "0"


def _plain(value: float) -> str:
    """A number as Perl prints ``$x * 1``: no trailing zeros."""
    return f"{value:.15g}"
