"""The agent installs on database hosts without the server's dependencies."""

import subprocess
import sys

SERVER_ONLY = ("sqlalchemy", "fastapi", "celery", "alembic", "psycopg", "uvicorn")


def test_agent_imports_none_of_the_server_dependencies() -> None:
    probe = (
        "import sys, quanta_agent.cli, quanta_agent.importer, quanta_agent.runner; "
        "from quanta_agent.collectors import FACTORIES, find_factory; "
        "assert all(find_factory(source) for source in FACTORIES); "
        f"print(sorted(m for m in {SERVER_ONLY!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
