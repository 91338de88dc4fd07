"""Where settings come from, told without loading the settings machinery.

:class:`quanta.core.config.Settings` reads QUANTA_* environment variables (any case), then
a ``.env`` file in the working directory; nothing else. Loading it (pydantic-settings, with
asyncio and more) costs most of the start-up of a short command such as `quanta digest`
(0.16 of 0.26 CPU seconds, measured): when neither source exists, every setting has its
default, and such a command can use the default it needs without loading the settings.

Example:
    >>> rules = None if configured() else ()  # unconfigured: the default, no rules
"""

import os
from pathlib import Path

__all__ = ["ENV_FILE", "ENV_PREFIX", "configured"]

ENV_PREFIX = "QUANTA_"
ENV_FILE = ".env"


def configured() -> bool:
    """Whether a QUANTA_* environment variable or a .env file may set any setting."""
    return Path(ENV_FILE).exists() or any(
        name.upper().startswith(ENV_PREFIX) for name in os.environ
    )
