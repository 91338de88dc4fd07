"""The worker's Celery app: queues and routes from quanta.core.tasks, tasks, and the one beat
schedule. Start with `celery -A quanta_worker.celery_app worker` (see `quanta run`)."""

from quanta.core.config import get_settings
from quanta.core.tasks import (
    AUTO_DIAGNOSE_TASK,
    MAINTAIN_STORE_TASK,
    REQUEUE_STALE_BATCHES_TASK,
    create_celery,
)

settings = get_settings()
app = create_celery(settings)
app.conf.include = [
    "quanta_worker.tasks.ingest",
    "quanta_worker.tasks.store",
    "quanta_worker.tasks.diagnostics",
]

# Every periodic job lives here.
app.conf.beat_schedule = {
    "requeue-stale-batches": {
        "task": REQUEUE_STALE_BATCHES_TASK,
        "schedule": 60.0,
    },
    # Retention per resolution and PostgreSQL time partitions (rollups need no job: every
    # resolution is written at ingest, see docs/architecture.md).
    "maintain-store": {
        "task": MAINTAIN_STORE_TASK,
        "schedule": float(settings.store_maintenance_seconds),
    },
    # EXPLAIN (and profiles where enabled) of each instance's top queries by load, once a day.
    "auto-diagnose": {
        "task": AUTO_DIAGNOSE_TASK,
        "schedule": float(settings.diagnostics_auto_interval_seconds),
    },
}
