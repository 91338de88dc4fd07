"""The notify tasks are registered with the worker, routed to the notify queue, and ticked."""

from pathlib import Path

from quanta.core.config import Settings
from quanta.core.tasks import DELIVER_NOTIFICATION_TASK, NOTIFY_TICK_TASK, create_celery


def test_notify_tasks_go_to_the_notify_queue(tmp_path: Path) -> None:
    app = create_celery(Settings(data_dir=tmp_path, redis_url=None))
    for task in (DELIVER_NOTIFICATION_TASK, NOTIFY_TICK_TASK):
        assert app.amqp.router.route({}, task)["queue"].name == "notify"


def test_worker_registers_the_tasks_and_the_tick() -> None:
    from quanta_worker.celery_app import app, settings
    from quanta_worker.tasks import notify

    assert notify.deliver.name == DELIVER_NOTIFICATION_TASK
    assert app.tasks[NOTIFY_TICK_TASK].name == notify.notify_tick.name == NOTIFY_TICK_TASK
    assert "quanta_worker.tasks.notify" in app.conf.include
    assert app.conf.beat_schedule["notify-tick"] == {
        "task": NOTIFY_TICK_TASK,
        "schedule": settings.notify_tick_seconds,
    }
