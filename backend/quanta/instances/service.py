"""Use cases around monitored instances."""

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quanta.instances import repository
from quanta.instances.models import Instance


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
