"""Every place that names the sources agrees with the one registry (analysis/sources.py): the
agent's config and checks, the ingest wire format, the instances API and the query reads."""

from typing import get_args

from quanta import wire as ingest_schemas
from quanta.analysis.sources import (
    DEFAULT_PRIMARY_SOURCE,
    QUERY_SOURCES,
    SOURCES,
    QuerySourceName,
    SourceName,
)
from quanta.instances import schemas as instances_schemas
from quanta_agent import checks
from quanta_agent.config import Source


def test_the_registry_is_the_designed_list() -> None:
    assert SOURCES == ("slowlog", "perfschema", "stats")
    assert QUERY_SOURCES == ("slowlog", "perfschema")
    assert set(QUERY_SOURCES) < set(SOURCES)
    assert DEFAULT_PRIMARY_SOURCE in QUERY_SOURCES


def test_the_agent_collects_the_registry_sources() -> None:
    assert tuple(Source) == SOURCES
    assert checks.CheckTarget.__dataclass_fields__["sources"].default == SOURCES


def test_the_wire_and_the_api_take_their_source_names_from_the_registry() -> None:
    assert ingest_schemas.IngestBatchIn.model_fields["source"].annotation is SourceName
    assert tuple(ingest_schemas._FIELDS_BY_SOURCE) == SOURCES
    primary = instances_schemas.InstanceUpdate.model_fields["primary_source"].annotation
    assert QuerySourceName in get_args(primary)
