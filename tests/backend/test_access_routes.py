"""Every API route declares its scope: a walk over all routes of the app proves it.

A route added later without a scope dependency fails here (it answers without a token),
and so does one whose scope check is broken (a token without its scope gets through).
"""

import re
from collections.abc import Iterator

import pytest
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from quanta.auth.models import ApiToken
from quanta.auth.service import SCOPES
from quanta.core.security import hash_token
from quanta.main import API_PREFIX

# Routes anyone may call: signing in and out, and how one can sign in.
PUBLIC = {
    ("POST", f"{API_PREFIX}/auth/login"),
    ("POST", f"{API_PREFIX}/auth/logout"),
    ("GET", f"{API_PREFIX}/auth/options"),
}
# Routes any valid credential may call, whatever its scopes.
ANY_CREDENTIAL = {("GET", f"{API_PREFIX}/me")}


def _dependency_calls(dependant: object) -> Iterator[object]:
    for dep in getattr(dependant, "dependencies", []):
        yield dep.call
        yield from _dependency_calls(dep)


def required_scope(route: RouteContext) -> str | None:
    """The scope a route's dependencies demand (the require_scope checker names it)."""
    scopes = {
        getattr(call, "required_scope", None) for call in _dependency_calls(route.dependant)
    } - {None}
    assert len(scopes) <= 1, f"{route.path} requires several scopes: {scopes}"
    return next(iter(scopes), None)


def api_endpoints(client: TestClient) -> list[tuple[str, str, str | None]]:
    """(method, path, required scope) of every /api/v1 route of the app, included routers'
    routes with their prefixes (iter_route_contexts flattens them as the app sees them)."""
    found = []
    for route in iter_route_contexts(client.app.routes):  # type: ignore[attr-defined]
        path = route.path or ""
        if isinstance(route.original_route, APIRoute) and path.startswith(API_PREFIX):
            for method in sorted(route.methods or ()):
                found.append((method, path, required_scope(route)))
    return found


def _concrete(path: str, value: str = "1") -> str:
    # A number is a valid int and a valid string for every path parameter.
    return re.sub(r"\{[^}]+\}", value, path)


@pytest.fixture
def scoped_tokens(session_factory: sessionmaker[Session]) -> dict[str, str]:
    """For each scope, a token holding every other non-admin scope (ingest bound to 'x')."""
    tokens = {}
    with session_factory.begin() as session:
        for scope in SCOPES:
            others = [s for s in SCOPES if s not in (scope, "admin")]
            secret = f"qnt_without_{scope}"
            session.add(
                ApiToken(
                    name=f"without-{scope}",
                    token_hash=hash_token(secret),
                    scopes=others,
                    instances=["x"],
                )
            )
            tokens[scope] = secret
    return tokens


def test_the_walk_sees_every_router(client: TestClient) -> None:
    paths = {path for _, path, _ in api_endpoints(client)}
    # A sanity check that the walk is not empty or partial: one route of each early router.
    for expected in ("/me", "/ingest", "/queries", "/instances", "/tokens", "/audit"):
        assert f"{API_PREFIX}{expected}" in paths
    assert len(paths) >= 25


def test_every_api_route_declares_a_scope(client: TestClient) -> None:
    undeclared = [
        (method, path)
        for method, path, scope in api_endpoints(client)
        if scope is None and (method, path) not in PUBLIC | ANY_CREDENTIAL
    ]
    assert undeclared == [], "routes without require_scope(...): add ReadPrincipal etc."


def test_no_api_route_answers_without_credentials(client: TestClient) -> None:
    anonymous = TestClient(client.app)
    answers = {}
    for method, path, _scope in api_endpoints(client):
        if (method, path) in PUBLIC:
            continue
        response = anonymous.request(method, _concrete(path))
        answers[(method, path)] = response.status_code
        assert "detail" in response.json()
    assert {key: code for key, code in answers.items() if code != 401} == {}
    assert len(answers) >= 25


def test_a_garbage_token_is_refused_everywhere(client: TestClient) -> None:
    stranger = TestClient(client.app, headers={"Authorization": "Bearer qnt_not_a_token"})
    wrong = {
        (method, path): code
        for method, path, _ in api_endpoints(client)
        if (method, path) not in PUBLIC
        and (code := stranger.request(method, _concrete(path)).status_code) != 401
    }
    assert wrong == {}


def test_a_token_without_the_routes_scope_gets_403(
    client: TestClient, scoped_tokens: dict[str, str]
) -> None:
    checked = {}
    for method, path, scope in api_endpoints(client):
        if scope is None:
            continue
        lacking = TestClient(
            client.app, headers={"Authorization": f"Bearer {scoped_tokens[scope]}"}
        )
        response = lacking.request(method, _concrete(path))
        checked[(method, path)] = (response.status_code, response.json().get("detail"))
    refused = {key: answer for key, answer in checked.items() if answer[0] != 403}
    assert refused == {}
    assert all("scope" in detail for _, detail in checked.values())
    # Every scope is exercised by at least one route.
    scopes_seen = {scope for _, _, scope in api_endpoints(client) if scope}
    assert scopes_seen == set(SCOPES)


def test_the_bootstrap_admin_passes_every_scope_check(client: TestClient) -> None:
    # The admin gets past authorization everywhere: whatever it gets, it is not 401/403.
    blocked = {
        (method, path): code
        for method, path, scope in api_endpoints(client)
        if scope is not None
        # An id nothing has: the walk must not revoke or delete what it is using.
        and (code := client.request(method, _concrete(path, "987654")).status_code) in (401, 403)
    }
    assert blocked == {}


def test_the_walk_catches_an_unguarded_route(client: TestClient) -> None:
    # The checks above would fail for a route added without a scope dependency.
    from fastapi import APIRouter

    leak = APIRouter(prefix=API_PREFIX)

    @leak.get("/leak")
    def leaky() -> dict[str, str]:
        return {"secret": "yes"}

    client.app.include_router(leak)  # type: ignore[attr-defined]
    endpoints = api_endpoints(client)
    assert ("GET", f"{API_PREFIX}/leak", None) in endpoints
    undeclared = [(m, p) for m, p, scope in endpoints if scope is None]
    assert ("GET", f"{API_PREFIX}/leak") in undeclared


def test_no_write_route_lets_a_viewer_or_a_read_token_through(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    # Every route that changes something (any method but GET/HEAD), from the app's own
    # routes: a signed-in viewer (with the CSRF token, so the scope check is what refuses)
    # and a token with only `read` both get 403 naming the scope they lack.
    from tests.backend.test_access_login import browser, make_user, sign_in

    with session_factory.begin() as session:
        session.add(ApiToken(name="reader", token_hash=hash_token("qnt_reader"), scopes=["read"]))
    reader = TestClient(client.app, headers={"Authorization": "Bearer qnt_reader"})
    make_user(client, "vic", "viewer")
    viewer = browser(client)
    csrf = sign_in(viewer, "vic")
    writes = [
        (method, path, scope)
        for method, path, scope in api_endpoints(client)
        if method not in ("GET", "HEAD") and (method, path) not in PUBLIC
    ]
    answers = {}
    for method, path, scope in writes:
        for who, caller, headers in (
            ("read token", reader, {}),
            ("viewer", viewer, {"X-CSRF-Token": csrf}),
        ):
            response = caller.request(method, _concrete(path), headers=headers, json={})
            answers[(who, method, path)] = (response.status_code, response.json()["detail"])
            expected = (
                f"This token lacks the '{scope}' scope."
                if who == "read token"
                else f"Signed in as 'vic' (viewer): this needs the '{scope}' permission"
            )
            status, detail = answers[(who, method, path)]
            assert (status, detail[: len(expected)]) == (403, expected), (who, method, path)
    assert len(writes) >= 24  # 26 write routes today, sign-in and sign-out aside
    assert len(answers) == 2 * len(writes)
    assert ("PATCH", f"{API_PREFIX}/suggestions/{{suggestion_id}}", "diagnose") in writes
