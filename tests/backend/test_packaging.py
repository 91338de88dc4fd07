"""pyproject.toml as current setuptools reads it: no deprecated form left to warn about."""

import re
import tomllib

from quanta.core.config import REPO_ROOT

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# The first setuptools that reads `project.license` as an SPDX expression; before it, the
# TOML table form ({text = ...}) was the only one, and from it the table is deprecated.
SPDX_SETUPTOOLS = (77, 0)


def test_the_license_is_an_spdx_expression_that_the_build_backend_reads() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    (setuptools,) = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    minimum = re.fullmatch(r"setuptools>=(\d+)(?:\.(\d+))?", setuptools)
    assert minimum, setuptools
    assert (int(minimum[1]), int(minimum[2] or 0)) >= SPDX_SETUPTOOLS
