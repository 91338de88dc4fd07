"""Beat's Celery app: the worker's queues, routes and schedule, without the task modules.
Beat sends each task by name, yet Celery imports an app's task modules in beat too, and they
import every service: 1.1 s of CPU at each start, for nothing.
Start with `celery -A quanta_worker.beat_app beat` (see `quanta run` and `quanta beat`)."""

from quanta_worker.celery_app import build_app, settings

app = build_app(settings, task_modules=())

__all__ = ["app"]
