"""Use cases around monitored instances."""

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quanta.core.config import Settings
from quanta.core.crypto import decrypt
from quanta.instances import repository
from quanta.instances.dsn import parse_dsn
from quanta.instances.models import Instance
from quanta.monitored.options import ConnectionOptions, MonitoredSettings


class NoConnection(Exception):
    """The instance has no DSN registered, so workers cannot reach it."""


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


# Sources whose buckets can be an instance's totals (statistics batches are not query load).
QUERY_SOURCES = ("slowlog", "perfschema")


def get_instance(*, session: Session, instance_id: int) -> Instance:
    """The instance with this id."""
    return session.get_one(Instance, instance_id)


def adopt_primary_source(*, session: Session, instance: Instance, source: str) -> None:
    """The first query source an instance delivers becomes its primary one (for totals)."""
    if instance.primary_source is None and source in QUERY_SOURCES:
        repository.set_primary_source_if_unset(session, instance.id, source)


def connection_options(settings: Settings, instance: Instance) -> ConnectionOptions:
    """How to reach the instance's server, from its decrypted DSN; NoConnection when unset."""
    if instance.dsn_encrypted is None:
        raise NoConnection(
            f"Instance '{instance.name}' has no DSN: an admin registers one with "
            f'PATCH /api/v1/instances/{instance.id} {{"dsn": "mysql://user:pass@host:3306/"}}.'
        )
    return parse_dsn(decrypt(settings, instance.dsn_encrypted))


def sandbox_options(settings: Settings, instance: Instance) -> ConnectionOptions | None:
    """The instance's scratch server for index validation, when one is configured."""
    if instance.sandbox_dsn_encrypted is None:
        return None
    return parse_dsn(decrypt(settings, instance.sandbox_dsn_encrypted))


def monitored_settings(settings: Settings) -> MonitoredSettings:
    """The limits every session on a monitored server runs under, from the settings."""
    return MonitoredSettings(
        connect_timeout=settings.monitored_connect_timeout_seconds,
        statement_timeout=settings.monitored_statement_timeout_seconds,
        read_timeout=int(settings.monitored_statement_timeout_seconds) + 5,
        profile_runs=settings.monitored_profile_runs,
    )
