"""Response bodies of the auth endpoints."""

from pydantic import BaseModel


class WhoAmI(BaseModel):
    """The caller's token name and scopes."""

    name: str
    scopes: list[str]
