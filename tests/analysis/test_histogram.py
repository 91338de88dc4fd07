"""Latency histogram tests: quantile error bound, exact merges, strict serialisation, decades.

Quantiles are checked against the exact value at rank ``floor(q * (count - 1))`` of the sorted
input, the definition the histogram documents.
"""

from __future__ import annotations

import doctest
import math
import random
import struct
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quanta.analysis import histogram as histogram_module
from quanta.analysis.histogram import (
    BUCKETS_PER_DECADE,
    FORMAT_VERSION,
    ZERO_THRESHOLD,
    LatencyHistogram,
)
from tests.fixtures.servers import native_unavailable

ACCURACY = LatencyHistogram.RELATIVE_ACCURACY
FLOAT_SLACK = 1e-12  # relative: rounding in log10 and pow, far below the bucket width
CHECKED_QUANTILES = (0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0)
DECADE_LABELS = ["1us", "10us", "100us", "1ms", "10ms", "100ms", "1s", "10s+"]
DECADE_EDGES = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0]  # upper ends of all rows but the last
MAX_COUNT = 2**64 - 1

# Durations in seconds. Slow logs print microseconds, so rounded values (zeros, many
# repeats) get their own strategy.
log_uniform = st.floats(min_value=-6, max_value=4).map(lambda exponent: 10.0**exponent)
microseconds = st.floats(min_value=0, max_value=100).map(lambda seconds: round(seconds, 6))
durations = st.one_of(log_uniform, microseconds, st.just(0.0))
counts = st.integers(min_value=1, max_value=1000)
weighted = st.lists(st.tuples(durations, counts), max_size=60)


@st.composite
def exponential_samples(draw: st.DrawFn) -> list[float]:
    """Exponentially distributed durations with a mean between 10 us and 1000 s."""
    rng = draw(st.randoms(use_true_random=False))
    mean = 10.0 ** draw(st.integers(min_value=-5, max_value=3))
    size = draw(st.integers(min_value=1, max_value=400))
    # Inverse transform: hypothesis's own expovariate draws arbitrary floats, even inf.
    return [-mean * math.log(1.0 - rng.random()) for _ in range(size)]


samples = st.one_of(
    st.lists(log_uniform, min_size=1, max_size=400),
    exponential_samples(),
    st.lists(durations, min_size=1, max_size=400),
)


def build(values: Iterable[float]) -> LatencyHistogram:
    histogram = LatencyHistogram()
    for value in values:
        histogram.add(value)
    return histogram


def build_weighted(pairs: Iterable[tuple[float, int]]) -> LatencyHistogram:
    histogram = LatencyHistogram()
    for value, count in pairs:
        histogram.add(value, count)
    return histogram


def exact_quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[math.floor(q * (len(ordered) - 1))]


def assert_within_bound(estimate: float | None, exact: float) -> None:
    assert estimate is not None
    if exact > ZERO_THRESHOLD:
        assert abs(estimate - exact) <= exact * (ACCURACY + FLOAT_SLACK), (estimate, exact)
    else:  # the zero bucket: reported as 0.0, or the exact minimum if larger
        assert 0.0 <= estimate <= ZERO_THRESHOLD, (estimate, exact)


def within_bound(expected: float) -> object:
    """Comparison object for a value within the histogram's relative error of ``expected``."""
    return pytest.approx(expected, rel=ACCURACY + FLOAT_SLACK, abs=0)


def varint(value: int) -> bytes:
    """Test-side LEB128 encoder, independent of the module's."""
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode(
    pairs: Sequence[tuple[int, int]],
    *,
    zeros: int = 0,
    lowest: float | None = None,
    highest: float | None = None,
    version: int = FORMAT_VERSION,
) -> bytes:
    """Encode by the documented format, from bucket (index, count) pairs in order."""
    out = bytearray([version]) + varint(len(pairs)) + varint(zeros)
    if lowest is not None and highest is not None:
        out += struct.pack("<dd", lowest, highest)
    previous = None
    for key, count in pairs:
        out += varint((key << 1) ^ (key >> 63) if previous is None else key - previous)
        out += varint(count)
        previous = key
    return bytes(out)


def key_of(seconds: float) -> int:
    return math.floor(math.log10(seconds) * BUCKETS_PER_DECADE)


# -- quantiles -------------------------------------------------------------------------------


def test_accuracy_is_at_most_one_percent() -> None:
    gamma = 10 ** (1 / BUCKETS_PER_DECADE)
    assert abs(ACCURACY - (gamma - 1) / (gamma + 1)) < FLOAT_SLACK
    assert 0.0099 < ACCURACY <= 0.01


def test_repeated_value_is_exact() -> None:
    histogram = LatencyHistogram()
    histogram.add(0.123457, count=1000)
    assert histogram.quantiles(CHECKED_QUANTILES) == [0.123457] * len(CHECKED_QUANTILES)


def test_first_and_last_rank_are_exact_min_and_max() -> None:
    histogram = build([0.003, 0.001, 2.0, 0.001])
    assert histogram.quantile(0.0) == 0.001
    assert histogram.quantile(1.0) == 2.0
    # rank floor(0.99 * 3) = 2 is the second 0.003-ish value, not the maximum
    assert histogram.quantile(0.99) == within_bound(0.003)
    assert histogram.quantile(0.99) != 2.0


def test_milliseconds_one_to_hundred() -> None:
    values = [ms / 1000 for ms in range(1, 101)]
    histogram = build(reversed(values))
    assert histogram.count == 100
    for percent in range(101):
        q = percent / 100
        assert_within_bound(histogram.quantile(q), exact_quantile(values, q))
    # rank floor(0.5 * 99) = 49 is the 50th value, 50 ms
    assert histogram.quantile(0.5) == within_bound(0.050)
    assert histogram.quantile(0.95) == within_bound(0.095)


def test_two_populations() -> None:
    histogram = LatencyHistogram()
    histogram.add(0.001, count=90)
    histogram.add(1.0, count=10)
    p50, p89, p91, p99 = histogram.quantiles([0.5, 0.89, 0.91, 0.99])
    assert p50 == within_bound(0.001)
    assert p89 == within_bound(0.001)  # rank 88
    assert p91 == within_bound(1.0)  # rank 90
    assert p99 == within_bound(1.0)


def test_answers_are_clamped_into_min_max() -> None:
    # 0.1 is a bucket's lower edge: its representative is ~1% above it, above the maximum.
    histogram = build([0.1, 0.1, 0.1])
    assert histogram.quantile(0.5) == 0.1
    assert key_of(0.1005) == key_of(0.1007) == key_of(0.1)
    histogram = build([0.1005, 0.1006, 0.1007])
    assert histogram.quantile(0.5) == 0.1007


def test_large_realistic_sample() -> None:
    rng = random.Random(20240101)
    values = [round(rng.lognormvariate(-4.0, 1.5), 6) for _ in range(50_000)]
    histogram = build(values)
    ordered = sorted(values)
    for permille in range(1001):
        q = permille / 1000
        estimate = histogram.quantile(q)
        assert_within_bound(estimate, ordered[math.floor(q * (len(ordered) - 1))])


def test_quantiles_any_order_and_duplicates() -> None:
    histogram = build([ms / 1000 for ms in range(1, 1001)])
    qs = [0.99, 0.5, 1.0, 0.0, 0.5, 0.95]
    assert histogram.quantiles(qs) == [histogram.quantile(q) for q in qs]
    assert histogram.quantiles([]) == []


@pytest.mark.parametrize("q", [-0.01, 1.01, math.nan, math.inf, -math.inf])
def test_quantile_out_of_range(q: float) -> None:
    for histogram in (LatencyHistogram(), build([0.5])):
        with pytest.raises(ValueError, match="quantile must be between 0 and 1"):
            histogram.quantile(q)
        with pytest.raises(ValueError, match="quantile must be between 0 and 1"):
            histogram.quantiles([0.5, q])


@given(samples, st.lists(st.floats(min_value=0, max_value=1), max_size=5))
def test_quantiles_within_bound(values: list[float], extra: list[float]) -> None:
    histogram = build(values)
    qs = [*CHECKED_QUANTILES, *extra]
    estimates = histogram.quantiles(qs)
    ordered = sorted(values)
    for q, estimate in zip(qs, estimates, strict=True):
        assert_within_bound(estimate, ordered[math.floor(q * (len(ordered) - 1))])
        assert ordered[0] <= estimate <= ordered[-1]  # type: ignore[operator]
    assert estimates[0] == ordered[0]
    assert estimates[len(CHECKED_QUANTILES) - 1] == ordered[-1]
    monotone = histogram.quantiles(sorted(qs))
    assert monotone == sorted(monotone)  # type: ignore[type-var]


# -- zeros and empty -------------------------------------------------------------------------


def test_zero_values() -> None:
    histogram = LatencyHistogram()
    histogram.add(0.0, count=10)
    assert histogram.count == 10
    assert histogram.quantiles([0.0, 0.5, 1.0]) == [0.0, 0.0, 0.0]
    assert histogram.decades()[0] == ("1us", 10)


def test_below_threshold_is_zero_bucket_reported_within_min_max() -> None:
    histogram = build([0.0, 5e-10, ZERO_THRESHOLD])
    assert histogram.quantile(0.0) == 0.0
    assert histogram.quantile(0.5) == 0.0
    assert histogram.quantile(1.0) == ZERO_THRESHOLD
    only_tiny = build([5e-10, 6e-10, 7e-10])
    assert only_tiny.quantile(0.5) == 5e-10  # 0.0 clamped up to the exact minimum


def test_zeros_mixed_with_durations() -> None:
    histogram = LatencyHistogram()
    histogram.add(0.0, count=90)
    histogram.add(0.5, count=10)
    assert histogram.quantile(0.5) == 0.0
    assert histogram.quantile(88 / 99) == 0.0  # rank 88
    assert histogram.quantile(90 / 99) == within_bound(0.5)  # rank 90
    assert histogram.quantile(1.0) == 0.5


def test_empty_histogram() -> None:
    histogram = LatencyHistogram()
    assert histogram.count == 0
    assert histogram.quantile(0.5) is None
    assert histogram.quantiles([0.0, 0.99, 1.0]) == [None, None, None]
    assert histogram.decades() == [(label, 0) for label in DECADE_LABELS]
    assert histogram.to_bytes() == b"\x01\x00\x00"
    assert LatencyHistogram.from_bytes(histogram.to_bytes()) == histogram
    assert histogram == LatencyHistogram()
    assert repr(histogram) == "LatencyHistogram(count=0)"


def test_add_with_count_equals_repeated_adds() -> None:
    once = LatencyHistogram()
    once.add(0.0042, count=7)
    once.add(0.0, count=3)
    assert once == build([0.0042] * 7 + [0.0] * 3)
    assert once.count == 10


# -- merge -----------------------------------------------------------------------------------


def test_merge_small_example() -> None:
    a, b = build([0.001, 0.002]), build([0.0, 3.0])
    a.merge(b)
    assert a.count == 4
    assert a.quantile(0.0) == 0.0
    assert a.quantile(1.0) == 3.0
    assert b == build([0.0, 3.0])  # the argument is unchanged
    assert a == build([0.001, 0.002, 0.0, 3.0])


def test_merge_with_empty_either_way() -> None:
    histogram = build([0.25, 0.5])
    histogram.merge(LatencyHistogram())
    assert histogram == build([0.25, 0.5])
    empty = LatencyHistogram()
    empty.merge(histogram)
    assert empty == histogram


def test_merge_with_itself_doubles_counts() -> None:
    histogram = build_weighted([(0.0, 1), (0.01, 2), (4.0, 3)])
    histogram.merge(histogram)
    assert histogram == build_weighted([(0.0, 2), (0.01, 4), (4.0, 6)])


@given(weighted, weighted, weighted)
def test_merge_is_associative_commutative_and_exact(
    xs: list[tuple[float, int]], ys: list[tuple[float, int]], zs: list[tuple[float, int]]
) -> None:
    left = build_weighted(xs)  # (x + y) + z
    left.merge(build_weighted(ys))
    left.merge(build_weighted(zs))
    inner = build_weighted(ys)  # x + (y + z)
    inner.merge(build_weighted(zs))
    right = build_weighted(xs)
    right.merge(inner)
    assert left == right

    xy, yx = build_weighted(xs), build_weighted(ys)
    xy.merge(build_weighted(ys))
    yx.merge(build_weighted(xs))
    assert xy == yx
    assert xy.to_bytes() == yx.to_bytes()

    everything = build_weighted(xs + ys + zs)
    assert left == everything
    assert left.to_bytes() == everything.to_bytes()
    assert left.count == sum(count for _, count in xs + ys + zs)


@given(weighted, weighted)
def test_merge_bytes_equals_merging_the_decoded_histogram(
    xs: list[tuple[float, int]], ys: list[tuple[float, int]]
) -> None:
    decoded, encoded = build_weighted(xs), build_weighted(xs)
    decoded.merge(LatencyHistogram.from_bytes(build_weighted(ys).to_bytes()))
    encoded.merge_bytes(build_weighted(ys).to_bytes())
    assert encoded == decoded
    assert encoded.to_bytes() == decoded.to_bytes()


def test_merge_bytes_refuses_truncated_data_and_leaves_the_histogram_usable() -> None:
    data = build([0.0, 0.0001, 0.05, 300.0]).to_bytes()
    for end in range(len(data)):
        with pytest.raises(ValueError, match="latency histogram: "):
            LatencyHistogram().merge_bytes(data[:end])
    with pytest.raises(ValueError, match="trailing bytes"):
        LatencyHistogram().merge_bytes(data + b"\x01")


# -- serialisation ---------------------------------------------------------------------------


def test_layout_matches_documented_format() -> None:
    histogram = LatencyHistogram()
    histogram.add(0.0)
    histogram.add(0.001, count=5)
    histogram.add(1.0, count=200)
    data = histogram.to_bytes()
    # version 1, 2 buckets, 1 zero, min 0.0, max 1.0, index -348 (zigzag 695) count 5,
    # gap 348 count 200
    assert data.hex() == "010201" + "00" * 8 + "000000000000f03f" + "b70505" + "dc02c801"
    assert data == encode([(-348, 5), (0, 200)], zeros=1, lowest=0.0, highest=1.0)
    assert LatencyHistogram.from_bytes(data) == histogram


def test_typical_histogram_is_compact() -> None:
    rng = random.Random(7)
    values = [round(rng.lognormvariate(-3.9, 0.5), 6) for _ in range(200)]
    histogram = build(values)
    buckets = len({key_of(value) for value in values})
    # header 3 + min/max 16 + a 2-byte first index; then a byte per gap and per count < 128
    assert 40 <= buckets <= 120
    assert len(histogram.to_bytes()) == 3 + 16 + 1 + 2 * buckets


def test_equal_content_gives_equal_bytes() -> None:
    values = [0.0, 0.5, 0.000123, 12.0, 0.5]
    assert build(values).to_bytes() == build(reversed(values)).to_bytes()
    assert build([-0.0, 0.1]).to_bytes() == build([0.0, 0.1]).to_bytes()


def test_huge_counts_round_trip() -> None:
    histogram = LatencyHistogram()
    histogram.add(1.0, count=2**63)
    histogram.add(2.0, count=2**63 - 1)
    decoded = LatencyHistogram.from_bytes(histogram.to_bytes())
    assert decoded == histogram
    assert decoded.count == MAX_COUNT
    assert decoded.quantile(0.25) == within_bound(1.0)
    assert decoded.quantile(0.75) == within_bound(2.0)


def test_count_beyond_64_bits_is_refused() -> None:
    histogram = LatencyHistogram()
    histogram.add(1.0, count=MAX_COUNT + 1)
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        histogram.to_bytes()


@given(weighted, st.lists(st.integers(min_value=1, max_value=MAX_COUNT), max_size=3))
def test_round_trip(pairs: list[tuple[float, int]], big_counts: list[int]) -> None:
    histogram = build_weighted(pairs)
    for exponent, count in enumerate(big_counts):
        histogram.add(10.0 ** (5 + exponent), count)  # above durations: no count overflow
    data = histogram.to_bytes()
    decoded = LatencyHistogram.from_bytes(data)
    assert decoded == histogram
    assert decoded.count == histogram.count
    assert decoded.to_bytes() == data
    assert decoded.quantiles(CHECKED_QUANTILES) == histogram.quantiles(CHECKED_QUANTILES)
    assert decoded.decades() == histogram.decades()


VALID = encode([(-348, 5), (0, 200)], zeros=1, lowest=0.0, highest=1.0)
K1MS, K2MS, K1S = key_of(0.001), key_of(0.002), key_of(1.0)
TWO_OFF = 10 ** ((K1MS + 2.5) / BUCKETS_PER_DECADE)  # two buckets above K1MS

CORRUPT = {
    "empty": (b"", "no data"),
    "version 0": (b"\x00\x00\x00", "unsupported format version 0"),
    "version 2": (b"\x02\x00\x00", "unsupported format version 2"),
    "header only": (b"\x01", "truncated"),
    "trailing byte": (VALID + b"\x00", "1 trailing bytes"),
    "trailing byte after empty": (b"\x01\x00\x00\x00", "1 trailing bytes"),
    "too many buckets": (b"\x01\xff\xff\x03\x00", "buckets cannot fit"),
    "min max missing": (b"\x01\x00\x01", "no minimum and maximum"),
    "zero count in bucket": (encode([(K1MS, 0)], lowest=0.001, highest=0.001), "count is 0"),
    "zero gap": (
        encode([(K1MS, 1), (K1MS, 1)], lowest=0.001, highest=0.001),
        "index gap is 0",
    ),
    "non-shortest varint": (b"\x01\x80\x00\x00", "shortest form"),
    "varint over 64 bits": (b"\x01" + b"\xff" * 9 + b"\x02\x00", "exceeds 64 bits"),
    "varint over 10 bytes": (b"\x01" + b"\xff" * 10 + b"\x01\x00", "longer than 10 bytes"),
    "index out of range": (
        encode([(10**6, 1)], lowest=1e300, highest=1e300),
        "index 1000000 out of range",
    ),
    "index below the zero threshold": (
        encode([(key_of(1e-10), 1)], lowest=1e-10, highest=1e-10),
        "out of range",
    ),
    "nan minimum": (encode([(K1MS, 1)], lowest=math.nan, highest=0.001), "minimum nan"),
    "infinite maximum": (encode([(K1MS, 1)], lowest=0.001, highest=math.inf), "maximum inf"),
    "negative minimum": (encode([], zeros=1, lowest=-1.0, highest=0.0), "minimum -1.0"),
    "negative zero": (encode([], zeros=1, lowest=-0.0, highest=0.0), "minimum -0.0"),
    "min above max": (encode([(K1MS, 2)], lowest=0.002, highest=0.001), "above maximum"),
    "min not in first bucket": (
        encode([(K1MS, 1), (K1S, 1)], lowest=0.5, highest=1.0),
        "minimum 0.5 is not in the first bucket",
    ),
    "min two buckets off": (
        encode([(K1MS, 1)], lowest=TWO_OFF, highest=TWO_OFF),
        "is not in the first bucket",
    ),
    "max not in last bucket": (
        encode([(K1MS, 1), (K2MS, 1)], lowest=0.001, highest=1.0),
        "maximum 1.0 is not in the last bucket",
    ),
    "max zero with buckets": (
        encode([(K1MS, 1)], zeros=1, lowest=0.0, highest=0.0),
        "maximum 0.0 is not in the last bucket",
    ),
    "min above zero bucket": (
        encode([(K1MS, 1)], zeros=1, lowest=0.001, highest=0.001),
        "above the zero bucket",
    ),
    "max above zero bucket": (encode([], zeros=1, lowest=0.0, highest=0.5), "the only one"),
}


@pytest.mark.parametrize(("data", "message"), CORRUPT.values(), ids=CORRUPT.keys())
def test_corrupt_input_is_refused(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        LatencyHistogram.from_bytes(data)
    assert str(caught.value).startswith("latency histogram: ")


def test_every_truncation_is_refused() -> None:
    histogram = build([0.0, 0.0001, 0.05, 0.05, 300.0])
    histogram.add(2.5, count=1000)
    data = histogram.to_bytes()
    for end in range(len(data)):
        with pytest.raises(ValueError, match="latency histogram: "):
            LatencyHistogram.from_bytes(data[:end])


def assert_refused_or_canonical(data: bytes) -> None:
    try:
        decoded = LatencyHistogram.from_bytes(data)
    except ValueError:
        return
    assert decoded.to_bytes() == data


@given(st.binary(max_size=60))
def test_random_bytes_are_refused_or_canonical(data: bytes) -> None:
    assert_refused_or_canonical(data)
    assert_refused_or_canonical(bytes([FORMAT_VERSION]) + data)


@given(weighted, st.data())
def test_mutated_bytes_are_refused_or_canonical(
    pairs: list[tuple[float, int]], data: st.DataObject
) -> None:
    encoded = bytearray(build_weighted(pairs).to_bytes())
    position = data.draw(st.integers(min_value=0, max_value=len(encoded) - 1))
    encoded[position] = data.draw(st.integers(min_value=0, max_value=255))
    assert_refused_or_canonical(bytes(encoded))


# -- decades ---------------------------------------------------------------------------------


def test_decades_mid_decade() -> None:
    histogram = LatencyHistogram()
    histogram.add(0.0, count=2)
    histogram.add(5e-7)
    histogram.add(5e-6, count=3)
    histogram.add(5e-5, count=4)
    histogram.add(5e-4, count=5)
    histogram.add(5e-3, count=6)
    histogram.add(5e-2, count=7)
    histogram.add(5.0, count=8)
    histogram.add(50.0, count=9)
    histogram.add(5e5, count=10)
    assert histogram.decades() == [
        ("1us", 6),
        ("10us", 4),
        ("100us", 5),
        ("1ms", 6),
        ("10ms", 7),
        ("100ms", 0),
        ("1s", 8),
        ("10s+", 19),
    ]


@pytest.mark.parametrize(
    ("seconds", "label"),
    [
        (1e-6, "1us"),
        (9.99e-6, "1us"),
        (1e-5, "10us"),
        (1e-4, "100us"),
        (0.000999, "100us"),
        (0.001, "1ms"),
        (0.01, "10ms"),
        (0.1, "100ms"),
        (0.999999, "100ms"),
        (1.0, "1s"),
        (9.999999, "1s"),
        (10.0, "10s+"),
    ],
)
def test_decade_edges_belong_to_the_decade_they_start(seconds: float, label: str) -> None:
    rows = build([seconds]).decades()
    assert [row_label for row_label, count in rows if count] == [label]


def exact_decade(seconds: float) -> int:
    return bisect_right(DECADE_EDGES, seconds)


def near_an_edge(seconds: float) -> bool:
    return any(abs(seconds - edge) <= edge * 1e-9 for edge in DECADE_EDGES)


@given(st.lists(st.tuples(durations.filter(lambda s: not near_an_edge(s)), counts)))
def test_decades_count_exactly(pairs: list[tuple[float, int]]) -> None:
    expected = [0] * len(DECADE_LABELS)
    for seconds, count in pairs:
        expected[exact_decade(seconds)] += count
    assert build_weighted(pairs).decades() == list(zip(DECADE_LABELS, expected, strict=True))


# -- docs ------------------------------------------------------------------------------------


def test_docstring_examples() -> None:
    result = doctest.testmod(histogram_module)
    assert result.attempted >= 20
    assert result.failed == 0


# -- the C decoder ---------------------------------------------------------------------------
# merge_bytes uses quanta.analysis._histogram when it is built (make install builds it); the
# Python decoder is the reference. Both must agree on every input, errors included.


@pytest.fixture(scope="module")
def c_decoder() -> Any:
    decoder = histogram_module._merge_encoded_c
    if decoder is None:
        native_unavailable("_histogram", "the C histogram decoder")
    return decoder


def decode_both(c_decoder: Any, start: LatencyHistogram, data: bytes) -> tuple[Any, Any]:
    """What each decoder does to a copy of ``start``: the histogram, or the error message."""
    outcomes = []
    for decode in ("c", "python"):
        histogram = LatencyHistogram.from_bytes(start.to_bytes())
        try:
            if decode == "c":
                zeros, total, lowest, highest = c_decoder(histogram._bins, data)
                histogram._zero_count += zeros
                histogram._count += total
                if lowest is not None:
                    histogram._min = min(histogram._min, lowest)
                    histogram._max = max(histogram._max, highest)
            else:
                histogram._merge_encoded_python(data)
        except ValueError as error:
            outcomes.append(str(error))
        else:
            outcomes.append(histogram)
    return outcomes[0], outcomes[1]


@given(weighted, weighted, st.integers(min_value=0, max_value=MAX_COUNT // 2))
def test_c_decoder_merges_like_the_python_one(
    c_decoder: Any, xs: list[tuple[float, int]], ys: list[tuple[float, int]], big: int
) -> None:
    added = build_weighted(ys)
    if big:
        added.add(1e5, count=big)  # a bucket of its own (durations stay under 1e4 s)
    by_c, by_python = decode_both(c_decoder, build_weighted(xs), added.to_bytes())
    assert by_c == by_python
    assert by_c.to_bytes() == by_python.to_bytes()


@given(st.binary(max_size=60), st.booleans())
def test_c_decoder_refuses_what_the_python_one_refuses(
    c_decoder: Any, data: bytes, with_version: bool
) -> None:
    data = bytes([FORMAT_VERSION]) + data if with_version else data
    start = build([0.001, 2.0])
    by_c, by_python = decode_both(c_decoder, start, data)
    if isinstance(by_python, str):
        assert by_c == by_python  # the same message
    else:
        assert by_c == by_python


def test_c_decoder_truncations_and_edge_encodings(c_decoder: Any) -> None:
    histogram = build([0.0, 0.0001, 0.05, 0.05, 300.0])
    histogram.add(2.5, count=MAX_COUNT // 2)
    data = histogram.to_bytes()
    cases = [data[:end] for end in range(len(data))] + [
        data + b"\x00",
        b"\x01" + b"\xff" * 11,  # varint longer than 10 bytes
        b"\x01" + b"\xff" * 9 + b"\x7f\x00",  # varint past 64 bits
        b"\x01\x80\x00\x00",  # varint not in its shortest form
        encode([(5, 1), (5, 2)], lowest=0.5, highest=0.5),  # a gap of 0 repeats a key
    ]
    for case in cases:
        by_c, by_python = decode_both(c_decoder, LatencyHistogram(), case)
        assert by_c == by_python, case


def test_c_decoder_hands_counts_past_64_bits_to_python(c_decoder: Any) -> None:
    big = encode([(1, MAX_COUNT), (2, MAX_COUNT)], lowest=1.0, highest=1.1)
    with pytest.raises(OverflowError):
        c_decoder({}, big)
    merged = LatencyHistogram()
    merged.merge_bytes(big)  # falls back to the Python decoder
    assert merged.count == 2 * MAX_COUNT


def encoded_by_both(histogram: LatencyHistogram) -> tuple[object, object]:
    """What to_bytes (the C encoder when built) and the Python encoder give: bytes or error."""
    outcomes: list[object] = []
    for encode in (histogram.to_bytes, histogram._to_bytes_python):
        try:
            outcomes.append(encode())
        except ValueError as error:
            outcomes.append(str(error))
    return outcomes[0], outcomes[1]


@given(weighted, st.integers(min_value=0, max_value=2**66))
def test_c_encoder_writes_what_the_python_one_writes(
    c_decoder: Any, xs: list[tuple[float, int]], big: int
) -> None:
    assert histogram_module._encode_c is not None  # built with the decoder
    histogram = build_weighted(xs)
    if big:
        histogram.add(1e5, count=big)  # past 2**64: both refuse
    by_c, by_python = encoded_by_both(histogram)
    assert by_c == by_python
    if isinstance(by_c, bytes):
        assert LatencyHistogram.from_bytes(by_c).to_bytes() == by_c


@given(st.lists(durations, max_size=80), weighted)
def test_c_adder_adds_what_the_python_one_adds(
    c_decoder: Any, values: list[float], xs: list[tuple[float, int]]
) -> None:
    assert histogram_module._add_values_c is not None  # built with the decoder
    by_c, by_python = build_weighted(xs), build_weighted(xs)
    by_c.add_many(values)
    if values:  # add_many returns at once on nothing
        by_python._add_many_python(values)
    assert by_c == by_python
    assert by_c.to_bytes() == by_python.to_bytes()
