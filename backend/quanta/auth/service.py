"""Use cases around API tokens, users and their sign-in sessions."""

import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quanta.auth import repository
from quanta.auth.models import ApiToken, Role, TokenKind, User
from quanta.core.db import utcnow
from quanta.core.security import generate_token, hash_token

# diagnose: request EXPLAIN, profile and suggestion runs (they reach the monitored server).
SCOPES = ("ingest", "annotate", "read", "diagnose", "admin")
# What a signed-in user's role grants, as token scopes.
ROLE_SCOPES: dict[str, tuple[str, ...]] = {
    Role.VIEWER: ("read",),
    Role.OPERATOR: ("read", "diagnose"),
    Role.ADMIN: ("admin",),
}

_hasher = PasswordHasher()
# Verified against when the user name is unknown, so a wrong name takes as long as a wrong
# password and sign-in timing does not reveal which names exist.
_DUMMY_HASH = _hasher.hash("quanta-timing-equaliser")


class AuthError(Exception):
    """A request about credentials that cannot be honoured; the message says why."""


class InvalidToken(AuthError):
    """Scopes or instances that do not make a usable token."""


class TokenNotFound(AuthError, LookupError):
    """No API token with that id."""


class InvalidUser(AuthError):
    """A user name, role or password that cannot be accepted."""


class DuplicateUser(AuthError):
    """Another user already has that name."""


class InvalidCredentials(AuthError):
    """Unknown user name or wrong password (deliberately not saying which)."""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the token's id, name and scopes.

    ``instances`` is the set of instance names an ingest token is bound to (None: unbound);
    ``user_id`` is set when the caller is a signed-in user (the token is their session).
    """

    token_id: int
    name: str
    scopes: frozenset[str]
    instances: frozenset[str] | None = None
    user_id: int | None = None

    def allows(self, scope: str) -> bool:
        """Admin may do everything; other tokens only what their scopes name."""
        return "admin" in self.scopes or scope in self.scopes

    def may_ingest_for(self, instance: str) -> bool:
        """Whether this caller may send batches for the instance called `instance`."""
        return "admin" in self.scopes or self.instances is None or instance in self.instances


@dataclass(frozen=True, slots=True)
class NewToken:
    """A token just created: the row and its secret, which is shown this once only."""

    row: ApiToken
    secret: str


@dataclass(frozen=True, slots=True)
class SignIn:
    """A new sign-in session: the cookie's secret, its CSRF token, and when it ends."""

    user: User
    secret: str
    csrf_token: str
    expires_at: datetime


def authenticate(
    *,
    session: Session,
    token: str,
    kind: TokenKind | None = None,
    touch_after: timedelta = timedelta(seconds=60),
    now: datetime | None = None,
) -> Principal | None:
    """The principal behind a token, or None when it is unknown, revoked or expired.

    ``kind`` restricts which tokens count (the session cookie only carries sessions). The
    token's last_used_at is written at most once per ``touch_after``, so a busy agent does
    not turn every request into a write.
    """
    now = now or utcnow()
    row = repository.find_active_by_hash(session, hash_token(token))
    if row is None or (kind is not None and row.kind != kind):
        return None
    if row.expires_at is not None and row.expires_at <= now:
        return None
    scopes = frozenset(row.scopes)
    if row.user_id is not None:
        user = session.get(User, row.user_id)
        if user is None:
            return None
        # The role is read on every request, so a changed role applies at once.
        scopes = frozenset(ROLE_SCOPES.get(user.role, ()))
    if row.last_used_at is None or now - row.last_used_at >= touch_after:
        row.last_used_at = now
    return Principal(
        token_id=row.id,
        name=row.name,
        scopes=scopes,
        instances=None if row.instances is None else frozenset(row.instances),
        user_id=row.user_id,
    )


def ensure_admin_token(*, session: Session, token: str) -> None:
    """Register the bootstrap admin token unless a token with that value already exists."""
    token_hash = hash_token(token)
    if repository.find_by_hash(session, token_hash) is None:
        session.add(ApiToken(name="admin", token_hash=token_hash, scopes=["admin"]))
        session.flush()


# ---------------------------------------------------------------------------- API tokens


def create_token(
    *, session: Session, name: str, scopes: list[str], instances: list[str] | None = None
) -> NewToken:
    """Create an API token; an ingest-only token must name the instances it may feed."""
    wanted = sorted(set(scopes))
    unknown = [s for s in wanted if s not in SCOPES]
    if not wanted or unknown:
        raise InvalidToken(
            f"Unknown scope(s) {', '.join(unknown) or '(none given)'}: use {', '.join(SCOPES)}."
        )
    bound = sorted(set(instances)) if instances else None
    if bound is not None and "ingest" not in wanted:
        raise InvalidToken("Instances bind ingest tokens: add the 'ingest' scope or drop them.")
    if bound is None and "ingest" in wanted and "admin" not in wanted:
        raise InvalidToken(
            "An ingest token must name the instance(s) it may send batches for "
            "(instances: [...], or --instance NAME on the command line)."
        )
    secret = generate_token()
    row = ApiToken(
        name=name, token_hash=hash_token(secret), scopes=wanted, instances=bound, kind=TokenKind.API
    )
    session.add(row)
    session.flush()
    return NewToken(row=row, secret=secret)


def list_tokens(*, session: Session) -> list[ApiToken]:
    """Every API token (never its secret), revoked ones included."""
    return repository.list_api_tokens(session)


def revoke_token(
    *, session: Session, token_id: int, caller_token_id: int | None = None
) -> ApiToken:
    """Revoke an API token; revoking it again changes nothing.

    A caller cannot revoke the token it is calling with: that locks the last admin out.
    """
    row = repository.find_api_token(session, token_id)
    if row is None:
        raise TokenNotFound(f"No API token with id {token_id}: GET /api/v1/tokens lists them.")
    if token_id == caller_token_id:
        raise InvalidToken(
            "You cannot revoke the token you are using: revoke it with another admin token "
            "or `quanta token revoke ID`."
        )
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.flush()
    return row


# ------------------------------------------------------------------ users and sign-in


def create_user(
    *, session: Session, name: str, password: str, role: str, min_password_length: int
) -> User:
    """Create a UI user with an argon2 hash of their password."""
    name = name.strip()
    if not name:
        raise InvalidUser("A user name must not be empty.")
    if role not in ROLE_SCOPES:
        raise InvalidUser(f"Unknown role '{role}': use {' or '.join(ROLE_SCOPES)}.")
    if len(password) < min_password_length:
        raise InvalidUser(f"The password must have at least {min_password_length} characters.")
    if repository.find_user_by_name(session, name) is not None:
        raise DuplicateUser(f"A user called '{name}' exists already.")
    user = User(name=name, password_hash=_hasher.hash(password), role=role)
    try:
        with session.begin_nested():
            session.add(user)
    except IntegrityError as exc:
        raise DuplicateUser(f"A user called '{name}' exists already.") from exc
    return user


def list_users(*, session: Session) -> list[User]:
    """Every user, by name (never their password hash outside this module)."""
    return repository.list_users(session)


def sign_in(*, session: Session, name: str, password: str, max_age: timedelta) -> SignIn:
    """Check a name and password; on success open a session that lasts ``max_age``."""
    user = repository.find_user_by_name(session, name)
    if not _password_matches(user.password_hash if user else _DUMMY_HASH, password) or not user:
        raise InvalidCredentials("Unknown user name or wrong password.")
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = _hasher.hash(password)
    now = utcnow()
    user.last_login_at = now
    secret = generate_token()
    session.add(
        ApiToken(
            name=user.name,
            token_hash=hash_token(secret),
            scopes=list(ROLE_SCOPES[user.role]),
            kind=TokenKind.SESSION,
            user_id=user.id,
            expires_at=now + max_age,
            last_used_at=now,
        )
    )
    session.flush()
    return SignIn(
        user=user, secret=secret, csrf_token=csrf_token_for(secret), expires_at=now + max_age
    )


def sign_out(*, session: Session, secret: str) -> None:
    """End the session behind a cookie's secret (an unknown one is already signed out)."""
    row = repository.find_active_by_hash(session, hash_token(secret))
    if row is not None and row.kind == TokenKind.SESSION:
        row.revoked_at = utcnow()
        session.flush()


def purge_ended_sessions(*, session: Session, now: datetime) -> int:
    """Delete the rows of sessions that can no longer sign anyone in; returns how many.

    An ended session is worth nothing (its secret is refused either way); without this every
    sign-in would leave a row behind for good. Annotations keep their author's user id.
    """
    return repository.delete_ended_sessions(session, now=now)


def role_of(principal: Principal) -> str:
    """The role a signed-in user's scopes come from: the highest whose scopes they hold."""
    held = [role for role in Role if set(ROLE_SCOPES[role]) <= principal.scopes]
    return held[-1] if held else Role.VIEWER


def csrf_token_for(session_secret: str) -> str:
    """The CSRF token that belongs to a session: derived from its secret, so nothing is stored.

    Another site can make the browser send the (HttpOnly) cookie but can neither read it nor
    this value, so a write carrying the matching X-CSRF-Token header came from our own page.
    """
    return hmac.new(session_secret.encode(), b"quanta-csrf", hashlib.sha256).hexdigest()


def _password_matches(password_hash: str, password: str) -> bool:
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False
