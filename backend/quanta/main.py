"""The FastAPI application factory."""

import logging
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request, status
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from sqlalchemy import text

import quanta
from quanta.annotations.router import router as annotations_router
from quanta.auth.router import router as auth_router
from quanta.core.config import Settings, get_settings
from quanta.core.db import create_db_engine, create_session_factory
from quanta.diagnostics.router import router as diagnostics_router
from quanta.ingest.router import router as ingest_router
from quanta.instances.router import router as instances_router
from quanta.queries.router import router as queries_router

log = logging.getLogger(__name__)

API_PREFIX = "/api/v1"


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app: API routers under /api/v1, health probes, and the built UI at /."""
    settings = settings or get_settings()
    engine = create_db_engine(settings)
    app = FastAPI(
        title="Quanta",
        version=quanta.__version__,
        description="Query analytics for MySQL, Percona Server and MariaDB.",
        openapi_url=f"{API_PREFIX}/openapi.json",
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.session_factory = create_session_factory(engine)

    api = APIRouter(prefix=API_PREFIX)
    for router in (
        auth_router,
        ingest_router,
        queries_router,
        annotations_router,
        instances_router,
        diagnostics_router,
    ):
        api.include_router(router)
    app.include_router(api)
    app.include_router(_health_router())
    app.add_exception_handler(Exception, _unexpected_error)
    _mount_ui(app, settings.ui_dist)
    return app


def _health_router() -> APIRouter:
    router = APIRouter(tags=["health"])

    @router.get("/healthz", operation_id="healthz")
    def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @router.get("/readyz", operation_id="readyz")
    def readyz(request: Request) -> JSONResponse:
        """The metric store answers."""
        try:
            with request.app.state.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        except Exception as exc:
            return JSONResponse(
                {"status": "unavailable", "detail": f"Database unreachable: {exc}"},
                status_code=status.HTTP_503_SERVICE_UNAVAILABLE,
            )
        return JSONResponse({"status": "ok"})

    return router


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
