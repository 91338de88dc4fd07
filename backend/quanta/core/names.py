"""Names that become identities: one rule for an instance's name wherever it comes in.

An instance is created by name from an agent's batch, so the name is whatever the agent (or
whoever holds an ingest token) sends: it is trimmed and must be a sane, printable name, or
the request is refused with a 422 that names the field. The name then shows up in the UI,
in links and in chat messages.
"""

import re
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

INSTANCE_NAME_MAX_CHARS = 100
# Letters and digits (any script), then . _ - : @ + / and single inner spaces: host names,
# host:port, service/replica and "prod db1" all fit; markup, quotes and control characters
# do not.
_INSTANCE_NAME = re.compile(r"[\w.:@+/-]+(?: [\w.:@+/-]+)*")


def check_instance_name(name: str) -> str:
    """`name` (already trimmed) if it is a valid instance name, else ValueError saying why.

    >>> check_instance_name("db-1.example:3306")
    'db-1.example:3306'
    >>> check_instance_name("db<1>")
    Traceback (most recent call last):
    ...
    ValueError: an instance name is 1 to 100 letters, digits, single spaces and . _ - : @ + /
    """
    if not _INSTANCE_NAME.fullmatch(name):
        raise ValueError(
            f"an instance name is 1 to {INSTANCE_NAME_MAX_CHARS} letters, digits, single "
            "spaces and . _ - : @ + /"
        )
    return name


InstanceName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=INSTANCE_NAME_MAX_CHARS),
    AfterValidator(check_instance_name),
]


# Instance labels (environment, cluster): keys as tag keys (quanta.analysis.tags: lower case,
# name-like), values short text, a handful per instance.
LabelKey = Annotated[
    str, StringConstraints(pattern=r"^[a-z_][a-z0-9_.\-]*$", min_length=1, max_length=32)
]
LabelValue = Annotated[str, StringConstraints(min_length=1, max_length=100)]
Labels = Annotated[dict[LabelKey, LabelValue], Field(max_length=20)]
