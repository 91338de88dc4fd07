"""Request and response bodies of the auth endpoints (sign-in, tokens, users)."""

from datetime import datetime

from pydantic import BaseModel, Field

from quanta.auth.models import Role

NAME_MAX = 100


class WhoAmI(BaseModel):
    """The caller's token name and scopes; for a signed-in user also who and the CSRF token."""

    name: str
    scopes: list[str]
    user: str | None = Field(default=None, description="The signed-in user, for a session.")
    role: Role | None = Field(default=None, description="viewer, operator or admin, for a session.")
    csrf_token: str | None = Field(
        default=None,
        description="For a cookie session: send it as X-CSRF-Token with every write.",
    )


class LoginIn(BaseModel):
    """A user name and password."""

    name: str = Field(min_length=1, max_length=NAME_MAX)
    password: str = Field(min_length=1, max_length=1024)


class SignInOptions(BaseModel):
    """How one can sign in now: the sign-in page leads with what works."""

    password: bool = Field(
        description="Whether any user can sign in with a name and password; false until "
        "`quanta user create` or an admin adds one (sign in with the admin token then)."
    )


class LoginOut(BaseModel):
    """A new session: the cookie is set; writes must send ``csrf_token`` as X-CSRF-Token."""

    user: str
    role: Role
    csrf_token: str
    expires_at: datetime


class TokenCreate(BaseModel):
    """A new API token's name, scopes and, for ingest, the instances it may feed."""

    name: str = Field(min_length=1, max_length=NAME_MAX)
    scopes: list[str] = Field(
        min_length=1,
        max_length=5,
        description="ingest, annotate, read, diagnose (request EXPLAIN/profile/suggestion "
        "runs), admin",
    )
    instances: list[str] | None = Field(
        default=None,
        max_length=1000,
        description="Instance names an ingest token may send batches for (required for ingest).",
    )


class TokenOut(BaseModel):
    """An API token as listed: never its secret."""

    id: int
    name: str
    scopes: list[str]
    instances: list[str] | None
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class TokenCreated(TokenOut):
    """A token just created; ``token`` is shown this once and cannot be read again."""

    token: str


PASSWORD_MAX = 1024


class UserCreate(BaseModel):
    """A new UI user."""

    name: str = Field(min_length=1, max_length=NAME_MAX)
    password: str = Field(min_length=1, max_length=PASSWORD_MAX)
    role: Role = Field(
        description="viewer (reads), operator (reads and requests diagnostics) or admin"
    )


class UserUpdate(BaseModel):
    """The fields to change: a role, and/or disabled (true ends their sessions at once)."""

    role: Role | None = None
    disabled: bool | None = None


class PasswordReset(BaseModel):
    """A new password; leave it out (or null) to have one generated and shown once."""

    password: str | None = Field(default=None, min_length=1, max_length=PASSWORD_MAX)


class UserOut(BaseModel):
    """A UI user (never the password hash)."""

    id: int
    name: str
    role: Role
    created_at: datetime
    last_login_at: datetime | None
    disabled_at: datetime | None = Field(description="Set while the account is disabled.")
    live_sessions: int = Field(description="Sessions that can still be used.")


class PasswordResetOut(BaseModel):
    """The password was changed and the user's sessions ended."""

    user: UserOut
    generated_password: str | None = Field(
        description="The generated password, shown this once (null when you set one)."
    )
    sessions_ended: int


class SessionsEnded(BaseModel):
    """How many of the user's sessions were ended."""

    sessions_ended: int
