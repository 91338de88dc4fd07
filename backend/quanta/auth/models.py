"""API tokens (stored hashed), UI users, and their sign-in sessions."""

from datetime import datetime
from enum import StrEnum

from sqlalchemy import JSON, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from quanta.core.db import Base, UTCDateTime, utcnow


class Role(StrEnum):
    """What a UI user may do, least first: viewers read; operators also request EXPLAIN,
    profile and suggestion runs (the ``diagnose`` scope); admins do everything."""

    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"


class TokenKind(StrEnum):
    """An API token made by an admin, or the secret behind a signed-in user's cookie."""

    API = "api"
    SESSION = "session"


class User(Base):
    """A person who signs in to the UI with a name and a password (argon2 hash)."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(10))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_login_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    # Set while an admin has disabled the account: it cannot sign in and its sessions fail.
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)


class ApiToken(Base):
    """A bearer token with scopes (ingest, annotate, read, admin), or a user's session.

    A session is a token row too (kind "session", ``user_id`` set, ``expires_at``), so what
    a signed-in user does is attributed exactly like what a token does (ingest batches and
    annotations reference api_tokens.id). ``instances`` binds an ingest token to the
    instance names it may send batches for; NULL means unbound (admin and older tokens).
    """

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    scopes: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    kind: Mapped[str] = mapped_column(String(10), default=TokenKind.API, server_default="api")
    instances: Mapped[list[str] | None] = mapped_column(JSON, default=None)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), default=None, index=True
    )
