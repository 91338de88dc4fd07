"""The notify tasks are registered with the worker, routed to the notify queue, and ticked."""

import json
import subprocess
import sys
from pathlib import Path

from celery.signals import beat_init

from quanta.core.config import Settings
from quanta.core.tasks import (
    ANALYSIS_QUEUE,
    DELIVER_NOTIFICATION_TASK,
    NOTIFY_TICK_TASK,
    create_celery,
)


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


def test_beat_imports_no_task_module_and_keeps_the_schedule() -> None:
    """Beat sends tasks by name: its app (quanta_worker.beat_app) loads as beat does without
    importing a task module, where the worker's imports them all. In subprocesses, each with
    a fresh sys.modules."""
    probe = (
        "import json, sys; from quanta_worker.{module} import app; app.loader.init_worker(); "
        "print(json.dumps([sorted(m for m in sys.modules if m.startswith('quanta_worker.tasks.')),"
        " sorted(app.conf.beat_schedule)]))"
    )

    def loaded(module: str) -> list[list[str]]:
        result = subprocess.run(
            [sys.executable, "-c", probe.format(module=module)],
            capture_output=True,
            text=True,
            check=True,
        )
        return list(json.loads(result.stdout))

    beat_tasks, beat_schedule = loaded("beat_app")
    worker_tasks, worker_schedule = loaded("celery_app")
    assert beat_tasks == []
    assert "quanta_worker.tasks.notify" in worker_tasks
    assert beat_schedule == worker_schedule
    assert "notify-tick" in beat_schedule


def test_beat_sends_the_daily_jobs_as_it_starts(tmp_path: Path) -> None:
    """A fresh installation gets its first EXPLAIN runs and advice when beat starts, not a
    day later: beat's start signal sends them on beat's own app (here on the SQLite broker)."""
    from celery.beat import Service

    from quanta_worker.celery_app import RUN_AT_START, build_app

    app = build_app(Settings(data_dir=tmp_path, redis_url=None), task_modules=())
    beat_init.send(sender=Service(app, schedule_filename=str(tmp_path / "schedule")))
    with app.connection_for_read() as connection:
        queue = connection.SimpleQueue(ANALYSIS_QUEUE)
        sent = [queue.get(timeout=5) for _ in RUN_AT_START]
        names = [message.headers["task"] for message in sent]
        for message in sent:
            message.ack()
        queue.close()
    assert sorted(names) == sorted(RUN_AT_START)
