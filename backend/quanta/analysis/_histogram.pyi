"""Types of the C decoder of stored latency histograms (_histogram.c)."""

def merge_encoded(
    bins: dict[int, int], data: bytes, /
) -> tuple[int, int, float | None, float | None]:
    """Add an encoded histogram's buckets to ``bins``; (zeros, total, minimum, maximum)."""
