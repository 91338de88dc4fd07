"""Statements on api_tokens."""

from sqlalchemy import select
from sqlalchemy.orm import Session

from quanta.auth.models import ApiToken


def find_active_by_hash(session: Session, token_hash: str) -> ApiToken | None:
    """The unrevoked token with this hash, if any."""
    stmt = select(ApiToken).where(ApiToken.token_hash == token_hash, ApiToken.revoked_at.is_(None))
    return session.scalars(stmt).one_or_none()


def find_by_hash(session: Session, token_hash: str) -> ApiToken | None:
    """The token with this hash, revoked or not."""
    return session.scalars(select(ApiToken).where(ApiToken.token_hash == token_hash)).one_or_none()
