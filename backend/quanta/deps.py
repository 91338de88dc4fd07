"""FastAPI dependencies shared by every router, as `Annotated` aliases."""

import hmac
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi.routing import iter_route_contexts
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel
from sqlalchemy.orm import Session

from quanta.audit import service as audit
from quanta.auth.models import TokenKind
from quanta.auth.service import Principal, authenticate, csrf_token_for, scope_refusal
from quanta.core.config import Settings
from quanta.core.db import session_scope


class ErrorDetail(BaseModel):
    """Every error body: a message a person can act on."""

    detail: str


# Declared on every router that needs a token, so clients see these answers in the schema.
AUTH_RESPONSES: dict[int | str, dict[str, object]] = {
    401: {"model": ErrorDetail, "description": "Missing, unknown or revoked API token."},
    403: {
        "model": ErrorDetail,
        "description": "The token (a signed-in user: their role) lacks the required scope.",
    },
}

_bearer = HTTPBearer(auto_error=False, description="An API token (see `quanta run` output).")

# A signed-in UI user's session (POST /api/v1/auth/login sets it). Writes sent with this cookie
# must carry the session's CSRF token in this header (double-submit: the token is also in the
# readable CSRF cookie and in the login answer); bearer-token requests need no such header.
SESSION_COOKIE = "quanta_session"
CSRF_COOKIE = "quanta_csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_session_cookie = APIKeyCookie(
    name=SESSION_COOKIE,
    auto_error=False,
    description="A UI sign-in session; writes also need the X-CSRF-Token header.",
)


def get_settings_dep(request: Request) -> Settings:
    """The settings the app was created with."""
    settings: Settings = request.app.state.settings
    return settings


def get_session(request: Request) -> Iterator[Session]:
    """One session per request, committed when the handler returns without error."""
    with session_scope(request.app.state.session_factory) as session:
        yield session


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
# scope="function": the commit happens before the response is sent, so a client that reads
# right after a write (a UI refetching its list after a delete) sees it.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]


def get_principal(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    session_cookie: Annotated[str | None, Depends(_session_cookie)],
) -> Principal:
    """The caller behind the bearer token, else the session cookie; 401 when neither is valid.

    A write authenticated by the cookie alone must also send the session's CSRF token in
    X-CSRF-Token (403 otherwise): a browser attaches cookies to requests other sites make.
    """
    touch_after = timedelta(seconds=settings.token_touch_seconds)
    if credentials is None and session_cookie:
        principal = authenticate(
            session=session, token=session_cookie, kind=TokenKind.SESSION, touch_after=touch_after
        )
        if principal is None:
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "Your session has ended: sign in again.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if request.method not in SAFE_METHODS:
            sent = request.headers.get(CSRF_HEADER, "")
            if not hmac.compare_digest(sent.encode(), csrf_token_for(session_cookie).encode()):
                raise HTTPException(
                    status.HTTP_403_FORBIDDEN,
                    f"Missing or wrong {CSRF_HEADER} header: send the csrf_token from the "
                    f"sign-in answer (or the {CSRF_COOKIE} cookie) with every write.",
                )
        return principal
    if credentials is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "Missing API token: send 'Authorization: Bearer <token>' or sign in.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    principal = authenticate(
        session=session, token=credentials.credentials, touch_after=touch_after
    )
    if principal is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "Unknown or revoked API token.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return principal


AnyPrincipal = Annotated[Principal, Depends(get_principal)]


def require_scope(scope: str) -> Callable[..., object]:
    """A dependency that lets the request through only when the token has `scope`.

    The checker carries the scope as ``required_scope`` (the route-walking access test reads
    it). Admin writes that succeed are recorded in the audit log, in the request's own
    transaction, so every admin route is audited without code of its own: the action is the
    method and route (``DELETE /api/v1/instances/{instance_id}``), the target its path
    parameters, and a handler may add details in ``request.state.audit_detail``.
    """

    def check(principal: AnyPrincipal) -> Principal:
        if not principal.allows(scope):
            raise HTTPException(status.HTTP_403_FORBIDDEN, scope_refusal(principal, scope))
        return principal

    def check_and_audit(
        request: Request, session: SessionDep, principal: AnyPrincipal
    ) -> Iterator[Principal]:
        check(principal)
        yield principal  # an exception from the handler propagates: nothing is recorded
        if request.method in SAFE_METHODS:
            return
        audit.record(
            session=session,
            actor=principal.name,
            actor_token_id=principal.token_id,
            action=f"{request.method} {_route_template(request)}",
            target={k: str(v) for k, v in request.path_params.items()},
            detail=getattr(request.state, "audit_detail", None),
        )

    checker: Callable[..., object] = check_and_audit if scope == "admin" else check
    checker.required_scope = scope  # type: ignore[attr-defined]
    return checker


def _route_template(request: Request) -> str:
    """The matched route's full path template (/api/v1/instances/{instance_id}).

    The route in the request scope is the one its router declared (without the include
    prefixes), so the app's flattened routes are searched for the same endpoint.
    """
    route = request.scope.get("route")
    endpoint = getattr(route, "endpoint", None)
    for context in iter_route_contexts(request.app.routes):
        if context.endpoint is endpoint and request.method in (context.methods or ()):
            return context.path or request.url.path
    return request.url.path


ReadPrincipal = Annotated[Principal, Depends(require_scope("read"))]
IngestPrincipal = Annotated[Principal, Depends(require_scope("ingest"))]
AnnotatePrincipal = Annotated[Principal, Depends(require_scope("annotate"))]
# Requesting EXPLAIN, profile and suggestion runs: each run is audited when it ends.
DiagnosePrincipal = Annotated[Principal, Depends(require_scope("diagnose"))]
# scope="function" as the session's: the audit entry is added right after the handler returns,
# before the session commits, so the action and its entry commit together.
AdminPrincipal = Annotated[Principal, Depends(require_scope("admin"), scope="function")]
