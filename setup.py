"""The C extensions: the one part of the build pyproject.toml cannot declare.

Each has a pure-Python reference implementation that it must match (tests compare them),
so every extension is optional: where no C compiler is found (database hosts often have
none) or one fails, setuptools prints one line, ``building extension "..." failed``, and the
install goes on with the Python code, slower but giving the same results. What a process
has loaded is reported by ``quanta.analysis.native`` (``quanta-agent --version``).

Warnings are not errors here, so a newer compiler with new warnings never costs a user the
extensions; CI builds with ``CFLAGS=-Werror`` (``.ci/run``), and its tests of the extensions
fail where one is missing.
"""

from setuptools import Extension, setup

COMPILE_ARGS = ["-O2", "-Wall", "-Wextra"]
EXTENSIONS = ("_histogram", "_slowlog", "_literal_mask")

setup(
    ext_modules=[
        Extension(
            f"quanta.analysis.{name}",
            [f"backend/quanta/analysis/{name}.c"],
            extra_compile_args=COMPILE_ARGS,
            optional=True,
        )
        for name in EXTENSIONS
    ],
)
