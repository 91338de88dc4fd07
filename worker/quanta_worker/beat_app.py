"""Beat's Celery app: the worker's app (its schedule, queues and routes) without the task
modules. Beat sends each task by name, yet Celery imports an app's task modules in beat too,
and they import every service: 1.1 s of CPU at each start, for nothing.
Start with `celery -A quanta_worker.beat_app beat` (see `quanta run` and `quanta beat`)."""

from quanta_worker.celery_app import app

app.conf.include = []

__all__ = ["app"]
