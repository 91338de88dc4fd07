"""HTTP endpoints of table and index statistics."""

from datetime import timedelta

from fastapi import APIRouter

from quanta.core.db import utcnow
from quanta.deps import AUTH_RESPONSES, ErrorDetail, ReadPrincipal, SessionDep, SettingsDep
from quanta.statistics import service
from quanta.statistics.schemas import IndexReviewOut

router = APIRouter(tags=["tables"], responses=AUTH_RESPONSES)


@router.get(
    "/instances/{instance_id}/index-review",
    operation_id="review_indexes",
    responses={404: {"model": ErrorDetail, "description": "No such instance."}},
)
def review_indexes(
    instance_id: int, session: SessionDep, settings: SettingsDep, _principal: ReadPrincipal
) -> IndexReviewOut:
    """Duplicate, redundant and unused existing indexes of the instance's snapshotted tables."""
    return service.review_indexes(
        session=session,
        instance_id=instance_id,
        min_observed=timedelta(days=settings.index_unused_min_days),
        now=utcnow(),
    )
