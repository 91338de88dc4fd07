"""Use cases of administering instances that need the metric store as well as the registry.

The instances domain is the registry every other domain reads (lookups, connection options),
below the metric store: the queries domain joins its bucket reads to the instances table.
Changing an instance and testing its connection also need figures of the metric store (has
the slow log reported, which schemas its statements used), so they are composed here, above
both, and the instances API lives here too; ``quanta.instances`` imports nothing of
``quanta.queries``.
"""

from datetime import timedelta

from sqlalchemy.orm import Session

from quanta.analysis.sources import DEFAULT_PRIMARY_SOURCE
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.instances import service as instances
from quanta.instances.schemas import ConnectionTestOut, InstanceUpdate
from quanta.queries import service as queries

__all__ = ["SCHEMAS_WINDOW", "check_connection", "update_instance"]

# test-connection checks SELECT on the schemas the instance's statements used this far back.
SCHEMAS_WINDOW = timedelta(days=7)


def update_instance(
    *, session: Session, settings: Settings, instance_id: int, data: InstanceUpdate
) -> instances.InstanceChanged:
    """Change the fields sent (quanta.instances.service.update_instance); a primary source
    set back to automatic is the slow log at once when the slow log has data."""
    automatic = "primary_source" in data.model_fields_set and data.primary_source is None
    slow_log_has_data = automatic and queries.has_source_data(
        session=session, instance_id=instance_id, source=DEFAULT_PRIMARY_SOURCE
    )
    return instances.update_instance(
        session=session,
        settings=settings,
        instance_id=instance_id,
        data=data,
        slow_log_has_data=slow_log_has_data,
    )


def check_connection(
    *, session: Session, settings: Settings, instance_id: int
) -> ConnectionTestOut:
    """Connect with the instance's DSN and report what the account may do on the schemas
    its statements ran in lately (EXPLAIN and snapshots read them)."""
    instance = instances.find_instance(session=session, instance_id=instance_id)
    schemas = queries.schemas_of_instance(
        session=session, instance_id=instance.id, since=utcnow() - SCHEMAS_WINDOW
    )
    return instances.check_connection(
        session=session, settings=settings, instance_id=instance.id, schemas=schemas
    )
