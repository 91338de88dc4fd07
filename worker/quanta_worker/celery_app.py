"""The worker's Celery app: queues and routes from quanta.core.tasks, tasks, and the one beat
schedule. Start with `celery -A quanta_worker.celery_app worker` (see `quanta run`)."""

from quanta.core.config import get_settings
from quanta.core.tasks import REQUEUE_STALE_BATCHES_TASK, create_celery

app = create_celery(get_settings())
app.conf.include = ["quanta_worker.tasks.ingest"]

# Every periodic job lives here.
app.conf.beat_schedule = {
    "requeue-stale-batches": {
        "task": REQUEUE_STALE_BATCHES_TASK,
        "schedule": 60.0,
    },
}
