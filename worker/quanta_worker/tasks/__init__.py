"""Celery tasks: ids in, a session opened, a service called, a retry policy declared."""

from functools import cache

from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.grouping import parse_rules
from quanta.core.config import get_settings
from quanta.core.db import create_db_engine, create_session_factory
from quanta.core.observability import instrument_celery_tasks

# Every task's duration, failures and retries, for /metrics (once per worker process).
instrument_celery_tasks()


@cache
def session_factory() -> sessionmaker[Session]:
    """This worker process's sessions; created lazily so each forked child has its own pool."""
    return create_session_factory(create_db_engine(get_settings()))


@cache
def fingerprinter() -> Fingerprinter:
    """This worker process's fingerprinter: its cache of statement shapes lasts across batches."""
    return Fingerprinter(parse_rules(get_settings().grouping_rules))
