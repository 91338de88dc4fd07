"""quanta-agent: ships slow-log events and performance_schema digests to a Quanta server."""

__version__ = "0.1.0"
