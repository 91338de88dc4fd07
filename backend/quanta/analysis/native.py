"""The C accelerations of ``analysis/``: the one place that loads them and says which are loaded.

Three extensions, each with a pure-Python reference implementation that it must match
(tests compare the two): ``_slowlog`` (the usual slow-log entry), ``_literal_mask`` (the
fingerprint cache key) and ``_histogram`` (histogram encode, decode and add). ``setup.py``
builds them where a C compiler is found and leaves them out, with a warning, where none is:
the package then runs on the Python code, slower but with the same results. The modules
that use an extension take it from here (``native.slowlog`` and so on: ``None`` when it is
not loaded) and never import it themselves, so that the switch below covers every use.

``QUANTA_NATIVE=0`` in the environment loads none of them, so the whole suite (and a
suspect deployment) can run on the Python fallbacks. It is read here, from the process
environment, and not from the server's ``Settings``: ``analysis/`` is pure and has no
settings, the agent uses it without the server's configuration, and the choice must be
made when the modules that bind the extensions are first imported, before any settings
object exists. Being no setting, it is not read from ``.env``: set it in the environment
of the process (``QUANTA_NATIVE=0 quanta serve``).

Example:
    >>> from quanta.analysis import native
    >>> sorted(native.loaded())
    ['_histogram', '_literal_mask', '_slowlog']
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["ENV_SWITCH", "EXTENSIONS", "enabled", "histogram", "literal_mask", "loaded", "summary"]

ENV_SWITCH = "QUANTA_NATIVE"
"""Environment variable: ``0`` turns the C extensions off (anything else, or unset: on)."""

EXTENSIONS = ("_histogram", "_literal_mask", "_slowlog")
"""The extensions ``setup.py`` builds, by module name under ``quanta.analysis``."""


def enabled() -> bool:
    """Whether the environment allows native code (``QUANTA_NATIVE`` is not ``0``)."""
    return os.environ.get(ENV_SWITCH, "1").strip() != "0"


_ENABLED = enabled()
# Why each extension that was allowed is missing (the ImportError's text), for the summary.
_MISSING: dict[str, str] = {}


def _load(name: str) -> ModuleType | None:
    """The extension, or None where it is switched off or was not built."""
    if not _ENABLED:
        return None
    try:
        return importlib.import_module(f"quanta.analysis.{name}")
    except ImportError as exc:  # built without a compiler: the Python code takes over
        _MISSING[name] = str(exc)
        return None


histogram = _load("_histogram")
literal_mask = _load("_literal_mask")
slowlog = _load("_slowlog")
_MODULES = {"_histogram": histogram, "_literal_mask": literal_mask, "_slowlog": slowlog}


def loaded() -> dict[str, bool]:
    """Each extension's name and whether it is in use in this process.

    Example:
        >>> all(isinstance(on, bool) for on in loaded().values())
        True
    """
    return {name: _MODULES[name] is not None for name in EXTENSIONS}


def summary() -> str:
    """One line for start-up logs and ``--version``: what is loaded, and why not the rest.

    Example:
        >>> summary().startswith("native code: ")
        True
    """
    if not _ENABLED:
        return f"native code: off ({ENV_SWITCH}=0), pure Python"
    on = [name for name, is_on in loaded().items() if is_on]
    off = [name for name, is_on in loaded().items() if not is_on]
    if not off:
        return f"native code: {', '.join(on)}"
    return (
        f"native code: {', '.join(on) or 'none'}; not built: {', '.join(off)} "
        "(pure Python, slower; install with a C compiler to build them)"
    )
