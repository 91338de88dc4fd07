"""HTTP endpoints of agent health."""

from fastapi import APIRouter

from quanta.agents import service
from quanta.agents.schemas import AgentSourceOut
from quanta.core.db import utcnow
from quanta.deps import AUTH_RESPONSES, ReadPrincipal, SessionDep, SettingsDep

router = APIRouter(tags=["agents"], responses=AUTH_RESPONSES)


@router.get("/agents", operation_id="list_agent_sources")
def list_agent_sources(
    session: SessionDep, settings: SettingsDep, principal: ReadPrincipal
) -> list[AgentSourceOut]:
    """Per instance and source: the last batch, its lag, the agent's version, host and spool,
    its last error (admins only) and whether it is reporting, failing or stopped."""
    return service.list_sources(
        session=session,
        now=utcnow(),
        silence_seconds=settings.agent_silence_seconds,
        with_errors=principal.allows("admin"),
    )
