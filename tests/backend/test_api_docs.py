"""/docs and /redoc work offline: every script, style and icon they load is served by the
app (no CDN), and /openapi.json leads to the real schema instead of the UI's HTML."""

import re
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

ASSET = re.compile(r"""(?:src|href|spec-url|data-openapi-url)="([^"]+)\"""")


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("/docs", {"/docs/assets/vendor/swagger/swagger-ui-bundle.js",
                   "/docs/assets/vendor/swagger/swagger-ui.css",
                   "/docs/assets/own/swagger-init.js",
                   "/docs/assets/vendor/fastapi/favicon.png", "/api/v1/openapi.json"}),
        ("/redoc", {"/docs/assets/vendor/redoc/redoc.standalone.js",
                    "/docs/assets/vendor/fastapi/favicon.png", "/api/v1/openapi.json"}),
    ],
)  # fmt: skip
def test_docs_pages_load_only_local_assets(
    client: TestClient, page: str, expected: set[str]
) -> None:
    response = client.get(page)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    html = response.text
    assert "<script>" not in html  # no inline script: the CSP allows 'self' only
    urls = set(ASSET.findall(html))
    assert urls == expected
    for url in urls:
        assert not urlsplit(url).netloc, url  # nothing from another host
        loaded = client.get(url, headers={"Authorization": "Bearer qnt_test_admin_token"})
        assert loaded.status_code == 200, url
        assert len(loaded.content) > 100, url
    csp = response.headers["content-security-policy"]
    assert "script-src 'self';" in csp
    assert "http" not in csp  # no remote source allowed


def test_openapi_json_at_the_root_redirects_to_the_schema(client: TestClient) -> None:
    moved = client.get("/openapi.json", follow_redirects=False)
    assert moved.status_code == 308
    assert moved.headers["location"] == "/api/v1/openapi.json"
    schema = client.get("/openapi.json")
    assert schema.status_code == 200
    assert schema.headers["content-type"] == "application/json"
    assert schema.json()["info"]["title"] == "Quanta"
