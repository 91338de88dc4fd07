"""HTTP endpoints of chat channels (admin only)."""

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response, status

from quanta.deps import AUTH_RESPONSES, AdminPrincipal, ErrorDetail, SessionDep, SettingsDep
from quanta.notify import service
from quanta.notify.models import DeliveryStatus
from quanta.notify.schemas import (
    ChannelCreate,
    ChannelOut,
    ChannelTestResult,
    ChannelUpdate,
    DeliveryOut,
)

MAX_DELIVERIES = 500
DEFAULT_DELIVERIES = 50

router = APIRouter(prefix="/channels", tags=["channels"], responses={**AUTH_RESPONSES})
NOT_FOUND: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorDetail, "description": "No channel with this id."}
}
CONFLICT: dict[int | str, dict[str, object]] = {
    409: {"model": ErrorDetail, "description": "Another channel has this name."}
}


@router.get("", operation_id="list_channels")
def list_channels(session: SessionDep, _: AdminPrincipal) -> list[ChannelOut]:
    """Every chat channel, webhook URLs redacted."""
    return service.list_channels(session=session)


@router.post(
    "", operation_id="create_channel", status_code=status.HTTP_201_CREATED, responses=CONFLICT
)
def create_channel(
    body: ChannelCreate,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    _: AdminPrincipal,
) -> ChannelOut:
    """Add a channel; its webhook URL is stored encrypted and shown redacted."""
    out = service.create_channel(session=session, settings=settings, data=body)
    # The settings without the webhook URL (a secret: neither it nor its redacted form).
    request.state.audit_detail = {
        "channel_id": out.id,
        **body.model_dump(mode="json", exclude={"url"}),
        "url": "set",
    }
    return out


@router.get("/{channel_id}", operation_id="get_channel", responses=NOT_FOUND)
def get_channel(channel_id: int, session: SessionDep, _: AdminPrincipal) -> ChannelOut:
    """One channel."""
    return service.get_channel(session=session, channel_id=channel_id)


@router.patch(
    "/{channel_id}",
    operation_id="update_channel",
    responses={
        **NOT_FOUND,
        **CONFLICT,
        422: {"model": ErrorDetail, "description": "Contradictory or invalid settings."},
    },
)
def update_channel(
    channel_id: int,
    body: ChannelUpdate,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    _: AdminPrincipal,
) -> ChannelOut:
    """Change some of a channel's settings."""
    updated = service.update_channel(
        session=session, settings=settings, channel_id=channel_id, data=body
    )
    request.state.audit_detail = {"name": updated.channel.name, "changed": updated.changes}
    return updated.channel


@router.delete(
    "/{channel_id}",
    operation_id="delete_channel",
    status_code=status.HTTP_204_NO_CONTENT,
    responses=NOT_FOUND,
)
def delete_channel(
    channel_id: int, request: Request, session: SessionDep, _: AdminPrincipal
) -> Response:
    """Remove a channel and its delivery history."""
    name = service.delete_channel(session=session, channel_id=channel_id)
    request.state.audit_detail = {"name": name}
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{channel_id}/test", operation_id="send_test_message", responses=NOT_FOUND)
def send_test_message(
    channel_id: int, session: SessionDep, settings: SettingsDep, _: AdminPrincipal
) -> ChannelTestResult:
    """Send a test message now and report what the service answered (recorded as a delivery)."""
    return service.send_test(session=session, settings=settings, channel_id=channel_id)


@router.get("/{channel_id}/deliveries", operation_id="list_channel_deliveries", responses=NOT_FOUND)
def list_deliveries(
    channel_id: int,
    session: SessionDep,
    _: AdminPrincipal,
    delivery_status: Annotated[
        DeliveryStatus | None, Query(alias="status", description="Only deliveries in this state.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_DELIVERIES)] = DEFAULT_DELIVERIES,
) -> list[DeliveryOut]:
    """The channel's deliveries, newest first, each with its attempts (time, status, error)."""
    return service.list_deliveries(
        session=session,
        channel_id=channel_id,
        status=delivery_status.value if delivery_status else None,
        limit=limit,
    )
