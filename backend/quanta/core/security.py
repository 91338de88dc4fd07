"""Token generation and hashing: tokens are stored only as hashes."""

import hashlib
import secrets

TOKEN_PREFIX = "qnt_"


def generate_token() -> str:
    """A new random API token, recognisable by its prefix."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    """The stored form of a token. Tokens are high-entropy, so a plain SHA-256 suffices."""
    return hashlib.sha256(token.encode()).hexdigest()
