"""The C extensions: the one part of the build pyproject.toml cannot declare.

Each has a pure-Python reference implementation that it must match (tests compare them);
the Python code is used where an extension could not be imported.
"""

from setuptools import Extension, setup

COMPILE_ARGS = ["-O2", "-Wall", "-Wextra", "-Werror"]

setup(
    ext_modules=[
        Extension(
            "quanta.analysis._histogram",
            ["backend/quanta/analysis/_histogram.c"],
            extra_compile_args=COMPILE_ARGS,
        ),
        Extension(
            "quanta.analysis._slowlog",
            ["backend/quanta/analysis/_slowlog.c"],
            extra_compile_args=COMPILE_ARGS,
        ),
        Extension(
            "quanta.analysis._literal_mask",
            ["backend/quanta/analysis/_literal_mask.c"],
            extra_compile_args=COMPILE_ARGS,
        ),
    ],
)
