"""NaN and Infinity in a JSON body: Python's JSON parser accepts them, JSON answers cannot
hold them. Every write route of the app (found by walking its routes, so a route added later
is covered) answers such a body with a 4xx that says what is wrong, never a 500."""

import json
from typing import Any

import pytest
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

from quanta.core.http import json_safe
from quanta.main import API_PREFIX

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
CONSTANTS = ("NaN", "Infinity", "-Infinity")
MISSING_ID = "987654"  # nothing has it: the walk must not delete what it is using


def write_routes(client: TestClient) -> list[tuple[str, str]]:
    """(method, path) of every write route under /api/v1."""
    found = []
    for route in iter_route_contexts(client.app.routes):  # type: ignore[attr-defined]
        path = route.path or ""
        if isinstance(route.original_route, APIRoute) and path.startswith(API_PREFIX):
            found += [(m, path) for m in sorted(route.methods or ()) if m in WRITE_METHODS]
    return found


def body_properties(client: TestClient, method: str, path: str) -> list[str] | None:
    """The properties of the route's JSON body schema; None when it takes no body."""
    spec = client.get(f"{API_PREFIX}/openapi.json").json()
    body = spec["paths"][path][method.lower()].get("requestBody")
    if body is None:
        return None
    schema = body["content"]["application/json"]["schema"]
    if "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return list(schema.get("properties", {}))


def poisoned_bodies(properties: list[str]) -> list[str]:
    """A bare constant, every property set to it at once, and each property alone."""
    bodies = []
    for constant in CONSTANTS:
        bodies.append(constant)
        bodies.append("{" + ", ".join(f'"{p}": {constant}' for p in properties) + "}")
        bodies += [f'{{"{p}": {constant}}}' for p in properties]
        bodies.append(f'{{"items": [1, {constant}], "nested": {{"x": {constant}}}}}')
    return bodies


def test_the_walk_finds_the_write_routes(client: TestClient) -> None:
    routes = set(write_routes(client))
    for expected in ("/auth/login", "/annotations", "/ingest", "/channels", "/tokens"):
        assert ("POST", f"{API_PREFIX}{expected}") in routes
    assert len(routes) >= 20


@pytest.mark.parametrize("anonymous", [False, True], ids=["admin", "anonymous"])
def test_nan_and_infinity_bodies_get_a_4xx_on_every_write_route(
    client: TestClient, anonymous: bool
) -> None:
    caller = TestClient(client.app) if anonymous else client
    answers: dict[tuple[str, str, str], int] = {}
    for method, path in write_routes(client):
        properties = body_properties(client, method, path)
        url = "/".join(MISSING_ID if part.startswith("{") else part for part in path.split("/"))
        for body in poisoned_bodies(properties or []):
            response = caller.request(
                method, url, content=body.encode(), headers={"Content-Type": "application/json"}
            )
            answers[(method, path, body)] = response.status_code
            if response.status_code >= 400:
                assert "detail" in response.json()
    server_errors = {key: code for key, code in answers.items() if code >= 500}
    assert server_errors == {}
    # Routes that take a body refuse every poisoned one (routes without one ignore it).
    accepted = {
        key: code
        for key, code in answers.items()
        if code < 400 and body_properties(client, key[0], key[1]) is not None
    }
    assert accepted == {}
    assert len(answers) >= 200


def test_a_nan_login_names_the_field(client: TestClient) -> None:
    response = TestClient(client.app).post(
        f"{API_PREFIX}/auth/login",
        content=b'{"name": NaN, "password": "x"}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "name"]
    assert error["input"] == "nan"


def test_an_infinite_annotation_time_names_the_field(client: TestClient) -> None:
    response = client.post(
        f"{API_PREFIX}/annotations",
        content=b'{"text": "deploy", "time": Infinity}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 422
    assert [e["loc"] for e in response.json()["detail"]] == [["body", "time"]]


def test_json_safe_keeps_finite_values() -> None:
    value: Any = {"a": [1.5, float("nan"), {"b": float("-inf")}], "c": (float("inf"), "x")}
    assert json_safe(value) == {"a": [1.5, "nan", {"b": "-inf"}], "c": ["inf", "x"]}
    json.dumps(json_safe(value), allow_nan=False)
