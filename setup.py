"""The C extensions: the one part of the build pyproject.toml cannot declare.

Each has a pure-Python reference implementation that it must match (tests compare them);
the Python code is used where an extension could not be imported.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "quanta.analysis._histogram",
            ["backend/quanta/analysis/_histogram.c"],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Werror"],
        ),
    ],
)
