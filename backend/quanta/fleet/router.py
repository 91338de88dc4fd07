"""HTTP endpoints of monitored instances: list, register, change, delete, test the connection
(quanta.instances.service, and quanta.fleet.service where the metric store is read too)."""

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response, status

from quanta.deps import (
    AUTH_RESPONSES,
    AdminPrincipal,
    ErrorDetail,
    ReadPrincipal,
    SessionDep,
    SettingsDep,
)
from quanta.fleet import service as fleet
from quanta.instances import service as instances
from quanta.instances.schemas import (
    ConnectionTestOut,
    InstanceCreate,
    InstanceOut,
    InstanceUpdate,
)

router = APIRouter(tags=["instances"], responses=AUTH_RESPONSES)

NOT_FOUND: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorDetail, "description": "No instance with this id."}
}
BAD_DSN: dict[int | str, dict[str, object]] = {
    422: {"model": ErrorDetail, "description": "A DSN that cannot be used, and why."}
}
CONFLICT: dict[int | str, dict[str, object]] = {
    409: {"model": ErrorDetail, "description": "The name is taken, or the instance has data."}
}


@router.get("/instances", operation_id="list_instances")
def list_instances(
    session: SessionDep, settings: SettingsDep, _principal: ReadPrincipal
) -> list[InstanceOut]:
    """Every monitored instance, by name; DSNs without their password."""
    return instances.list_instances(session=session, settings=settings)


@router.get("/instances/{instance_id}", operation_id="get_instance", responses=NOT_FOUND)
def get_instance(
    instance_id: int, session: SessionDep, settings: SettingsDep, _principal: ReadPrincipal
) -> InstanceOut:
    """One instance."""
    instance = instances.find_instance(session=session, instance_id=instance_id)
    return instances.instance_out(settings, instance)


@router.post(
    "/instances",
    operation_id="create_instance",
    status_code=status.HTTP_201_CREATED,
    responses={**BAD_DSN, **CONFLICT},
)
def create_instance(
    body: InstanceCreate,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    _principal: AdminPrincipal,
) -> InstanceOut:
    """Register a monitored server and the DSN of its read-only account (stored encrypted)."""
    out = instances.register_instance(session=session, settings=settings, data=body)
    request.state.audit_detail = {
        "instance_id": out.id,
        "name": out.name,
        "example_policy": body.example_policy,
        "allow_broad_privileges": body.allow_broad_privileges,
        "dsn": "set" if body.dsn is not None else None,  # never the value
        "sandbox_dsn": "set" if body.sandbox_dsn is not None else None,
        "execution_target_dsn": "set" if body.execution_target_dsn is not None else None,
    }
    return out


@router.patch(
    "/instances/{instance_id}",
    operation_id="update_instance",
    responses={**NOT_FOUND, **BAD_DSN, **CONFLICT},
)
def update_instance(
    instance_id: int,
    body: InstanceUpdate,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    _principal: AdminPrincipal,
) -> InstanceOut:
    """Change the fields sent; `"dsn": null` removes the connection.

    The audit entry names the fields changed (never a DSN's value) and the override's value.
    """
    updated = fleet.update_instance(
        session=session, settings=settings, instance_id=instance_id, data=body
    )
    request.state.audit_detail = {"name": updated.instance.name, "changed": updated.changes}
    return updated.instance


@router.delete(
    "/instances/{instance_id}",
    operation_id="delete_instance",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={**NOT_FOUND, **CONFLICT},
)
def delete_instance(
    instance_id: int,
    request: Request,
    session: SessionDep,
    _principal: AdminPrincipal,
    purge: Annotated[
        bool, Query(description="Also delete the instance's stored metrics, examples and runs.")
    ] = False,
) -> Response:
    """Delete an instance; one with stored data only with `?purge=true`."""
    name = instances.delete_instance(session=session, instance_id=instance_id, purge=purge)
    request.state.audit_detail = {"name": name, "purge": purge}
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/instances/{instance_id}/test-connection",
    operation_id="test_instance_connection",
    responses={
        **NOT_FOUND,
        409: {"model": ErrorDetail, "description": "The instance has no usable DSN."},
    },
)
def check_instance_connection(
    instance_id: int, session: SessionDep, settings: SettingsDep, _principal: AdminPrincipal
) -> ConnectionTestOut:
    """Connect with the instance's DSN and report what the account may and may not do.

    A server that cannot be reached or refuses the account is a 200 with `connected: false`
    and the server's message in `error`; the detected flavor and version are stored.
    """
    return fleet.check_connection(session=session, settings=settings, instance_id=instance_id)
