"""Batches as the agent sends them: the wire models (quanta.wire) written as gzip JSON.

The agent builds every slow-log batch and status report as :class:`quanta.wire.
IngestBatchIn` with ``model_construct`` (no validation: the server validates) and writes
only the members it set, so an absent metric stays absent (unknown), never null or 0.
pydantic's serializer (Rust) writes the JSON: times in ISO 8601 (UTC as ``Z``), floats in
their shortest form, histograms in base64.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel

from quanta.wire import ExamplePolicyName, IngestBatchIn
from quanta_agent.policy import ExamplePolicy

# Level 1: a third of level 5's CPU on the monitored host for 20% more bytes (measured on
# bench/_slowlog_corpus.py batches).
GZIP_LEVEL = 1


def policy_name(policy: ExamplePolicy) -> ExamplePolicyName:
    """The wire's name of an example policy (the enum's values are the wire's names)."""
    return cast(ExamplePolicyName, str(policy.value))


def to_json(model: BaseModel, *, exclude: set[str] | None = None) -> bytes:
    """The members of a wire model that were set (but ``exclude``), as compact JSON."""
    return model.__pydantic_serializer__.to_json(model, exclude_unset=True, exclude=exclude)


def encode_batch(batch: IngestBatchIn) -> bytes:
    """The gzip JSON body of a batch, as POSTed."""
    return gzip.compress(to_json(batch), GZIP_LEVEL)


def encode_rows(batch: Mapping[str, Any]) -> bytes:
    """The gzip JSON body of a collector's batch (performance_schema, statistics), whose
    rows the collectors build as plain JSON values; the server's models (quanta.wire)
    validate them, as tests/agent/test_perfschema.py and test_stats.py check."""
    return gzip.compress(json.dumps(batch, separators=(",", ":")).encode(), GZIP_LEVEL)
