"""Private files: the data directory, the SQLite store and the generated secrets.

The embedded store holds query examples and plans, and the generated secret key sits beside
it, so none of it may be readable by other local users whatever the process's umask is.
"""

import os
import stat
from pathlib import Path

from quanta.core.config import Settings

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
# SQLite writes these next to the database in WAL mode (it gives them the database's mode).
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def ensure_data_dir(settings: Settings) -> Path:
    """Create the data directory 0700, or make an existing one of ours 0700; return it."""
    return private_dir(settings.data_dir)


def private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) with mode 0700, or tighten it if we own it.

    A shared directory (sticky bit, like /tmp) or one owned by another user is left alone:
    pointing the data directory at one must not change it for everybody else.
    """
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    info = path.stat()
    ours = info.st_uid == os.getuid() and not info.st_mode & stat.S_ISVTX
    if ours and stat.S_IMODE(info.st_mode) != PRIVATE_DIR_MODE:
        path.chmod(PRIVATE_DIR_MODE)
    return path


def private_file(path: Path) -> None:
    """Create `path` empty with mode 0600 if it is missing; make an existing one 0600."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        if stat.S_IMODE(path.stat().st_mode) != PRIVATE_FILE_MODE:
            path.chmod(PRIVATE_FILE_MODE)
    else:
        os.close(fd)


def private_sqlite_store(database: Path) -> None:
    """Make the SQLite file 0600 before SQLite opens it, and its side files if present.

    SQLite creates the -wal and -shm files with the database file's mode, so a database
    created 0600 keeps them private too; existing ones (from an older install) are tightened.
    """
    private_file(database)
    for suffix in SQLITE_SIDE_FILES:
        side = database.with_name(database.name + suffix)
        if side.exists():
            side.chmod(PRIVATE_FILE_MODE)
