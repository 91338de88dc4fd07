"""Types of the C decoder and encoder of stored latency histograms (_histogram.c)."""

from collections.abc import Sequence

def merge_encoded(
    bins: dict[int, int], data: bytes, /
) -> tuple[int, int, float | None, float | None]:
    """Add an encoded histogram's buckets to ``bins``; (zeros, total, minimum, maximum)."""

def encode(
    bins: dict[int, int], zero_count: int, count: int, minimum: float, maximum: float, /
) -> bytes:
    """LatencyHistogram.to_bytes of a histogram with these fields."""

def add_values(
    bins: dict[int, int], values: Sequence[float], /
) -> tuple[int, int, float | None, float | None]:
    """Add durations to ``bins`` as LatencyHistogram.add_many; (zeros, count, min, max)."""

def pt_bucket_counts(counts: dict[int, int], values: Sequence[float] | Sequence[int], /) -> bool:
    """Count values in pt-query-digest's buckets as ptstats.Buckets.add_many; False (nothing
    counted) when a value is not a finite number a float holds."""
