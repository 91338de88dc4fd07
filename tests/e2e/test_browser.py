"""The walking skeleton as a user walks it: statements on a real MariaDB, its slow log
imported with quanta-agent into `quanta run`, the heaviest query seen in Chromium."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.quanta import agent_import, quanta_run
from tests.fixtures.servers import MariaDBServer, service_unavailable

REPO = Path(__file__).resolve().parents[2]
FRONTEND = REPO / "frontend"
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts" / "e2e"

SLOW_RUNS = 4
SLOW_SECONDS = 0.25
FAST_RUNS = 40


def run_workload(mariadb: MariaDBServer) -> None:
    """A handful of fast point lookups and a few slow statements that dominate the load."""
    with mariadb.connect() as conn, conn.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS shop")
        cur.execute("USE shop")
        cur.execute("CREATE TABLE IF NOT EXISTS orders (id INT PRIMARY KEY, amount INT)")
        cur.execute(
            "INSERT IGNORE INTO orders VALUES " + ",".join(f"({i},{i})" for i in range(100))
        )
        for i in range(FAST_RUNS):
            cur.execute("SELECT amount FROM orders WHERE id = %s", (i,))
        for i in range(SLOW_RUNS):
            cur.execute(
                "SELECT SLEEP(%s), COUNT(*) FROM orders WHERE amount > %s", (SLOW_SECONDS, i)
            )


@pytest.mark.services
def test_heaviest_query_of_a_real_slow_log_shows_in_the_browser(
    tmp_path: Path, mariadb_server: MariaDBServer
) -> None:
    if not CHROMIUM.exists():
        service_unavailable("Chromium is missing: apt-get install chromium")
    if not (FRONTEND / "dist" / "index.html").exists() or not shutil.which("node"):
        pytest.fail("The UI is not built: run `make install` (Node 20+ required).")
    run_workload(mariadb_server)

    with quanta_run(tmp_path / "data") as server:
        result = agent_import(server, Path(mariadb_server.slow_log_path), instance="mariadb-e2e")
        assert "Imported" in result.stdout

        def top_fingerprint() -> str | None:
            rows = server.get("/api/v1/queries").json()["rows"]
            return rows[0]["fingerprint"] if rows and "sleep" in rows[0]["fingerprint"] else None

        top = server.wait_for(top_fingerprint, what="the SLEEP query on top")
        body = server.get("/api/v1/queries").json()
        assert body["rows"][0]["count"] == SLOW_RUNS
        assert body["rows"][0]["query_time"] >= SLOW_RUNS * SLOW_SECONDS

        browser = subprocess.run(
            ["npm", "run", "--silent", "e2e"],
            cwd=FRONTEND,
            env={
                **os.environ,
                "QUANTA_E2E_URL": server.url,
                "QUANTA_E2E_TOKEN": server.token,
                "QUANTA_E2E_EXPECT_TOP": top,
                "QUANTA_E2E_ARTIFACTS": str(ARTIFACTS),
            },
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert browser.returncode == 0, f"browser test failed:\n{browser.stdout}\n{browser.stderr}"
        assert (ARTIFACTS / "overview.png").exists()
