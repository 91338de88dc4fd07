"""Use cases around API tokens."""

from dataclasses import dataclass

from sqlalchemy.orm import Session

from quanta.auth import repository
from quanta.auth.models import ApiToken
from quanta.core.security import hash_token

SCOPES = ("ingest", "annotate", "read", "admin")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the token's id, name and scopes."""

    token_id: int
    name: str
    scopes: frozenset[str]

    def allows(self, scope: str) -> bool:
        """Admin may do everything; other tokens only what their scopes name."""
        return "admin" in self.scopes or scope in self.scopes


def authenticate(*, session: Session, token: str) -> Principal | None:
    """The principal behind a bearer token, or None when it is unknown or revoked."""
    row = repository.find_active_by_hash(session, hash_token(token))
    if row is None:
        return None
    return Principal(token_id=row.id, name=row.name, scopes=frozenset(row.scopes))


def ensure_admin_token(*, session: Session, token: str) -> None:
    """Register the bootstrap admin token unless a token with that value already exists."""
    token_hash = hash_token(token)
    if repository.find_by_hash(session, token_hash) is None:
        session.add(ApiToken(name="admin", token_hash=token_hash, scopes=["admin"]))
        session.flush()
