"""Statements on api_tokens and users."""

from datetime import datetime

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from quanta.auth.models import ApiToken, TokenKind, User


def find_active_by_hash(session: Session, token_hash: str) -> ApiToken | None:
    """The unrevoked token with this hash, if any."""
    stmt = select(ApiToken).where(ApiToken.token_hash == token_hash, ApiToken.revoked_at.is_(None))
    return session.scalars(stmt).one_or_none()


def find_by_hash(session: Session, token_hash: str) -> ApiToken | None:
    """The token with this hash, revoked or not."""
    return session.scalars(select(ApiToken).where(ApiToken.token_hash == token_hash)).one_or_none()


def find_api_token(session: Session, token_id: int) -> ApiToken | None:
    """The API token (not a sign-in session) with this id."""
    stmt = select(ApiToken).where(ApiToken.id == token_id, ApiToken.kind == TokenKind.API)
    return session.scalars(stmt).one_or_none()


def list_api_tokens(session: Session) -> list[ApiToken]:
    """Every API token, revoked ones included, oldest first; sign-in sessions are not listed."""
    stmt = select(ApiToken).where(ApiToken.kind == TokenKind.API).order_by(ApiToken.id)
    return list(session.scalars(stmt))


def find_user_by_name(session: Session, name: str) -> User | None:
    """The user with this name."""
    return session.scalars(select(User).where(User.name == name)).one_or_none()


def list_users(session: Session) -> list[User]:
    """Every user, by name."""
    return list(session.scalars(select(User).order_by(User.name)))


def delete_ended_sessions(session: Session, *, now: datetime) -> int:
    """Delete sign-in sessions that expired or were signed out; returns how many."""
    stmt = delete(ApiToken).where(
        ApiToken.kind == TokenKind.SESSION,
        or_(ApiToken.expires_at <= now, ApiToken.revoked_at.is_not(None)),
    )
    return int(session.execute(stmt).rowcount)  # type: ignore[attr-defined]
