"""HTTP endpoints about the caller's own credentials."""

from fastapi import APIRouter

from quanta.auth.schemas import WhoAmI
from quanta.deps import AUTH_RESPONSES, AnyPrincipal

router = APIRouter(tags=["auth"], responses=AUTH_RESPONSES)


@router.get("/me", operation_id="whoami")
def whoami(principal: AnyPrincipal) -> WhoAmI:
    """The token's name and scopes: lets a client check a token before using it."""
    return WhoAmI(name=principal.name, scopes=sorted(principal.scopes))
