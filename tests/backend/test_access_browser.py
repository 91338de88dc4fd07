"""The session cookie as a real browser (headless Chromium) handles it: sign in, the
HttpOnly cookie stays unreadable, writes need X-CSRF-Token, sign out; the built UI loads
under the Content-Security-Policy without a single violation."""

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from quanta.core.config import Settings
from tests.fixtures.servers import free_port, service_unavailable
from tests.fixtures.store import migrate_store
from tests.helpers import wait_until_healthy

REPO = Path(__file__).resolve().parents[2]
PLAYWRIGHT = REPO / "frontend" / "node_modules" / "playwright-core" / "index.mjs"
CHROMIUM = Path("/usr/bin/chromium")
PASSWORD = "correct horse battery"
START_SECONDS = 30.0

SCRIPT = """
import { chromium } from %(playwright)s;
const browser = await chromium.launch({ executablePath: %(chromium)s, args: ["--no-sandbox"] });
const page = await browser.newPage();
const console_ = [];
page.on("console", (m) => console_.push(m.type() + ": " + m.text()));
page.on("pageerror", (e) => console_.push("pageerror: " + e.message));
await page.goto(%(url)s, { waitUntil: "networkidle" });
const out = await page.evaluate(async (password) => {
  const json = { "Content-Type": "application/json" };
  const r = {};
  const login = await fetch("/api/v1/auth/login",
    { method: "POST", headers: json, body: JSON.stringify({ name: "ada", password }) });
  const csrf = (await login.json()).csrf_token;
  r.login = login.status;
  r.readable = document.cookie;
  r.me = await (await fetch("/api/v1/me")).json();
  const body = JSON.stringify({ name: "db1" });
  r.without = (await fetch("/api/v1/instances", { method: "POST", headers: json, body })).status;
  r.with = (await fetch("/api/v1/instances",
    { method: "POST", headers: { ...json, "X-CSRF-Token": csrf }, body })).status;
  r.logout = (await fetch("/api/v1/auth/logout", { method: "POST" })).status;
  r.after = (await fetch("/api/v1/me")).status;
  r.csrf = csrf;
  return r;
}, %(password)s);
out.console = console_;
console.log(JSON.stringify(out));
await browser.close();
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """`quanta serve` on a free port with a fresh store and the admin user 'ada'."""
    if not (PLAYWRIGHT.exists() and CHROMIUM.exists() and shutil.which("node")):
        service_unavailable("needs node, frontend/node_modules (playwright-core) and chromium")
    if not (REPO / "frontend" / "dist" / "index.html").exists():
        service_unavailable("the UI is not built (make install)")
    port = free_port()
    env = {**os.environ, "QUANTA_DATA_DIR": str(tmp_path), "QUANTA_ENV": "test",
           "QUANTA_PORT": str(port)}  # fmt: skip
    quanta = [str(Path(sys.executable).parent / "quanta")]
    # The store as `quanta migrate` leaves it (that command runs in tests/fixtures/cluster.py).
    migrate_store(Settings(env="test", data_dir=tmp_path))
    subprocess.run(
        [*quanta, "user", "create", "ada", "--role", "admin", "--password-stdin"],
        env=env, input=PASSWORD + "\n", text=True, check=True, capture_output=True,
    )  # fmt: skip
    process = subprocess.Popen(
        [*quanta, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, process, START_SECONDS)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_cookie_sign_in_csrf_and_csp_in_a_real_browser(server: str, tmp_path: Path) -> None:
    script = tmp_path / "browser.mjs"
    script.write_text(
        SCRIPT
        % {
            "playwright": json.dumps(PLAYWRIGHT.as_uri()),
            "chromium": json.dumps(str(CHROMIUM)),
            "url": json.dumps(server + "/"),
            "password": json.dumps(PASSWORD),
        }
    )
    done = subprocess.run(
        ["node", str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["login"] == 200
    assert out["readable"] == f"quanta_csrf={out['csrf']}"  # the session cookie is HttpOnly
    assert out["me"]["user"] == "ada"
    assert out["me"]["csrf_token"] == out["csrf"]
    assert out["without"] == 403
    assert out["with"] == 201
    assert out["logout"] == 204
    assert out["after"] == 401
    # The built UI loaded under the CSP: no violation, no script error (the 403 and 401
    # above are logged as failed loads, as a browser does).
    problems = [
        line
        for line in out["console"]
        if "Content Security Policy" in line or line.startswith("pageerror")
    ]
    assert problems == []
