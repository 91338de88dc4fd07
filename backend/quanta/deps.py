"""FastAPI dependencies shared by every router, as `Annotated` aliases."""

from collections.abc import Callable, Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel
from sqlalchemy.orm import Session

from quanta.auth.service import Principal, authenticate
from quanta.core.config import Settings
from quanta.core.db import session_scope


class ErrorDetail(BaseModel):
    """Every error body: a message a person can act on."""

    detail: str


# Declared on every router that needs a token, so clients see these answers in the schema.
AUTH_RESPONSES: dict[int | str, dict[str, object]] = {
    401: {"model": ErrorDetail, "description": "Missing, unknown or revoked API token."},
    403: {"model": ErrorDetail, "description": "The token lacks the required scope."},
}

_bearer = HTTPBearer(auto_error=False, description="An API token (see `quanta run` output).")


def get_settings_dep(request: Request) -> Settings:
    """The settings the app was created with."""
    settings: Settings = request.app.state.settings
    return settings


def get_session(request: Request) -> Iterator[Session]:
    """One session per request, committed when the handler returns without error."""
    with session_scope(request.app.state.session_factory) as session:
        yield session


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
SessionDep = Annotated[Session, Depends(get_session)]


def get_principal(
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The caller behind the bearer token; 401 when there is none or it is invalid."""
    if credentials is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "Missing API token: send 'Authorization: Bearer <token>'.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    principal = authenticate(session=session, token=credentials.credentials)
    if principal is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "Unknown or revoked API token.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return principal


AnyPrincipal = Annotated[Principal, Depends(get_principal)]


def require_scope(scope: str) -> Callable[[Principal], Principal]:
    """A dependency that lets the request through only when the token has `scope`."""

    def check(principal: AnyPrincipal) -> Principal:
        if not principal.allows(scope):
            raise HTTPException(status.HTTP_403_FORBIDDEN, f"This token lacks the '{scope}' scope.")
        return principal

    return check


ReadPrincipal = Annotated[Principal, Depends(require_scope("read"))]
IngestPrincipal = Annotated[Principal, Depends(require_scope("ingest"))]
AnnotatePrincipal = Annotated[Principal, Depends(require_scope("annotate"))]
AdminPrincipal = Annotated[Principal, Depends(require_scope("admin"))]
