"""Types of the C fingerprint cache key (_literal_mask.c)."""

def literal_mask(sql: str, /) -> str | None:
    """The cache key of an ASCII statement (fingerprinter's regex masking), None for others."""
