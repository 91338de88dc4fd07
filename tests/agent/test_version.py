"""`quanta-agent --version` says which C extensions the agent runs, or that it runs pure Python.

The line a DBA reads on a database host without a compiler (see the README).
"""

import os
import subprocess
import sys

from typer.testing import CliRunner

import quanta_agent
from quanta.analysis import native
from quanta_agent.cli import app


def test_version_names_the_loaded_extensions() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"quanta-agent {quanta_agent.__version__}\n{native.summary()}\n"


def test_version_with_native_code_off_says_pure_python() -> None:
    probe = "from quanta_agent.cli import app; app(['--version'])"
    env = {**os.environ, native.ENV_SWITCH: "0"}
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"quanta-agent {quanta_agent.__version__}",
        "native code: off (QUANTA_NATIVE=0), pure Python",
    ]
