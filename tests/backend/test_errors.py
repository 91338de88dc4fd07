"""The one error path: a domain error carries its HTTP status, one handler renders it."""

import pytest
from fastapi import FastAPI, HTTPException
from fastapi.testclient import TestClient

import quanta.main  # noqa: F401  (every router, so every domain error class, is loaded)
from quanta.advice import service as advice
from quanta.annotations import service as annotations
from quanta.auth import service as auth
from quanta.core.errors import QuantaError, quanta_error_handler
from quanta.diagnostics import service as diagnostics
from quanta.ingest import service as ingest
from quanta.instances import service as instances
from quanta.notify import service as notify
from quanta.purge import service as purge
from quanta.queries import service as queries
from quanta.queries import window
from quanta.tables import service as tables

# The statuses the routers used to map each error to, one by one; now carried by the class.
STATUS = [
    (advice.SuggestionNotFound, 404),
    (advice.InvalidStatusChange, 409),
    (advice.QueueUnavailable, 503),
    (annotations.InvalidAnnotation, 400),
    (annotations.AnnotationNotFound, 404),
    (annotations.NotAllowed, 403),
    (annotations.NothingToCompare, 409),
    (auth.InvalidToken, 422),
    (auth.TokenNotFound, 404),
    (auth.InvalidUser, 422),
    (auth.DuplicateUser, 409),
    (auth.UserNotFound, 404),
    (auth.LastAdmin, 409),
    (auth.InvalidCredentials, 401),
    (auth.DisabledUser, 403),
    (diagnostics.DiagnosticsError, 400),
    (diagnostics.NotFound, 404),
    (diagnostics.NotAllowed, 409),
    (diagnostics.Refused, 400),
    (ingest.PayloadTooLarge, 413),
    (ingest.InvalidPayload, 422),
    (ingest.BatchNotFound, 404),
    (ingest.InstanceNotAllowed, 403),
    (instances.InstanceNotFound, 404),
    (instances.DuplicateInstance, 409),
    (instances.InstanceHasData, 409),
    (instances.InvalidConnection, 422),
    (instances.NoConnection, 409),
    (notify.ChannelNotFound, 404),
    (notify.ChannelConflict, 409),
    (notify.InvalidChannel, 422),
    (purge.NothingToPurge, 404),
    (queries.QueryNotFound, 404),
    (queries.UnknownSortKey, 400),
    (window.InvalidRequest, 400),
    (window.InvalidRange, 400),
    (tables.TableNotSnapshotted, 404),
    (tables.InvalidTableName, 400),
]


@pytest.mark.parametrize(("error", "status"), STATUS, ids=lambda v: getattr(v, "__name__", v))
def test_each_domain_error_carries_the_status_its_router_gave_it(
    error: type[QuantaError], status: int
) -> None:
    assert error("why").status_code == status


def test_one_raise_may_override_the_status_of_its_class() -> None:
    # check_connection: a stored DSN that no longer works conflicts with the state (409).
    error = instances.InvalidConnection("stored DSN unreadable", status_code=409)
    assert (error.status_code, instances.InvalidConnection("x").status_code) == (409, 422)


def test_one_owner_for_instance_and_query_lookups() -> None:
    assert advice.InstanceNotFound is instances.InstanceNotFound
    assert advice.QueryNotFound is queries.QueryNotFound is tables.QueryNotFound


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


def test_every_domain_error_is_documented_and_a_client_or_availability_error() -> None:
    errors = {e for e in _subclasses(QuantaError) if e.__module__.startswith("quanta.")}
    assert len(errors) >= len(STATUS)
    for error in errors:
        assert error.__doc__, error
        assert error.status_code in {400, 401, 403, 404, 409, 413, 422, 503}, error


def _app() -> FastAPI:
    app = FastAPI()
    app.add_exception_handler(QuantaError, quanta_error_handler)

    @app.get("/domain")
    def domain() -> None:
        raise queries.QueryNotFound("No query with query_id 'NOPE'.")

    @app.get("/http")
    def http() -> None:
        raise HTTPException(404, "No query with query_id 'NOPE'.")

    return app


def test_the_handler_answers_exactly_what_an_http_exception_did() -> None:
    client = TestClient(_app())
    domain, http = client.get("/domain"), client.get("/http")
    assert domain.status_code == http.status_code == 404
    assert domain.content == http.content == b'{"detail":"No query with query_id \'NOPE\'."}'
    assert domain.headers["content-type"] == http.headers["content-type"]
