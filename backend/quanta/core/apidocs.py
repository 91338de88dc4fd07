"""The API's documentation pages, Swagger UI at /docs and ReDoc at /redoc, served offline.

The pages and every asset they load come from the app itself: the scripts and styles of
Swagger UI and ReDoc ship in the `fastapi-standalone-docs` package (only its files are
used), so the pages work on the offline networks databases often live in, and no page has
an inline script (the docs' Content-Security-Policy allows scripts from 'self' only).
"""

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

DOCS_URL = "/docs"
REDOC_URL = "/redoc"
ASSETS_URL = "/docs/assets"
_OWN_ASSETS = Path(__file__).parent / "apidocs_assets"

_SWAGGER_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} - API (Swagger UI)</title>
<link rel="icon" href="{assets}/vendor/fastapi/favicon.png">
<link rel="stylesheet" href="{assets}/vendor/swagger/swagger-ui.css">
</head>
<body>
<div id="swagger-ui" data-openapi-url="{openapi_url}"></div>
<script src="{assets}/vendor/swagger/swagger-ui-bundle.js"></script>
<script src="{assets}/own/swagger-init.js"></script>
</body>
</html>
"""

_REDOC_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} - API (ReDoc)</title>
<link rel="icon" href="{assets}/vendor/fastapi/favicon.png">
</head>
<body>
<redoc spec-url="{openapi_url}"></redoc>
<script src="{assets}/vendor/redoc/redoc.standalone.js"></script>
</body>
</html>
"""


def install_api_docs(app: FastAPI, *, openapi_url: str) -> None:
    """Serve /docs, /redoc and their assets; /openapi.json redirects to ``openapi_url``.

    Create the app with ``docs_url=None, redoc_url=None`` (FastAPI's own pages load their
    scripts from a CDN) and call this before any catch-all route.
    """
    vendor = Path(str(files("fastapi_standalone_docs") / "static"))
    app.mount(f"{ASSETS_URL}/vendor", StaticFiles(directory=vendor), name="docs-vendor")
    app.mount(f"{ASSETS_URL}/own", StaticFiles(directory=_OWN_ASSETS), name="docs-own")
    fields = {"title": app.title, "assets": ASSETS_URL, "openapi_url": openapi_url}
    swagger = _SWAGGER_PAGE.format(**fields)
    redoc = _REDOC_PAGE.format(**fields)
    router = APIRouter(include_in_schema=False)

    @router.get(DOCS_URL)
    def swagger_ui() -> Response:
        return HTMLResponse(swagger)

    @router.get(REDOC_URL)
    def redoc_page() -> Response:
        return HTMLResponse(redoc)

    @router.get("/openapi.json")
    def openapi_moved() -> Response:
        # Where FastAPI apps usually keep it; the UI's HTML there would look like a schema
        # that fails to parse.
        return RedirectResponse(openapi_url, status_code=308)

    app.include_router(router)
