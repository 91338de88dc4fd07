"""HTTP endpoints of annotations."""

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response, status

from quanta.annotations import service
from quanta.annotations.schemas import AnnotationImpact, AnnotationIn, AnnotationOut
from quanta.deps import (
    AUTH_RESPONSES,
    AnnotatePrincipal,
    ErrorDetail,
    ReadPrincipal,
    SessionDep,
    SettingsDep,
)
from quanta.queries.window import TimeWindow, resolve_window

router = APIRouter(tags=["annotations"], responses=AUTH_RESPONSES)

NOT_FOUND: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorDetail, "description": "No annotation with this id."}
}
BAD_REQUEST: dict[int | str, dict[str, object]] = {
    400: {"model": ErrorDetail, "description": "A value that cannot be accepted; see detail."}
}


def _window(
    settings: SettingsDep,
    from_: Annotated[
        str | None,
        Query(
            alias="from",
            description="Start: ISO 8601 or relative to now (now-24h, now-7d); default 24 h ago.",
        ),
    ] = None,
    to: Annotated[str | None, Query(description="End: ISO 8601 or relative; default now.")] = None,
) -> TimeWindow:
    return resolve_window(start=from_, end=to, default_hours=settings.default_range_hours)


@router.post(
    "/annotations",
    operation_id="create_annotation",
    status_code=status.HTTP_201_CREATED,
    responses=BAD_REQUEST,
)
def create_annotation(
    body: AnnotationIn, session: SessionDep, principal: AnnotatePrincipal
) -> AnnotationOut:
    """Mark a deploy or schema change: a point in time, or a range with `end_time`."""
    return service.create_annotation(session=session, principal=principal, data=body)


@router.get("/annotations", operation_id="list_annotations", responses=BAD_REQUEST)
def list_annotations(
    session: SessionDep,
    _principal: ReadPrincipal,
    window: Annotated[TimeWindow, Depends(_window)],
    instance: Annotated[
        str | None,
        Query(description="Only annotations about this instance or about all instances."),
    ] = None,
    tag: Annotated[
        list[str] | None, Query(description="Only annotations with any of these tags (repeat).")
    ] = None,
) -> list[AnnotationOut]:
    """Annotations overlapping the range (ranged ones too), oldest first."""
    return service.list_annotations(
        session=session, window=window, instance=instance, tags=tag or []
    )


@router.get("/annotations/{annotation_id}", operation_id="get_annotation", responses=NOT_FOUND)
def get_annotation(
    annotation_id: int, session: SessionDep, _principal: ReadPrincipal
) -> AnnotationOut:
    """One annotation."""
    return service.get_annotation(session=session, annotation_id=annotation_id)


@router.delete(
    "/annotations/{annotation_id}",
    operation_id="delete_annotation",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={
        **NOT_FOUND,
        403: {"model": ErrorDetail, "description": "Neither an admin nor the creating token."},
    },
)
def delete_annotation(
    annotation_id: int, session: SessionDep, principal: AnnotatePrincipal
) -> Response:
    """Delete an annotation (an admin token, or the token that made it)."""
    service.delete_annotation(session=session, principal=principal, annotation_id=annotation_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/annotations/{annotation_id}/impact",
    operation_id="get_annotation_impact",
    responses={
        **NOT_FOUND,
        **BAD_REQUEST,
        409: {
            "model": ErrorDetail,
            "description": "Nothing to compare yet (the window after has not started) or any "
            "more (data that fine is no longer kept).",
        },
    },
)
def get_annotation_impact(
    annotation_id: int,
    session: SessionDep,
    settings: SettingsDep,
    _principal: ReadPrincipal,
    window: Annotated[
        str, Query(description="Length of each window compared: 5m to 7d (15m, 1h, 6h, 1d).")
    ] = "1h",
) -> AnnotationImpact:
    """Per query, equal windows before and after the annotation compared, largest change first.

    The window after starts at `end_time` for a ranged annotation. A change is significant
    when a Mann-Whitney U test on the per-minute values says so and it is large enough.
    """
    return service.annotation_impact(
        session=session, settings=settings, annotation_id=annotation_id, window=window
    )
