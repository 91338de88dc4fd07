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
import zlib
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from quanta.wire import ExamplePolicyName, IngestBatchIn
from quanta_agent.policy import ExamplePolicy

# Level 1: a third of level 5's CPU on the monitored host for 20% more bytes (measured on
# bench/_slowlog_corpus.py batches).
GZIP_LEVEL = 1
# zlib's window bits for a gzip header and trailer (16 + the largest window, as gzip writes).
_GZIP_WBITS = 16 + zlib.MAX_WBITS


def policy_name(policy: ExamplePolicy) -> ExamplePolicyName:
    """The wire's name of an example policy (the enum's values are the wire's names)."""
    return cast(ExamplePolicyName, str(policy.value))


Model = TypeVar("Model", bound=BaseModel)
# BaseModel's slots, set as model_construct sets them.
_SLOTS: Mapping[str, Any] = vars(BaseModel)
_set_fields = _SLOTS["__pydantic_fields_set__"].__set__
_set_extra = _SLOTS["__pydantic_extra__"].__set__
_set_private = _SLOTS["__pydantic_private__"].__set__


def construct_row(model: type[Model], fields: dict[str, Any]) -> Model:
    """``model.model_construct(**fields)`` for a row model of many (an example, a pick): the
    same object, members ``fields`` set and nothing validated, without model_construct's
    loop over every declared field for its alias and default (9 us against 4 us a row;
    a 25,000-statement batch has some 5,000 picks of three models each). The model's
    defaults are not filled in: the agent only serialises it (members set only).
    tests/agent/test_wire.py checks it gives what model_construct gives."""
    row = model.__new__(model)
    object.__setattr__(row, "__dict__", fields)
    _set_fields(row, set(fields))
    _set_extra(row, None)
    _set_private(row, None)
    return row


def to_json(model: BaseModel, *, exclude: set[str] | None = None) -> bytes:
    """The members of a wire model that were set (but ``exclude``), as compact JSON."""
    return model.__pydantic_serializer__.to_json(model, exclude_unset=True, exclude=exclude)


def gzip_parts(*parts: bytes | memoryview) -> bytes:
    """The gzip stream of the parts joined, compressed a part at a time: the parts are never
    copied into one (a 25,000-statement batch's JSON is some 2 MB, and the agent's import
    peaks while it ships one)."""
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, _GZIP_WBITS)
    return b"".join([*map(compressor.compress, parts), compressor.flush()])


def encode_batch(batch: IngestBatchIn) -> bytes:
    """The gzip JSON body of a batch, as POSTed."""
    return gzip.compress(to_json(batch), GZIP_LEVEL)


def encode_rows(batch: Mapping[str, Any]) -> bytes:
    """The gzip JSON body of a collector's batch (performance_schema, statistics), whose
    rows the collectors build as plain JSON values; the server's models (quanta.wire)
    validate them, as tests/agent/test_perfschema.py and test_stats.py check."""
    return gzip.compress(json.dumps(batch, separators=(",", ":")).encode(), GZIP_LEVEL)
