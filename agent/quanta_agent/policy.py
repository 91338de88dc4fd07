"""What statement text leaves the host: the example policy and the longest statement sent.

Its own small module: `quanta-agent import` needs these and none of the configuration's
dependencies (pydantic-settings, YAML), which would add a third to its start-up.
"""

import enum

# The ingest API refuses longer statements (quanta.ingest.schemas.MAX_QUERY_CHARS).
MAX_QUERY_LENGTH = 1_000_000


class ExamplePolicy(enum.StrEnum):
    """What query text leaves the host: as logged, literals masked, or none kept."""

    FULL = "full"
    MASKED = "masked"
    OFF = "off"
