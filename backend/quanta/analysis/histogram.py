"""Mergeable latency histogram: p50/p95/p99 over any set of stored buckets, within 1%.

A DDSketch-style histogram of non-negative durations in seconds. Values fall into
logarithmically spaced buckets, and a bucket answers with one representative value that is
within ``RELATIVE_ACCURACY`` (just under 1%) of every value in it, so any quantile is within
that relative error of the exact one. Two histograms merge by adding bucket counts, which is
exact: merging the minute buckets of a day gives the same histogram as adding the day's
events to one, in any order and any grouping.

Layout:

* ``BUCKETS_PER_DECADE`` (116) buckets per power of ten; bucket ``i`` holds
  ``[10**(i/116), 10**((i+1)/116))``. The growth factor ``gamma = 10**(1/116)`` is the
  smallest whose decades divide evenly with a relative error of at most 1%
  (``(gamma - 1) / (gamma + 1)`` = 0.99%). Because bucket edges fall on powers of ten,
  :meth:`LatencyHistogram.decades` counts exactly and ``1.0`` s is in the ``1s`` decade.
  (The bucket key uses ``floor`` where DDSketch uses ``ceil``, for the same reason.)
* Values up to ``ZERO_THRESHOLD`` (1 ns) go to one zero bucket reported as ``0.0``: slow
  logs have microsecond resolution and ``Query_time: 0.000000`` is common.
* The exact minimum and maximum are kept; answers are clamped into ``[min, max]``, and the
  first and last ranks answer the exact minimum and maximum.
* Buckets are a sparse ``dict`` of index -> count; a query's histogram uses a few dozen to
  a few hundred of them.

Quantile definition: ``quantile(q)`` estimates the value at 0-based rank
``floor(q * (count - 1))`` of the sorted values (no interpolation between ranks).

Serialisation (:meth:`LatencyHistogram.to_bytes`, format version 1), all integers unsigned
LEB128 varints in their shortest form:

* 1 byte: format version (1); it fixes the bucket layout above, so a change of
  ``BUCKETS_PER_DECADE`` or ``ZERO_THRESHOLD`` needs a new version;
* varint: number of non-empty buckets ``n``; varint: count of the zero bucket;
* unless the histogram is empty: minimum and maximum as little-endian float64;
* ``n`` pairs in increasing bucket order: the bucket index (zigzag-encoded for the first,
  the gap from the previous index, at least 1, after that) and its count (at least 1).

Equal histograms give equal bytes. An empty one is 3 bytes; otherwise about 20 bytes plus 2
per bucket (gaps and counts under 128 take one byte each): 60 bytes for 20 similar events,
200 for 200 events spread over 90 buckets, 450-700 for thousands spread over two decades.

Example:
    >>> h = LatencyHistogram()
    >>> for ms in range(1, 101):
    ...     h.add(ms / 1000)
    >>> h.count, h.quantile(0.0), h.quantile(1.0)
    (100, 0.001, 0.1)
    >>> round(h.quantile(0.5), 3)  # the median, 50 ms, within 1%
    0.05
    >>> LatencyHistogram.from_bytes(h.to_bytes()) == h
    True
"""

from __future__ import annotations

import math
import struct
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import pairwise
from math import floor, log10

from quanta.analysis import native

_CDecoder = Callable[[dict[int, int], bytes], tuple[int, int, float | None, float | None]]
_CEncoder = Callable[[dict[int, int], int, int, float, float], bytes]
_CAdder = Callable[[dict[int, int], Sequence[float]], tuple[int, int, float | None, float | None]]
# The C decoder, encoder and adder (quanta.analysis.native): 5x, 5x and 10x faster on the
# small histograms of buckets. The Python code below stays the reference and the fallback;
# tests compare the two.
_merge_encoded_c: _CDecoder | None = None
_encode_c: _CEncoder | None = None
_add_values_c: _CAdder | None = None
if native.histogram is not None:
    _merge_encoded_c = native.histogram.merge_encoded
    _encode_c = native.histogram.encode
    _add_values_c = native.histogram.add_values

__all__ = [
    "BUCKETS_PER_DECADE",
    "FORMAT_VERSION",
    "ZERO_THRESHOLD",
    "LatencyHistogram",
    "encode_values",
    "merge_stored",
]

BUCKETS_PER_DECADE = 116
"""Buckets per power of ten: the fewest that keep the relative error at or under 1%."""

ZERO_THRESHOLD = 1e-9
"""Values (seconds) at or below this go to the zero bucket and are reported as ``0.0``."""

FORMAT_VERSION = 1
"""First byte of :meth:`LatencyHistogram.to_bytes`; identifies the bucket layout too."""

_GAMMA = 10.0 ** (1 / BUCKETS_PER_DECADE)
_RELATIVE_ACCURACY = (_GAMMA - 1) / (_GAMMA + 1)
# Bucket i is [gamma**i, gamma**(i+1)); this point is within _RELATIVE_ACCURACY of both ends.
_REPRESENTATIVE_FACTOR = 2 * _GAMMA / (_GAMMA + 1)

_MIN_MAX = struct.Struct("<dd")
_MAX_VARINT = 2**64 - 1
_MAX_VARINT_BYTES = 10
_VARINT_PAYLOAD = 0x7F
_VARINT_MORE = 0x80
_VARINT_SHIFT = 7
# Every bucket takes at least two bytes (index, count): a bound on n before allocating.
_MIN_BUCKET_BYTES = 2

# pt-query-digest's "Query_time distribution" rows: one per decade from 1us, the last
# open-ended. Values below 1us are counted in the first row.
_DECADE_LABELS = ("1us", "10us", "100us", "1ms", "10ms", "100ms", "1s", "10s+")
_FIRST_DECADE = -6  # log10 of 1us


def _bucket_key(seconds: float) -> int:
    return floor(log10(seconds) * BUCKETS_PER_DECADE)


_MIN_KEY = _bucket_key(math.nextafter(ZERO_THRESHOLD, math.inf))
_MAX_KEY = _bucket_key(sys.float_info.max)
# A stored minimum or maximum may sit one bucket off the stored index if the writer's libm
# rounded log10 differently at a bucket edge.
_KEY_TOLERANCE = 1


def _representative(key: int) -> float:
    return float(10.0 ** (key / BUCKETS_PER_DECADE) * _REPRESENTATIVE_FACTOR)


class LatencyHistogram:
    """Mergeable histogram of non-negative durations in seconds (DDSketch-style log buckets).

    Quantiles are within ``RELATIVE_ACCURACY`` of the exact value at rank
    ``floor(q * (count - 1))`` for values above ``ZERO_THRESHOLD``; values at or below it
    are reported as ``0.0`` (or the exact minimum, if that is larger).

    Example:
        >>> h = LatencyHistogram()
        >>> h.add(0.002, count=3)
        >>> h.add(1.5)
        >>> h.count, h.quantile(0.0), h.quantile(1.0)
        (4, 0.002, 1.5)
        >>> round(h.quantile(0.5), 3)  # 0.002 within RELATIVE_ACCURACY
        0.002
    """

    RELATIVE_ACCURACY: float = _RELATIVE_ACCURACY
    """Bound on the relative error of a quantile: 0.0099 (just under 1%)."""

    __slots__ = ("_bins", "_count", "_max", "_min", "_zero_count")

    def __init__(self) -> None:
        """Create an empty histogram."""
        self._bins: dict[int, int] = {}
        self._zero_count = 0
        self._count = 0
        self._min = math.inf
        self._max = -math.inf

    def add(self, seconds: float, count: int = 1) -> None:
        """Record ``count`` occurrences of a duration.

        This is the per-event hot path, so it does not validate: callers pass a finite
        ``seconds >= 0`` and ``count >= 1``. (A negative or NaN value would corrupt the
        histogram and make :meth:`to_bytes` write bytes that :meth:`from_bytes` refuses.)

        Args:
            seconds: The duration in seconds.
            count: How many times it occurred.

        Example:
            >>> h = LatencyHistogram()
            >>> h.add(0.25)
            >>> h.add(0.0, count=2)
            >>> h.count
            3
        """
        if seconds > ZERO_THRESHOLD:
            # _bucket_key inlined: a function call would add a third to the cost.
            key = floor(log10(seconds) * BUCKETS_PER_DECADE)
            bins = self._bins
            bins[key] = bins.get(key, 0) + count
        else:
            self._zero_count += count
        if seconds < self._min:
            self._min = seconds
        if seconds > self._max:
            self._max = seconds
        self._count += count

    def add_many(self, values: Sequence[float]) -> None:
        """Record one occurrence of each duration; :meth:`add` for many values, faster.

        Example:
            >>> h = LatencyHistogram()
            >>> h.add_many([0.0, 0.5, 0.5])
            >>> h.count, h.quantile(1.0)
            (3, 0.5)
        """
        if not values:
            return
        if _add_values_c is not None:
            zero_count, count, lowest, highest = _add_values_c(self._bins, values)
            self._zero_count += zero_count
            self._count += count
            if lowest is not None and highest is not None:  # values is not empty
                self._min = min(self._min, lowest)
                self._max = max(self._max, highest)
            return
        self._add_many_python(values)

    def _add_many_python(self, values: Sequence[float]) -> None:
        positive = [v for v in values if v > ZERO_THRESHOLD]
        bins = self._bins
        get = bins.get
        keys = Counter([floor(x * BUCKETS_PER_DECADE) for x in map(log10, positive)])
        for key, count in keys.items():
            bins[key] = get(key, 0) + count
        self._zero_count += len(values) - len(positive)
        self._count += len(values)
        self._min = min(self._min, min(values))
        self._max = max(self._max, max(values))

    def merge(self, other: LatencyHistogram) -> None:
        """Add ``other``'s values to this histogram, in place (``other`` is unchanged).

        Merging is exact, associative and commutative: the result equals the histogram of
        all the values added to either.

        Args:
            other: The histogram to add.

        Example:
            >>> a, b = LatencyHistogram(), LatencyHistogram()
            >>> a.add(0.1)
            >>> b.add(2.0)
            >>> a.merge(b)
            >>> a.count, a.quantile(1.0)
            (2, 2.0)
        """
        bins = self._bins
        get = bins.get
        # Safe when other is self: only existing keys are updated while iterating.
        for key, count in other._bins.items():
            bins[key] = get(key, 0) + count
        self._zero_count += other._zero_count
        self._count += other._count
        if other._min < self._min:
            self._min = other._min
        if other._max > self._max:
            self._max = other._max

    def merge_bytes(self, data: bytes) -> None:
        """Add an encoded histogram's values, in place: ``merge(from_bytes(data))``, faster.

        Reads add up thousands of stored histograms per request. This decodes straight into
        this histogram's buckets, and checks the structure (version, lengths, varints) but not
        the consistency that :meth:`from_bytes` verifies (bucket order, extremes in their
        buckets): use it for bytes this program wrote, :meth:`from_bytes` for anything else.

        Raises:
            ValueError: If the data is not an encoded histogram.

        Example:
            >>> a, b = LatencyHistogram(), LatencyHistogram()
            >>> a.add(0.1)
            >>> b.add(2.0)
            >>> a.merge_bytes(b.to_bytes())
            >>> a.count, a.quantile(1.0)
            (2, 2.0)
        """
        if _merge_encoded_c is not None:
            try:
                zero_count, total, lowest, highest = _merge_encoded_c(self._bins, data)
            except OverflowError:
                pass  # counts past 64 bits in total: Python's ints can add them up
            else:
                self._zero_count += zero_count
                self._count += total
                if lowest is not None and lowest < self._min:
                    self._min = lowest
                if highest is not None and highest > self._max:
                    self._max = highest
                return
        self._merge_encoded_python(data)

    def _merge_encoded_python(self, data: bytes) -> None:
        try:
            self._merge_encoded(data)
        except (IndexError, struct.error):
            raise _corrupt(f"truncated: {len(data)} bytes end inside a field") from None

    def _merge_encoded(self, data: bytes) -> None:
        if not data or data[0] != FORMAT_VERSION:
            raise _corrupt("no data" if not data else f"unsupported format version {data[0]}")
        bucket_count, position = _read_varint(data, 1, "bucket count")
        zero_count, position = _read_varint(data, position, "zero count")
        if bucket_count or zero_count:
            lowest, highest = _MIN_MAX.unpack_from(data, position)
            position += _MIN_MAX.size
            if lowest < self._min:
                self._min = lowest
            if highest > self._max:
                self._max = highest
        bins = self._bins
        get = bins.get
        total = zero_count
        key = 0
        for number in range(bucket_count):
            byte = data[position]
            if number == 0:
                zigzag, position = _read_varint(data, position, "first bucket index")
                key = zigzag >> 1 if not zigzag & 1 else -(zigzag >> 1) - 1
            elif byte & _VARINT_MORE:
                gap, position = _read_varint(data, position, "bucket index gap")
                key += gap
            else:
                key += byte
                position += 1
            count = data[position]
            if count & _VARINT_MORE:
                count, position = _read_varint(data, position, "bucket count")
            else:
                position += 1
            bins[key] = get(key, 0) + count
            total += count
        if position != len(data):
            raise _corrupt(f"{len(data) - position} trailing bytes")
        self._zero_count += zero_count
        self._count += total

    @property
    def count(self) -> int:
        """Number of values added (the sum of all counts).

        Example:
            >>> LatencyHistogram().count
            0
        """
        return self._count

    @property
    def maximum(self) -> float | None:
        """The largest value added, exactly; ``None`` when the histogram is empty.

        Example:
            >>> h = LatencyHistogram()
            >>> h.add(0.25, count=2)
            >>> h.maximum, LatencyHistogram().maximum
            (0.25, None)
        """
        return self._max if self._count else None

    def quantile(self, q: float) -> float | None:
        """Estimate the value at rank ``floor(q * (count - 1))`` of the sorted values.

        Args:
            q: The quantile, from 0 (the minimum, exactly) to 1 (the maximum, exactly).

        Returns:
            The estimate in seconds, within ``RELATIVE_ACCURACY`` of the exact value, or
            ``None`` if the histogram is empty.

        Raises:
            ValueError: If ``q`` is not in [0, 1].

        Example:
            >>> h = LatencyHistogram()
            >>> h.add(0.1, count=99)
            >>> h.add(30.0)
            >>> [round(v, 2) for v in h.quantiles([0.5, 0.99, 1.0])]
            [0.1, 0.1, 30.0]
        """
        return self.quantiles((q,))[0]

    def quantiles(self, qs: Sequence[float]) -> list[float | None]:
        """Estimate several quantiles in one pass; see :meth:`quantile`.

        Args:
            qs: The quantiles, each in [0, 1], in any order.

        Returns:
            One estimate per quantile, in the order given; all ``None`` if empty.

        Raises:
            ValueError: If any quantile is not in [0, 1].

        Example:
            >>> h = LatencyHistogram()
            >>> for ms in range(1, 1001):
            ...     h.add(ms / 1000)
            >>> [round(v, 2) for v in h.quantiles([0.5, 0.95, 0.99])]
            [0.5, 0.95, 0.99]
        """
        for q in qs:
            if not 0.0 <= q <= 1.0:  # also rejects NaN
                raise ValueError(f"quantile must be between 0 and 1, got {q!r}")
        results: list[float | None] = [None] * len(qs)
        if not self._count or not qs:
            return results
        last = self._count - 1
        # int() floors a non-negative float; min() guards the float rounding of huge counts.
        ranks = [min(int(q * last), last) for q in qs]
        order = sorted(range(len(qs)), key=ranks.__getitem__)
        lowest, highest = self._min, self._max
        wanted = len(order)
        position = 0
        # cumulative = number of values in the zero bucket and the buckets walked so far.
        cumulative = self._zero_count
        if ranks[order[0]] < cumulative:
            value = min(max(0.0, lowest), highest)
            while position < wanted and ranks[order[position]] < cumulative:
                results[order[position]] = value
                position += 1
        bins = self._bins
        for key in sorted(bins):
            if position == wanted:
                break
            cumulative += bins[key]
            if ranks[order[position]] < cumulative:
                value = min(max(_representative(key), lowest), highest)
                while position < wanted and ranks[order[position]] < cumulative:
                    results[order[position]] = value
                    position += 1
        for index, rank in enumerate(ranks):
            if rank == 0:
                results[index] = lowest
            elif rank == last:
                results[index] = highest
        return results

    def decades(self) -> list[tuple[str, int]]:
        """Count the values per decade, as pt-query-digest's "Query_time distribution".

        Rows ``1us``, ``10us``, ..., ``1s``, ``10s+``; each counts the values from its
        label up to ten times it (``1ms`` is [1 ms, 10 ms)), except that ``1us`` also
        counts everything below 1 us (zeros included) and ``10s+`` everything from 10 s.
        Bucket edges fall on powers of ten, so the counts are exact.

        Returns:
            All eight ``(label, count)`` rows in increasing order, empty ones included.

        Example:
            >>> h = LatencyHistogram()
            >>> for seconds in (0.0, 0.0005, 0.003, 0.004, 12.0):
            ...     h.add(seconds)
            >>> [row for row in h.decades() if row[1]]
            [('1us', 1), ('100us', 1), ('1ms', 2), ('10s+', 1)]
        """
        counts = [0] * len(_DECADE_LABELS)
        counts[0] = self._zero_count
        last_row = len(_DECADE_LABELS) - 1
        for key, count in self._bins.items():
            row = key // BUCKETS_PER_DECADE - _FIRST_DECADE
            counts[min(max(row, 0), last_row)] += count
        return list(zip(_DECADE_LABELS, counts, strict=True))

    def to_bytes(self) -> bytes:
        """Serialise compactly and deterministically; see the module docstring for the format.

        Returns:
            The encoded histogram; equal histograms give equal bytes.

        Raises:
            ValueError: If a bucket's count does not fit in 64 bits.

        Example:
            >>> h = LatencyHistogram()
            >>> h.to_bytes()
            b'\\x01\\x00\\x00'
            >>> h.add(0.001, count=5)
            >>> len(h.to_bytes())
            22
        """
        if _encode_c is not None:
            try:
                return _encode_c(self._bins, self._zero_count, self._count, self._min, self._max)
            except OverflowError:
                pass  # a count past 64 bits: the Python encoder says so
        return self._to_bytes_python()

    def _to_bytes_python(self) -> bytes:
        out = bytearray((FORMAT_VERSION,))
        _write_varint(out, len(self._bins))
        _write_varint(out, self._zero_count)
        if self._count:
            # + 0.0 turns -0.0 into 0.0 so that equal histograms give equal bytes.
            out += _MIN_MAX.pack(self._min + 0.0, self._max + 0.0)
        bins = self._bins
        keys = sorted(bins)
        if keys:
            first = keys[0]
            _write_varint(out, first * 2 if first >= 0 else -first * 2 - 1)  # zigzag
            _write_varint(out, bins[first])
        append = out.append
        # Single-byte varints inline: nearly all gaps and many counts are under 128.
        for previous, key in pairwise(keys):
            gap = key - previous
            if gap <= _VARINT_PAYLOAD:
                append(gap)
            else:
                _write_varint(out, gap)
            count = bins[key]
            if count <= _VARINT_PAYLOAD:
                append(count)
            else:
                _write_varint(out, count)
        return bytes(out)

    @classmethod
    def from_bytes(cls, data: bytes) -> LatencyHistogram:
        """Decode :meth:`to_bytes` output, strictly.

        Args:
            data: The encoded histogram.

        Returns:
            The histogram; ``from_bytes(b).to_bytes() == b`` for any accepted ``b``.

        Raises:
            ValueError: If the data is empty, of another format version, truncated, has
                trailing bytes or holds values no histogram could have (zero counts, bucket
                indexes out of order, a minimum or maximum that is negative, not finite or
                not in the first or last bucket, non-shortest varints).

        Example:
            >>> LatencyHistogram.from_bytes(b"\\x01\\x00\\x00") == LatencyHistogram()
            True
            >>> LatencyHistogram.from_bytes(b"\\x07")
            Traceback (most recent call last):
            ...
            ValueError: latency histogram: unsupported format version 7 (expected 1)
        """
        data = bytes(data)
        try:
            return cls._decode(data)
        except IndexError:  # every read indexes data, so running off its end lands here
            raise _corrupt(f"truncated: {len(data)} bytes end inside a field") from None

    @classmethod
    def _decode(cls, data: bytes) -> LatencyHistogram:
        if not data:
            raise _corrupt("no data")
        if data[0] != FORMAT_VERSION:
            raise _corrupt(f"unsupported format version {data[0]} (expected {FORMAT_VERSION})")
        bucket_count, position = _read_varint(data, 1, "bucket count")
        zero_count, position = _read_varint(data, position, "zero count")
        if bucket_count * _MIN_BUCKET_BYTES > len(data) - position:
            raise _corrupt(f"{bucket_count} buckets cannot fit in {len(data)} bytes")
        histogram = cls()
        histogram._zero_count = total = zero_count
        if bucket_count or zero_count:
            histogram._min, histogram._max = _read_min_max(data, position)
            position += _MIN_MAX.size
        bins = histogram._bins
        key = 0
        # Single-byte varints inline: nearly all gaps and many counts are under 128.
        for number in range(bucket_count):
            byte = data[position]
            position += 1
            if number == 0:
                zigzag, position = _read_varint(data, position - 1, "first bucket index")
                key = zigzag >> 1 if not zigzag & 1 else -(zigzag >> 1) - 1
            elif byte & _VARINT_MORE:
                gap, position = _read_varint(data, position - 1, "bucket index gap")
                key += gap
            elif byte:
                key += byte
            else:
                raise _corrupt(f"bucket {number}: index gap is 0 (indexes must increase)")
            if not _MIN_KEY <= key <= _MAX_KEY:
                raise _corrupt(f"bucket {number}: index {key} out of range")
            count = data[position]
            position += 1
            if count & _VARINT_MORE:
                count, position = _read_varint(data, position - 1, "bucket count")
            elif not count:
                raise _corrupt(f"bucket {number} (index {key}): count is 0")
            bins[key] = count
            total += count
        if position != len(data):
            raise _corrupt(f"{len(data) - position} trailing bytes")
        histogram._count = total
        if total:
            _check_min_max(histogram)
        return histogram

    def __eq__(self, other: object) -> bool:
        """Same values recorded: same buckets, zero count, minimum and maximum."""
        if not isinstance(other, LatencyHistogram):
            return NotImplemented
        return (
            self._count == other._count
            and self._zero_count == other._zero_count
            and self._min == other._min
            and self._max == other._max
            and self._bins == other._bins
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        """Summary for debugging: count, extremes and number of buckets."""
        if not self._count:
            return "LatencyHistogram(count=0)"
        return (
            f"LatencyHistogram(count={self._count}, min={self._min!r}, max={self._max!r}, "
            f"buckets={len(self._bins)}, zeros={self._zero_count})"
        )


def encode_values(values: Sequence[float]) -> bytes:
    """The stored form of the histogram of ``values`` (at least one): what
    :meth:`LatencyHistogram.to_bytes` gives after :meth:`~LatencyHistogram.add_many`, without
    the object (the agent encodes tens of thousands of small histograms a batch).

    Example:
        >>> LatencyHistogram.from_bytes(encode_values([0.001, 0.5])).count
        2
    """
    if _add_values_c is not None and _encode_c is not None:
        bins: dict[int, int] = {}
        zero_count, count, lowest, highest = _add_values_c(bins, values)
        if lowest is not None and highest is not None:
            try:
                return _encode_c(bins, zero_count, count, lowest, highest)
            except OverflowError:
                pass  # a count past 64 bits: the Python encoder says so
    histogram = LatencyHistogram()
    histogram.add_many(values)
    return histogram.to_bytes()


def merge_stored(*stored: bytes) -> bytes:
    """The stored form of the merge of histograms in their stored form (bytes this program
    wrote: structure checked, not the consistency :meth:`LatencyHistogram.from_bytes` checks).

    Example:
        >>> merge_stored(encode_values([0.1]), encode_values([0.2])) == encode_values([0.1, 0.2])
        True
    """
    merged = LatencyHistogram()
    for data in stored:
        merged.merge_bytes(data)
    return merged.to_bytes()


def _write_varint(out: bytearray, value: int) -> None:
    if value > _MAX_VARINT:
        raise ValueError(f"latency histogram: count {value} does not fit in 64 bits")
    while value > _VARINT_PAYLOAD:
        out.append((value & _VARINT_PAYLOAD) | _VARINT_MORE)
        value >>= _VARINT_SHIFT
    out.append(value)


def _corrupt(message: str) -> ValueError:
    return ValueError(f"latency histogram: {message}")


def _check_min_max(histogram: LatencyHistogram) -> None:
    """Check the decoded minimum and maximum against the buckets they must fall in."""
    lowest, highest = histogram._min, histogram._max
    keys = sorted(histogram._bins)
    if histogram._zero_count:
        if lowest > ZERO_THRESHOLD:
            raise _corrupt(f"minimum {lowest!r} above the zero bucket, which is not empty")
    elif abs(_bucket_key(lowest) - keys[0]) > _KEY_TOLERANCE:
        raise _corrupt(f"minimum {lowest!r} is not in the first bucket (index {keys[0]})")
    if not keys:
        if highest > ZERO_THRESHOLD:
            raise _corrupt(f"maximum {highest!r} above the zero bucket, the only one")
    elif highest <= ZERO_THRESHOLD or abs(_bucket_key(highest) - keys[-1]) > _KEY_TOLERANCE:
        raise _corrupt(f"maximum {highest!r} is not in the last bucket (index {keys[-1]})")


def _read_varint(data: bytes, position: int, what: str) -> tuple[int, int]:
    """Decode the varint at ``position``; return it and the position after it."""
    start = position
    value = 0
    for index in range(_MAX_VARINT_BYTES):
        byte = data[position]
        position += 1
        value |= (byte & _VARINT_PAYLOAD) << (_VARINT_SHIFT * index)
        if not byte & _VARINT_MORE:
            if byte == 0 and index:
                raise _corrupt(f"{what} at byte {start}: varint not in its shortest form")
            if value > _MAX_VARINT:
                raise _corrupt(f"{what} at byte {start}: varint exceeds 64 bits")
            return value, position
    raise _corrupt(f"{what} at byte {start}: varint longer than {_MAX_VARINT_BYTES} bytes")


def _read_min_max(data: bytes, position: int) -> tuple[float, float]:
    if len(data) - position < _MIN_MAX.size:
        raise _corrupt(f"truncated: no minimum and maximum at byte {position}")
    lowest, highest = _MIN_MAX.unpack_from(data, position)
    for name, value in (("minimum", lowest), ("maximum", highest)):
        # copysign also catches -0.0, which to_bytes never writes.
        if not math.isfinite(value) or math.copysign(1.0, value) < 0:
            raise _corrupt(f"{name} {value!r} is not a finite non-negative number")
    if lowest > highest:
        raise _corrupt(f"minimum {lowest!r} is above maximum {highest!r}")
    return lowest, highest
