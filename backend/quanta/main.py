"""The FastAPI application factory."""

import functools
import gc
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import APIRouter, Depends, FastAPI, Request, status
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

import quanta
from quanta.advice.router import router as advice_router
from quanta.agents.router import router as agents_router
from quanta.annotations.router import router as annotations_router
from quanta.audit.router import router as audit_router
from quanta.auth.router import public_router as auth_public_router
from quanta.auth.router import router as auth_router
from quanta.core.apidocs import install_api_docs
from quanta.core.config import Settings, get_settings
from quanta.core.db import create_db_engine, create_session_factory, session_scope
from quanta.core.errors import QuantaError, quanta_error_handler
from quanta.core.http import install as install_http_hardening
from quanta.core.observability import (
    PROMETHEUS_CONTENT_TYPE,
    QueueState,
    build_registry,
    record_request,
    render_metrics,
)
from quanta.deps import require_scope
from quanta.diagnostics.router import router as diagnostics_router
from quanta.fleet.router import router as instances_router
from quanta.indexplan.router import router as indexplan_router
from quanta.ingest.router import router as ingest_router
from quanta.notify.router import router as notify_router
from quanta.purge.router import router as purge_router
from quanta.queries.router import router as queries_router
from quanta.regressions.router import router as regressions_router
from quanta.stages.router import router as stages_router
from quanta.statistics.router import router as statistics_router
from quanta.tables.router import router as tables_router

log = logging.getLogger(__name__)

API_PREFIX = "/api/v1"
BROKER_PING_SECONDS = 2.0
STORE_RETRY_AFTER_SECONDS = 5
MAX_REASON_CHARS = 200


@asynccontextmanager
async def _freeze_startup_objects(_app: FastAPI) -> AsyncIterator[None]:
    """Move what startup built (modules, routes, schemas) out of the garbage collector's view.

    A read allocates tens of thousands of short-lived objects, which triggers full
    collections; each walked the whole long-lived heap, pausing a request by up to 200 ms
    (bench/api_latency.py: 30-day overview p95 465 ms, 302 ms with the heap frozen).
    """
    gc.collect()
    gc.freeze()
    yield


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app: API routers under /api/v1, health probes, and the built UI at /."""
    settings = settings or get_settings()
    engine = create_db_engine(settings)
    app = FastAPI(
        title="Quanta",
        version=quanta.__version__,
        description="Query analytics for MySQL, Percona Server and MariaDB.",
        openapi_url=f"{API_PREFIX}/openapi.json",
        # Served by install_api_docs with local assets: FastAPI's own pages use a CDN.
        docs_url=None,
        redoc_url=None,
        lifespan=_freeze_startup_objects,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.session_factory = create_session_factory(engine)

    app.include_router(_api_router())
    app.include_router(_health_router())
    if settings.metrics_enabled:
        app.include_router(_metrics_router(app, settings))
        app.middleware("http")(_count_request)
    # The one place a domain error becomes HTTP: routers never catch (quanta.core.errors).
    app.add_exception_handler(QuantaError, quanta_error_handler)
    app.add_exception_handler(DBAPIError, _store_unavailable)
    app.add_exception_handler(PoolTimeoutError, _store_unavailable)
    app.add_exception_handler(Exception, _unexpected_error)
    # Batches have their own (larger) body limit; every other route the general one.
    install_http_hardening(
        app, settings, body_limits={f"{API_PREFIX}/ingest": settings.ingest_max_body_bytes}
    )
    install_api_docs(app, openapi_url=f"{API_PREFIX}/openapi.json")
    _mount_ui(app, settings.ui_dist)
    return app


@functools.cache
def _api_router() -> APIRouter:
    """Every API router under /api/v1, assembled once per process.

    FastAPI works out each route's request models the first time a router is included in an
    app and keeps them on the router: one router shared by every app costs that once, where a
    new one per app cost 0.3-0.9 s per ``create_app`` (the test suite makes an app per test).
    The routes read settings and the store from ``request.app.state``, never from this router.
    """
    api = APIRouter(prefix=API_PREFIX)
    for router in (
        auth_public_router,
        auth_router,
        audit_router,
        ingest_router,
        agents_router,
        queries_router,
        stages_router,
        purge_router,
        annotations_router,
        instances_router,
        diagnostics_router,
        notify_router,
        tables_router,
        statistics_router,
        advice_router,
        indexplan_router,
        regressions_router,
    ):
        api.include_router(router)
    return api


def _health_router() -> APIRouter:
    router = APIRouter(tags=["health"])

    @router.get("/healthz", operation_id="healthz")
    def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @router.get("/readyz", operation_id="readyz")
    def readyz(request: Request) -> JSONResponse:
        """The metric store and the task broker answer."""
        try:
            with request.app.state.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        except Exception as exc:
            return JSONResponse(
                {"status": "unavailable", "detail": f"Database unreachable: {exc}"},
                status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
            )
        try:
            _ping_broker(request.app.state.settings)
        except Exception as exc:
            return JSONResponse(
                {"status": "unavailable", "detail": f"Task broker unreachable: {exc}"},
                status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
            )
        return JSONResponse({"status": "ok"})

    return router


def _ping_broker(settings: Settings) -> None:
    """Connect to the Celery broker once, briefly; raise if it cannot be reached."""
    from kombu.connection import Connection

    with Connection(settings.broker_url, connect_timeout=BROKER_PING_SECONDS) as conn:  # type: ignore[no-untyped-call]
        conn.ensure_connection(max_retries=1, timeout=BROKER_PING_SECONDS)


def _metrics_router(app: FastAPI, settings: Settings) -> APIRouter:
    """Prometheus' scrape endpoint; open by default (the norm), or behind a read token."""
    from quanta.ingest.service import queue_state

    def read_queue() -> QueueState:
        with session_scope(app.state.session_factory) as session:
            return queue_state(session=session, settings=settings)

    registry = build_registry(read_queue)
    guard = [Depends(require_scope("read"))] if settings.metrics_require_token else []
    router = APIRouter(tags=["health"], dependencies=guard)

    @router.get(settings.metrics_path, operation_id="metrics", response_class=Response)
    def metrics() -> Response:
        """Prometheus metrics: ingest, queue depth and lag, tasks, requests."""
        return Response(render_metrics(registry), media_type=PROMETHEUS_CONTENT_TYPE)

    return router


async def _count_request(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    """Count each API request by its route template (never the raw path: ids vary)."""
    started = time.perf_counter()
    response = await call_next(request)
    matched = getattr(request.scope.get("route"), "path", None)
    if matched is not None and matched != "/{path:path}":  # the UI's pages are not counted
        route = request.url.path
        for name, value in request.path_params.items():
            route = route.replace(f"/{value}", f"/{{{name}}}", 1)
        record_request(
            method=request.method,
            route=route,
            status=response.status_code,
            seconds=time.perf_counter() - started,
        )
    return response


async def _store_unavailable(request: Request, exc: Exception) -> JSONResponse:
    """A lost or refused connection to the metric store: 503, the client should retry."""
    if isinstance(exc, DBAPIError) and not _is_connection_failure(exc):
        return await _unexpected_error(request, exc)
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:MAX_REASON_CHARS]
    log.warning("metric store unreachable on %s %s: %s", request.method, request.url.path, reason)
    return JSONResponse(
        {"detail": f"The metric store is unreachable: {reason}; retry shortly."},
        status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
        headers={"Retry-After": str(STORE_RETRY_AFTER_SECONDS)},
    )


def _is_connection_failure(exc: DBAPIError) -> bool:
    # OperationalError covers refused/lost connections (and SQLite's "database is locked",
    # which also clears on a retry); an invalidated connection is one the server dropped.
    return isinstance(exc, OperationalError) or exc.connection_invalidated


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse(
        {"detail": "Internal error; the server log has the details."},
        status_code=status.HTTP_500_INTERNAL_SERVER_ERROR,
    )


def _mount_ui(app: FastAPI, dist: Path) -> None:
    """Serve the built single-page app; unknown non-API paths get index.html (client routing)."""
    index = dist / "index.html"

    @app.get("/{path:path}", include_in_schema=False)
    def ui(path: str) -> Response:
        if path.startswith("api/"):
            return JSONResponse({"detail": f"No API endpoint /{path}."}, status_code=404)
        if not index.is_file():
            return PlainTextResponse(
                f"The UI is not built ({index} is missing): run `make install`.", status_code=503
            )
        candidate = (dist / path).resolve()
        if path and candidate.is_file() and candidate.is_relative_to(dist.resolve()):
            return FileResponse(candidate)
        return FileResponse(index)
