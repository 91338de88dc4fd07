"""Use cases around monitored instances."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import SecretStr
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quanta.analysis.sources import DEFAULT_PRIMARY_SOURCE, QUERY_SOURCES
from quanta.audit.service import field_changes
from quanta.core import errors
from quanta.core.config import Settings
from quanta.core.crypto import SecretUnreadable, decrypt, encrypt
from quanta.core.mysql import InvalidDsn, parse_dsn, redact_dsn
from quanta.instances import repository
from quanta.instances.models import ExamplePolicy, Instance
from quanta.instances.schemas import (
    CapabilityOut,
    ConnectionTestOut,
    ExecutionTargetOut,
    InstanceCreate,
    InstanceOut,
    InstanceUpdate,
)
from quanta.monitored.check import check_target, test_connection
from quanta.monitored.errors import MonitoredError
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.target import TargetNotReadOnly


class NoConnection(errors.Conflict):
    """The instance has no DSN registered, so workers cannot reach it."""


class InstanceUnreachable(errors.Conflict):
    """A DSN of the instance is stored but cannot be used (the secret key changed since it
    was written, or it does not parse), so its server cannot be reached until an admin sets
    it again. The one error for it: the message names the DSN, why, and the fix."""


def labels_by_name(
    *, session: Session, names: Sequence[str]
) -> dict[str, tuple[int, dict[str, str]]]:
    """(id, labels) of the named instances (none named: of every instance), by name."""
    return {
        instance.name: (instance.id, dict(instance.labels or {}))
        for instance in repository.list_all(session)
        if not names or instance.name in names
    }


def set_labels(*, session: Session, instance: Instance, labels: dict[str, str]) -> None:
    """Give an instance these labels (an agent's config says so), if they differ."""
    wanted = dict(sorted(labels.items()))
    if (instance.labels or {}) != wanted:
        instance.labels = wanted
        session.flush()


def get_or_create_instance(*, session: Session, name: str) -> Instance:
    """The instance called `name`, registered on first sight; safe under concurrent callers."""
    instance = repository.find_by_name(session, name)
    if instance is not None:
        return instance
    try:
        with session.begin_nested():
            instance = Instance(name=name)
            session.add(instance)
        return instance
    except IntegrityError:
        # Another request registered it between our read and our insert.
        found = repository.find_by_name(session, name)
        assert found is not None
        return found


def adopt_primary_source(*, session: Session, instance: Instance, source: str) -> None:
    """The first query source an instance delivers becomes its primary one (for totals); the
    slow log takes over when it reports, unless an admin pinned the choice."""
    if source not in QUERY_SOURCES:
        return
    if instance.primary_source is None:
        repository.set_primary_source_if_unset(session, instance.id, source)
    elif (
        source == DEFAULT_PRIMARY_SOURCE
        and instance.primary_source != source
        and not instance.primary_source_pinned
    ):
        repository.prefer_primary_source(session, instance.id, source)


def require_connection(settings: Settings, instance: Instance) -> ConnectionOptions:
    """How to reach the instance's server, from its decrypted DSN; NoConnection when unset,
    InstanceUnreachable when it cannot be used."""
    if instance.dsn_encrypted is None:
        raise NoConnection(
            f"Instance '{instance.name}' has no DSN, so Quanta cannot reach its server: an "
            f"admin registers a read-only account with PATCH /api/v1/instances/{instance.id} "
            '{"dsn": "mysql://quanta_ro:PASSWORD@host:3306/"}.'
        )
    return _usable(settings, instance, instance.dsn_encrypted, "dsn")


def _usable(settings: Settings, instance: Instance, stored: str, field: str) -> ConnectionOptions:
    """A stored DSN (the instance's ``field``) as connection options; InstanceUnreachable,
    with the one message for it, when it cannot be decrypted or parsed."""
    try:
        return parse_dsn(decrypt(settings, stored))
    except (SecretUnreadable, InvalidDsn) as exc:
        raise InstanceUnreachable(
            f"Instance '{instance.name}' has a {field} that cannot be used ({exc}); an admin "
            f"sets it again with PATCH /api/v1/instances/{instance.id}."
        ) from exc


def monitoring_user(settings: Settings, instance: Instance) -> str | None:
    """The user name of the instance's monitoring account (its DSN), if one can be read:
    what Quanta's own statements on that server run as."""
    if instance.dsn_encrypted is None:
        return None
    try:
        return require_connection(settings, instance).user or None
    except InstanceUnreachable:
        return None


def sandbox_options(settings: Settings, instance: Instance) -> ConnectionOptions | None:
    """The instance's scratch server for index validation, when one is configured;
    InstanceUnreachable when its DSN cannot be used."""
    if instance.sandbox_dsn_encrypted is None:
        return None
    return _usable(settings, instance, instance.sandbox_dsn_encrypted, "sandbox_dsn")


def target_options(settings: Settings, instance: Instance) -> ConnectionOptions | None:
    """The instance's execution target (where examples may be executed), when configured;
    InstanceUnreachable when its DSN cannot be used."""
    if instance.target_dsn_encrypted is None:
        return None
    return _usable(settings, instance, instance.target_dsn_encrypted, "execution_target_dsn")


def monitored_settings(settings: Settings) -> MonitoredSettings:
    """The limits every session on a monitored server runs under, from the settings."""
    return MonitoredSettings(
        connect_timeout=settings.monitored_connect_timeout_seconds,
        statement_timeout=settings.monitored_statement_timeout_seconds,
        read_timeout=int(settings.monitored_statement_timeout_seconds) + 5,
        profile_runs=settings.monitored_profile_runs,
    )


# --------------------------------------------------------------------------- admin API


class InstanceError(errors.QuantaError):
    """A request about instances that cannot be honoured; the message says why."""


class InstanceNotFound(errors.NotFound, InstanceError):
    """No instance with that id or name."""


class DuplicateInstance(errors.Conflict, InstanceError):
    """Another instance already has that name."""


class InstanceHasData(errors.Conflict, InstanceError):
    """Deleting the instance would delete its stored data, and purge was not asked for."""


class InvalidConnection(errors.Unprocessable, InstanceError):
    """A DSN that cannot be used; the message says which part is wrong (never the password)."""


def list_instances(*, session: Session, settings: Settings) -> list[InstanceOut]:
    """Every instance, by name, DSNs redacted."""
    return [instance_out(settings, instance) for instance in repository.list_all(session)]


def all_instances(*, session: Session) -> list[Instance]:
    """Every instance, by name."""
    return list(repository.list_all(session))


def connected_instances(*, session: Session) -> list[Instance]:
    """Instances workers can reach (a DSN is registered), by name."""
    return repository.list_connected(session)


def find_instance(*, session: Session, instance_id: int) -> Instance:
    """The instance with this id; InstanceNotFound otherwise (the one lookup by id)."""
    instance = session.get(Instance, instance_id)
    if instance is None:
        raise InstanceNotFound(f"No instance with id {instance_id}.")
    return instance


def find_instance_by_name(*, session: Session, name: str) -> Instance:
    """The instance with this name; InstanceNotFound otherwise (the one lookup by name)."""
    instance = repository.find_by_name(session, name)
    if instance is None:
        raise InstanceNotFound(f"No instance named {name!r}.")
    return instance


def instance_names_by_id(*, session: Session) -> dict[int, str]:
    """Every instance's name by id (the one map from ids to names)."""
    return repository.names_by_id(session)


def instance_labels_by_id(*, session: Session) -> dict[int, dict[str, str]]:
    """Every labelled instance's labels by id."""
    return repository.labels_by_id(session)


def instance_ids_by_name(*, session: Session, names: Sequence[str]) -> dict[str, int]:
    """The ids of the instances among ``names`` that exist (the one map from names to ids)."""
    return repository.ids_by_name(session, names)


def register_instance(*, session: Session, settings: Settings, data: InstanceCreate) -> InstanceOut:
    """Register a monitored server; its DSNs are validated and stored encrypted."""
    if repository.find_by_name(session, data.name) is not None:
        raise DuplicateInstance(_duplicate_message(data.name))
    instance = Instance(
        name=data.name,
        dsn_encrypted=_encrypted_dsn(settings, data.dsn, "dsn"),
        sandbox_dsn_encrypted=_encrypted_dsn(settings, data.sandbox_dsn, "sandbox_dsn"),
        target_dsn_encrypted=_encrypted_dsn(
            settings, data.execution_target_dsn, "execution_target_dsn"
        ),
        allow_broad_privileges=data.allow_broad_privileges,
        example_policy=data.example_policy,
    )
    try:
        with session.begin_nested():
            session.add(instance)
    except IntegrityError as exc:  # registered concurrently (an agent's first batch, say)
        raise DuplicateInstance(_duplicate_message(data.name)) from exc
    return instance_out(settings, instance)


@dataclass(frozen=True, slots=True)
class InstanceChanged:
    """An updated instance and, for the audit log, which fields changed (DSNs: no values)."""

    instance: InstanceOut
    changes: dict[str, Any]


# The fields an update can change, as the audit log names them; the DSNs are secrets.
_SECRET_FIELDS = frozenset({"dsn", "sandbox_dsn", "execution_target_dsn"})


def _audited_fields(instance: Instance) -> dict[str, Any]:
    return {
        "name": instance.name,
        "dsn": instance.dsn_encrypted,
        "sandbox_dsn": instance.sandbox_dsn_encrypted,
        "execution_target_dsn": instance.target_dsn_encrypted,
        "allow_broad_privileges": instance.allow_broad_privileges,
        "example_policy": instance.example_policy,
        "primary_source": instance.primary_source,
        "primary_source_pinned": instance.primary_source_pinned,
        "labels": dict(instance.labels or {}),
    }


def update_instance(
    *,
    session: Session,
    settings: Settings,
    instance_id: int,
    data: InstanceUpdate,
    slow_log_has_data: bool = False,
) -> InstanceChanged:
    """Change the fields sent; ``dsn``/``sandbox_dsn`` sent as null remove the connection.

    ``slow_log_has_data``: whether the metric store holds slow-log data of the instance
    (quanta.fleet.service asks the queries domain), read when ``primary_source`` goes back
    to automatic."""
    instance = find_instance(session=session, instance_id=instance_id)
    before = _audited_fields(instance)
    sent = data.model_fields_set
    if "name" in sent and data.name is not None and data.name != instance.name:
        if repository.find_by_name(session, data.name) is not None:
            raise DuplicateInstance(_duplicate_message(data.name))
        instance.name = data.name
    if "dsn" in sent:
        instance.dsn_encrypted = _encrypted_dsn(settings, data.dsn, "dsn")
        # What was detected belongs to the old server.
        instance.flavor = instance.version = None
    if "sandbox_dsn" in sent:
        instance.sandbox_dsn_encrypted = _encrypted_dsn(settings, data.sandbox_dsn, "sandbox_dsn")
    if "execution_target_dsn" in sent:
        instance.target_dsn_encrypted = _encrypted_dsn(
            settings, data.execution_target_dsn, "execution_target_dsn"
        )
    if data.allow_broad_privileges is not None:
        instance.allow_broad_privileges = data.allow_broad_privileges
    if data.example_policy is not None:
        instance.example_policy = data.example_policy
    if data.labels is not None:
        instance.labels = dict(sorted(data.labels.items()))
    if "primary_source" in sent:
        instance.primary_source_pinned = data.primary_source is not None
        if data.primary_source is not None:
            instance.primary_source = data.primary_source
        elif slow_log_has_data:
            # Back to automatic: the slow log counts at once when it has reported, else an
            # imported log (no more batches to come) would stay hidden behind the other.
            instance.primary_source = DEFAULT_PRIMARY_SOURCE
    try:
        session.flush()
    except IntegrityError as exc:
        raise DuplicateInstance(_duplicate_message(instance.name)) from exc
    changes = field_changes(before, _audited_fields(instance), secret=_SECRET_FIELDS)
    return InstanceChanged(instance_out(settings, instance), changes)


def delete_instance(*, session: Session, instance_id: int, purge: bool) -> str:
    """Delete an instance; one with stored data only when ``purge`` (its data goes too).

    Returns the deleted instance's name (for the audit log)."""
    instance = find_instance(session=session, instance_id=instance_id)
    if not purge:
        holding = repository.tables_with_rows(session, instance.id)
        if holding:
            raise InstanceHasData(
                f"Instance '{instance.name}' has stored data ({', '.join(holding)}). "
                f"DELETE /api/v1/instances/{instance.id}?purge=true deletes it with all its "
                f'data; PATCH {{"dsn": null}} only removes its connection.'
            )
    name = instance.name
    repository.delete_with_rows(session, instance)
    session.flush()
    return name


def check_connection(
    *, session: Session, settings: Settings, instance_id: int, schemas: Sequence[str]
) -> ConnectionTestOut:
    """Connect with the instance's DSN and report what the account may do, SELECT on
    ``schemas`` included; keeps the detected flavor and version on the instance."""
    instance = find_instance(session=session, instance_id=instance_id)
    # A stored DSN that no longer works is a conflict with the state (409), not a bad request.
    options = require_connection(settings, instance)
    report = test_connection(options, settings=monitored_settings(settings), schemas=schemas)
    if report.connected:
        instance.flavor = report.flavor or None
        instance.version = report.server_version or None
        session.flush()
    return ConnectionTestOut(
        connected=report.connected,
        error=report.error,
        flavor=report.flavor or None,
        version=report.server_version or None,
        account=report.account or None,
        privileges=list(report.privileges),
        excess_privileges=list(report.excess_privileges),
        capabilities=[CapabilityOut(**c.to_dict()) for c in report.capabilities],
        execution_target=_check_target(settings, instance),
    )


def _check_target(settings: Settings, instance: Instance) -> ExecutionTargetOut | None:
    """Verify the execution target as a run would (connect, read-only, the account), and
    what runs there (profiling)."""
    try:
        options = target_options(settings, instance)
    except InstanceUnreachable as exc:
        return ExecutionTargetOut(address="?", read_only=False, detail=str(exc))
    if options is None:
        return None
    try:
        state, capabilities = check_target(options, monitored_settings(settings))
    except (TargetNotReadOnly, MonitoredError) as exc:
        return ExecutionTargetOut(address=options.address, read_only=False, detail=str(exc))
    return ExecutionTargetOut(
        address=state.address,
        read_only=True,
        detail=f"read-only for {state.account.account}: {state.describe()}",
        account=state.account.account,
        privileges=list(state.account.privileges),
        excess_privileges=list(state.account.excess),
        capabilities=[CapabilityOut(**c.to_dict()) for c in capabilities],
    )


def instance_out(settings: Settings, instance: Instance) -> InstanceOut:
    """The API form of an instance: DSNs decrypted only to be shown without the password."""
    return InstanceOut(
        id=instance.id,
        name=instance.name,
        flavor=instance.flavor,
        version=instance.version,
        dsn=_shown_dsn(settings, instance.dsn_encrypted),
        has_dsn=instance.dsn_encrypted is not None,
        sandbox_dsn=_shown_dsn(settings, instance.sandbox_dsn_encrypted),
        execution_target_dsn=_shown_dsn(settings, instance.target_dsn_encrypted),
        has_execution_target=instance.target_dsn_encrypted is not None,
        profiling_enabled=instance.target_dsn_encrypted is not None,
        allow_broad_privileges=instance.allow_broad_privileges,
        example_policy=ExamplePolicy(instance.example_policy).value,
        primary_source=instance.primary_source,
        primary_source_pinned=instance.primary_source_pinned,
        labels=dict(sorted((instance.labels or {}).items())),
        created_at=instance.created_at,
    )


def _duplicate_message(name: str) -> str:
    return f"An instance named '{name}' already exists: PATCH it, or choose another name."


def _encrypted_dsn(settings: Settings, dsn: SecretStr | None, field: str) -> str | None:
    if dsn is None:
        return None
    text = dsn.get_secret_value().strip()
    try:
        parse_dsn(text)
    except InvalidDsn as exc:
        raise InvalidConnection(f"{field}: {exc}") from exc
    return encrypt(settings, text)


def _shown_dsn(settings: Settings, stored: str | None) -> str | None:
    if stored is None:
        return None
    try:
        return redact_dsn(decrypt(settings, stored))
    except SecretUnreadable:
        return None
