"""The ingest API's request and answer: the wire models (quanta.wire) with the server's
rules for the names that become identities (an instance's name, its labels)."""

from datetime import datetime

from pydantic import BaseModel, Field

from quanta import wire
from quanta.core.names import InstanceName, Labels
from quanta.ingest.models import BatchStatus
from quanta.wire import MAX_ROWS_PER_KIND

__all__ = ["MAX_ROWS_PER_KIND", "AgentStatusIn", "IngestBatchIn", "IngestBatchOut"]


# An agent's status report (quanta.wire.AgentStatusIn), its labels held to the rule the
# instances API applies. The wire model's docstring is the API's description.
class AgentStatusIn(wire.AgentStatusIn):
    __doc__ = wire.AgentStatusIn.__doc__

    labels: Labels | None = Field(
        default=None,
        description="The instance's labels from the agent's config: they replace the stored "
        "ones when they differ.",
    )


# A batch as the API takes it (quanta.wire.IngestBatchIn): the instance it names is created
# by that name, so the name must be one (quanta.core.names.InstanceName).
class IngestBatchIn(wire.IngestBatchIn):
    __doc__ = wire.IngestBatchIn.__doc__

    instance: InstanceName
    agent: AgentStatusIn | None = Field(
        default=None,
        description="The agent's own status for this source; a batch with it and no rows "
        "is a status report (nothing is stored but the status).",
    )


class IngestBatchOut(BaseModel):
    """Where a batch is: queued for the worker, or done."""

    batch_id: str
    status: BatchStatus
    events: int
    received_at: datetime
    processed_at: datetime | None
    error: str | None = Field(
        default=None, description="Why the worker could not process it (status failed)."
    )
