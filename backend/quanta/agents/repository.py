"""Statements of the agents' health rows."""

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from quanta.agents.models import AgentSource
from quanta.core.upsert import insert_for
from quanta.instances.models import Instance

KEY = ("instance_id", "source")


def upsert(session: Session, values: dict[str, Any]) -> None:
    """Insert the (instance, source) row, or update the given columns of the stored one."""
    insert = insert_for(session)(AgentSource).values(**values)
    changed = {name: insert.excluded[name] for name in values if name not in KEY}
    session.execute(insert.on_conflict_do_update(index_elements=list(KEY), set_=changed))


def with_instances(session: Session) -> list[tuple[AgentSource, str]]:
    """Every row with its instance's name, by instance name then source."""
    statement = (
        select(AgentSource, Instance.name)
        .join(Instance, Instance.id == AgentSource.instance_id)
        .order_by(Instance.name, AgentSource.source)
    )
    return [(row, name) for row, name in session.execute(statement)]
