"""HTTP endpoints of credentials: who am I, sign in/out, API tokens and users (admin)."""

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Body, Request, Response, status
from fastapi.responses import JSONResponse

from quanta.auth import service
from quanta.auth.models import ApiToken, Role, User
from quanta.auth.schemas import (
    LoginIn,
    LoginOut,
    PasswordReset,
    PasswordResetOut,
    SessionsEnded,
    SignInOptions,
    TokenCreate,
    TokenCreated,
    TokenOut,
    UserCreate,
    UserOut,
    UserUpdate,
    WhoAmI,
)
from quanta.core.http import client_address, cookies_secure, rate_limit
from quanta.deps import (
    AUTH_RESPONSES,
    CSRF_COOKIE,
    SESSION_COOKIE,
    AdminPrincipal,
    AnyPrincipal,
    ErrorDetail,
    SessionDep,
    SettingsDep,
)

router = APIRouter(tags=["auth"], responses=AUTH_RESPONSES)
# Sign-in and sign-out need no credentials: their own router, without the 401/403 answers.
public_router = APIRouter(tags=["auth"])

RATE_LIMITED: dict[int | str, dict[str, object]] = {
    429: {"model": ErrorDetail, "description": "Too many attempts; see Retry-After."}
}


@router.get("/me", operation_id="whoami")
def whoami(request: Request, principal: AnyPrincipal) -> WhoAmI:
    """The token's name and scopes: lets a client check a token before using it.

    For a signed-in user (session cookie) also the user, role and the CSRF token to send as
    X-CSRF-Token with writes, so a reloaded page can pick its session up again.
    """
    cookie = request.cookies.get(SESSION_COOKIE)
    signed_in = principal.user_id is not None and cookie is not None
    return WhoAmI(
        name=principal.name,
        scopes=sorted(principal.scopes),
        user=principal.name if principal.user_id is not None else None,
        role=service.role_of(principal) if principal.user_id is not None else None,
        csrf_token=service.csrf_token_for(cookie) if signed_in and cookie else None,
    )


@public_router.get("/auth/options", operation_id="sign_in_options")
def sign_in_options(session: SessionDep) -> SignInOptions:
    """How one can sign in now (public: the sign-in page asks before anyone is signed in)."""
    return SignInOptions(password=service.password_sign_in_available(session=session))


@public_router.post(
    "/auth/login",
    operation_id="login",
    response_model=LoginOut,
    responses={
        401: {"model": ErrorDetail, "description": "Unknown user name or wrong password."},
        403: {"model": ErrorDetail, "description": "The account is disabled."},
        **RATE_LIMITED,
    },
)
def login(
    body: LoginIn, request: Request, response: Response, session: SessionDep, settings: SettingsDep
) -> LoginOut | JSONResponse:  # the JSONResponse: a refusal
    """Sign in: sets the HttpOnly session cookie and the readable CSRF cookie.

    Every write made with the cookie must send the returned csrf_token as X-CSRF-Token.
    """
    # No limit per user name alone: anyone could then lock the real user out by failing on
    # purpose. Attempts are limited per (name, client address), so an attacker's misses spend
    # only their own bucket, and per address (a higher limit) against one address trying many
    # names. An attacker with many addresses still gets few guesses per address, each an
    # argon2 verification, and every failure lands in the audit log.
    address = client_address(request)
    rate_limit(request, "login_address", f"addr:{address}")
    rate_limit(request, "login", f"user:{body.name.lower()}|addr:{address}")
    max_age = timedelta(seconds=settings.session_max_age_seconds)
    try:
        signed = service.sign_in(
            session=session, name=body.name, password=body.password, max_age=max_age
        )
    except service.InvalidCredentials as exc:
        # Answered, not raised: the request's transaction commits, with the failure recorded.
        service.record_failed_sign_in(session=session, name=body.name, client=address)
        return JSONResponse({"detail": exc.message}, status_code=exc.status_code)
    secure = cookies_secure(request, settings)
    for name, value, httponly in (
        (SESSION_COOKIE, signed.secret, True),
        (CSRF_COOKIE, signed.csrf_token, False),  # the page reads it to send X-CSRF-Token
    ):
        response.set_cookie(
            name,
            value,
            max_age=settings.session_max_age_seconds,
            path="/",
            secure=secure,
            httponly=httponly,
            samesite="strict",
        )
    return LoginOut(
        user=signed.user.name,
        role=signed.user.role,
        csrf_token=signed.csrf_token,
        expires_at=signed.expires_at,
    )


@public_router.post("/auth/logout", operation_id="logout", status_code=status.HTTP_204_NO_CONTENT)
def logout(request: Request, session: SessionDep) -> Response:
    """Sign out: ends the cookie's session and clears the cookies (always succeeds)."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        service.sign_out(session=session, secret=cookie)
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    response.delete_cookie(SESSION_COOKIE, path="/", samesite="strict")
    response.delete_cookie(CSRF_COOKIE, path="/", samesite="strict")
    return response


TOKEN_NOT_FOUND: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorDetail, "description": "No API token or session with this id."}
}
BAD_TOKEN: dict[int | str, dict[str, object]] = {
    422: {
        "model": ErrorDetail,
        "description": "Unknown scopes, or an ingest token without instances.",
    }
}


@router.get("/tokens", operation_id="list_tokens")
def list_tokens(session: SessionDep, _principal: AdminPrincipal) -> list[TokenOut]:
    """Every API token with its scopes and last use; secrets are never shown again."""
    return [_token_out(row) for row in service.list_tokens(session=session)]


@router.post(
    "/tokens",
    operation_id="create_token",
    status_code=status.HTTP_201_CREATED,
    responses=BAD_TOKEN,
)
def create_token(
    body: TokenCreate, request: Request, session: SessionDep, _principal: AdminPrincipal
) -> TokenCreated:
    """Create an API token; the answer holds its secret, shown this once only."""
    new = service.create_token(
        session=session, name=body.name, scopes=body.scopes, instances=body.instances
    )
    request.state.audit_detail = {
        "token_id": new.row.id,
        "name": new.row.name,
        "scopes": new.row.scopes,
        "instances": new.row.instances,
    }
    return TokenCreated(**_token_out(new.row).model_dump(), token=new.secret)


@router.delete(
    "/tokens/{token_id}",
    operation_id="revoke_token",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={
        **TOKEN_NOT_FOUND,
        409: {"model": ErrorDetail, "description": "It is the token making the request."},
    },
)
def revoke_token(
    token_id: int, request: Request, session: SessionDep, principal: AdminPrincipal
) -> Response:
    """Revoke an API token or a sign-in session: it stops working at once (twice is fine)."""
    row = service.revoke_token(
        session=session, token_id=token_id, caller_token_id=principal.token_id
    )
    request.state.audit_detail = {"name": row.name, "kind": row.kind}
    if row.user_id is not None:
        request.state.audit_detail["user_id"] = row.user_id
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/users", operation_id="list_users")
def list_users(session: SessionDep, _principal: AdminPrincipal) -> list[UserOut]:
    """Every UI user, by name, with whether they are disabled and their live sessions."""
    return [
        _user_out(item.user, item.live_sessions)
        for item in service.list_users_with_sessions(session=session)
    ]


@router.post(
    "/users",
    operation_id="create_user",
    status_code=status.HTTP_201_CREATED,
    responses={
        409: {"model": ErrorDetail, "description": "The name is taken."},
        422: {"model": ErrorDetail, "description": "Unknown role or too short a password."},
    },
)
def create_user(
    body: UserCreate,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    _principal: AdminPrincipal,
) -> UserOut:
    """Create a UI user who signs in with a name and password (role viewer, operator or admin)."""
    user = service.create_user(
        session=session,
        name=body.name,
        password=body.password,
        role=body.role,
        min_password_length=settings.password_min_length,
    )
    request.state.audit_detail = {"user_id": user.id, "name": user.name, "role": user.role}
    return _user_out(user, 0)


USER_NOT_FOUND: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorDetail, "description": "No user with this id."}
}
LAST_ADMIN: dict[int | str, dict[str, object]] = {
    409: {"model": ErrorDetail, "description": "It would leave no active admin user."}
}


@router.patch(
    "/users/{user_id}",
    operation_id="update_user",
    responses={**USER_NOT_FOUND, **LAST_ADMIN},
)
def update_user(
    user_id: int,
    body: UserUpdate,
    request: Request,
    session: SessionDep,
    _principal: AdminPrincipal,
) -> UserOut:
    """Change a user's role and/or disable (their sessions end at once) or enable them."""
    change = service.update_user(
        session=session, user_id=user_id, role=body.role, disabled=body.disabled
    )
    request.state.audit_detail = change.detail
    return _user_out(change.user, change.live_sessions)


@router.post(
    "/users/{user_id}/password",
    operation_id="reset_user_password",
    responses={
        **USER_NOT_FOUND,
        422: {"model": ErrorDetail, "description": "Too short a password."},
    },
)
def reset_user_password(
    user_id: int,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    _principal: AdminPrincipal,
    body: Annotated[PasswordReset | None, Body()] = None,
) -> PasswordResetOut:
    """Set a user's password, or generate one (no body: shown once); their sessions end."""
    change = service.reset_password(
        session=session,
        user_id=user_id,
        password=body.password if body else None,
        min_password_length=settings.password_min_length,
    )
    request.state.audit_detail = change.detail
    return PasswordResetOut(
        user=_user_out(change.user, 0),
        generated_password=change.generated_password,
        sessions_ended=change.sessions_ended,
    )


@router.delete(
    "/users/{user_id}/sessions", operation_id="end_user_sessions", responses=USER_NOT_FOUND
)
def end_user_sessions(
    user_id: int, request: Request, session: SessionDep, _principal: AdminPrincipal
) -> SessionsEnded:
    """Sign a user out everywhere: every live session of theirs stops working at once."""
    change = service.end_sessions(session=session, user_id=user_id)
    request.state.audit_detail = change.detail
    return SessionsEnded(sessions_ended=change.sessions_ended)


@router.delete(
    "/users/{user_id}",
    operation_id="delete_user",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={**USER_NOT_FOUND, **LAST_ADMIN},
)
def delete_user(
    user_id: int, request: Request, session: SessionDep, _principal: AdminPrincipal
) -> Response:
    """Delete a user: they can no longer sign in and their sessions end at once."""
    change = service.delete_user(session=session, user_id=user_id)
    request.state.audit_detail = change.detail
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _token_out(row: ApiToken) -> TokenOut:
    return TokenOut(
        id=row.id,
        name=row.name,
        scopes=row.scopes,
        instances=row.instances,
        created_at=row.created_at,
        last_used_at=row.last_used_at,
        revoked_at=row.revoked_at,
    )


def _user_out(user: User, live_sessions: int) -> UserOut:
    return UserOut(
        id=user.id,
        name=user.name,
        role=Role(user.role),
        created_at=user.created_at,
        last_login_at=user.last_login_at,
        disabled_at=user.disabled_at,
        live_sessions=live_sessions,
    )
