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
