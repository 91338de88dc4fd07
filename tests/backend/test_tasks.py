"""Celery routing: each task reaches exactly one queue."""

from pathlib import Path

from quanta.core.config import Settings
from quanta.core.tasks import PROCESS_BATCH_TASK, QUEUES, create_celery


def test_every_queue_has_its_own_binding(tmp_path: Path) -> None:
    app = create_celery(Settings(data_dir=tmp_path, redis_url=None))
    bindings = {(q.exchange.name, q.routing_key) for q in app.conf.task_queues}
    assert len(bindings) == len(QUEUES) == 3
    assert {q.name for q in app.conf.task_queues} == set(QUEUES)


def test_batches_go_to_the_ingest_queue_only(tmp_path: Path) -> None:
    app = create_celery(Settings(data_dir=tmp_path, redis_url=None))
    route = app.amqp.router.route({}, PROCESS_BATCH_TASK)
    assert route["queue"].name == "ingest"
    bound_to_route = [
        q.name
        for q in app.conf.task_queues
        if (q.exchange.name, q.routing_key) == (route["queue"].exchange.name, "ingest")
    ]
    assert bound_to_route == ["ingest"]
