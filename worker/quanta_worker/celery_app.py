"""The worker's Celery app: queues and routes from quanta.core.tasks, tasks, and the one beat
schedule. Start with `celery -A quanta_worker.celery_app worker` (see `quanta run`)."""

from collections.abc import Sequence
from typing import Any

from celery import Celery
from celery.signals import beat_init

from quanta.core.config import Settings, get_settings
from quanta.core.tasks import (
    ADVISE_HOT_TASK,
    ANNOUNCE_IMPACTS_TASK,
    ANNOUNCE_INDEX_REVIEWS_TASK,
    AUTO_DIAGNOSE_TASK,
    CHECK_REGRESSIONS_TASK,
    MAINTAIN_STORE_TASK,
    NOTIFY_TICK_TASK,
    REFRESH_ADVICE_TASK,
    REQUEUE_STALE_BATCHES_TASK,
    ROLLUP_STORE_TASK,
    create_celery,
)

TASK_MODULES = (
    "quanta_worker.tasks.ingest",
    "quanta_worker.tasks.store",
    "quanta_worker.tasks.notify",
    "quanta_worker.tasks.diagnostics",
    "quanta_worker.tasks.advice",
    "quanta_worker.tasks.annotations",
    "quanta_worker.tasks.statistics",
    "quanta_worker.tasks.regressions",
)

# Beat counts each interval from its start: without this, the daily jobs would first run a day
# after beat starts, and a fresh installation would wait that long for its first advice.
RUN_AT_START = (AUTO_DIAGNOSE_TASK, REFRESH_ADVICE_TASK)


def build_app(settings: Settings, task_modules: Sequence[str]) -> Celery:
    """An app with Quanta's queues, routes and beat schedule that imports ``task_modules``
    as it starts: the worker's imports them all, beat's none (it sends tasks by name)."""
    app = create_celery(settings)
    app.conf.include = list(task_modules)
    app.conf.beat_schedule = beat_schedule(settings)
    return app


def beat_schedule(settings: Settings) -> dict[str, dict[str, Any]]:
    """Every periodic job, by name."""
    return {
        # Chat: send digests once a channel's hourly limit frees up; re-enqueue lost deliveries.
        "notify-tick": {
            "task": NOTIFY_TICK_TASK,
            "schedule": settings.notify_tick_seconds,
        },
        "requeue-stale-batches": {
            "task": REQUEUE_STALE_BATCHES_TASK,
            "schedule": settings.ingest_requeue_check_seconds,
        },
        # Hours, days and totals summed from the minutes of ended hours (ingest writes minutes
        # only; see quanta.queries.rollup).
        "rollup-store": {
            "task": ROLLUP_STORE_TASK,
            "schedule": settings.rollup_interval_seconds,
        },
        # Retention per resolution and PostgreSQL time partitions.
        "maintain-store": {
            "task": MAINTAIN_STORE_TASK,
            "schedule": float(settings.store_maintenance_seconds),
        },
        # EXPLAIN (and profiles where enabled) of each instance's top queries by load, once a day.
        "auto-diagnose": {
            "task": AUTO_DIAGNOSE_TASK,
            "schedule": float(settings.diagnostics_auto_interval_seconds),
        },
        # Schema snapshots of tables with suggestions (re-evaluating those whose structure
        # changed) and index advice for each instance's top queries by load, once a day.
        "refresh-advice": {
            "task": REFRESH_ADVICE_TASK,
            "schedule": float(settings.advice_refresh_seconds),
        },
        # EXPLAIN and advice of queries whose load share just crossed a chat channel's minimum.
        "advise-hot-queries": {
            "task": ADVISE_HOT_TASK,
            "schedule": float(settings.advice_hot_check_seconds),
        },
        # Regressions after annotations to chat, once the window after each is over.
        "announce-impacts": {
            "task": ANNOUNCE_IMPACTS_TASK,
            "schedule": float(settings.annotation_announce_check_seconds),
        },
        # Index review findings not announced before, to the channels taking them: weekly.
        "announce-index-reviews": {
            "task": ANNOUNCE_INDEX_REVIEWS_TASK,
            "schedule": float(settings.index_review_announce_seconds),
        },
        # Queries slower than their baseline (and back) to chat; applied suggestions' effect.
        "check-regressions": {
            "task": CHECK_REGRESSIONS_TASK,
            "schedule": float(settings.regression_check_seconds),
        },
    }


@beat_init.connect
def _run_daily_jobs_at_start(sender: Any = None, **_: Any) -> None:
    for task in RUN_AT_START:
        sender.app.send_task(task)  # sender: the beat Service, which holds beat's own app


settings = get_settings()
app = build_app(settings, TASK_MODULES)
