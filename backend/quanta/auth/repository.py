"""Statements on api_tokens and users."""

from datetime import datetime

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.orm import Session

from quanta.auth.models import ApiToken, TokenKind, User


def find_active_by_hash(session: Session, token_hash: str) -> ApiToken | None:
    """The unrevoked token with this hash, if any."""
    stmt = select(ApiToken).where(ApiToken.token_hash == token_hash, ApiToken.revoked_at.is_(None))
    return session.scalars(stmt).one_or_none()


def find_by_hash(session: Session, token_hash: str) -> ApiToken | None:
    """The token with this hash, revoked or not."""
    return session.scalars(select(ApiToken).where(ApiToken.token_hash == token_hash)).one_or_none()


def find_token(session: Session, token_id: int) -> ApiToken | None:
    """The API token or sign-in session with this id."""
    return session.get(ApiToken, token_id)


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


def find_user(session: Session, user_id: int) -> User | None:
    """The user with this id."""
    return session.get(User, user_id)


def count_active_admins(session: Session, *, admin_role: str) -> int:
    """How many users have the admin role and are not disabled."""
    stmt = select(func.count(User.id)).where(User.role == admin_role, User.disabled_at.is_(None))
    return int(session.scalar(stmt) or 0)


def any_active_user(session: Session) -> bool:
    """Whether any user is not disabled (someone can sign in with a password)."""
    stmt = select(User.id).where(User.disabled_at.is_(None)).limit(1)
    return session.scalar(stmt) is not None


def live_session_counts(session: Session, *, now: datetime) -> dict[int, int]:
    """User id -> how many of their sessions can still be used (unrevoked, unexpired)."""
    stmt = (
        select(ApiToken.user_id, func.count(ApiToken.id))
        .where(
            ApiToken.kind == TokenKind.SESSION,
            ApiToken.user_id.is_not(None),
            ApiToken.revoked_at.is_(None),
            ApiToken.expires_at > now,
        )
        .group_by(ApiToken.user_id)
    )
    return {user_id: int(count) for user_id, count in session.execute(stmt) if user_id is not None}


def revoke_sessions(session: Session, *, user_id: int, now: datetime, detach: bool = False) -> int:
    """Revoke the user's live sessions; returns how many. ``detach`` also unlinks every one of
    their session rows from the user (before the user is deleted: an ingest batch sent with a
    session still references its row, so the rows stay, revoked, until the purge)."""
    live = (
        update(ApiToken)
        .where(
            ApiToken.kind == TokenKind.SESSION,
            ApiToken.user_id == user_id,
            ApiToken.revoked_at.is_(None),
        )
        .values(revoked_at=now)
    )
    ended = int(session.execute(live).rowcount)  # type: ignore[attr-defined]
    if detach:
        session.execute(update(ApiToken).where(ApiToken.user_id == user_id).values(user_id=None))
    return ended


def delete_ended_sessions(session: Session, *, now: datetime) -> int:
    """Delete sign-in sessions that expired or were signed out; returns how many."""
    stmt = delete(ApiToken).where(
        ApiToken.kind == TokenKind.SESSION,
        or_(ApiToken.expires_at <= now, ApiToken.revoked_at.is_not(None)),
    )
    return int(session.execute(stmt).rowcount)  # type: ignore[attr-defined]
