"""Where the slow-log tailer stopped: file identity, offset and parser state, on disk.

A checkpoint names the end of the last complete entry that is safely spooled (or shipped).
It is replaced atomically (write, fsync, rename, fsync the directory), so a crash leaves
either the old or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

CHECKPOINT_FILE = "checkpoint.json"
# The first bytes of a log file tell a re-created or copy-truncated file from the one a
# checkpoint names, even when the inode number is reused. A server banner alone is about
# 200 bytes and the same in every file, so take more.
HEAD_BYTES = 4096
_FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """Which file: device, inode and a hash of its first ``head_len`` bytes."""

    dev: int
    ino: int
    head_len: int
    head_sha: str

    def key(self) -> str:
        """A short stable text for batch ids and log messages."""
        return f"{self.dev}:{self.ino}:{self.head_sha[:16]}"


def identify(fd: int, *, limit: int = HEAD_BYTES) -> FileIdentity:
    """The identity of an open file, hashing up to ``limit`` of its first bytes."""
    st = os.fstat(fd)
    head = os.pread(fd, min(limit, st.st_size), 0)
    return FileIdentity(st.st_dev, st.st_ino, len(head), hashlib.sha256(head).hexdigest())


def matches(fd: int, identity: FileIdentity) -> bool:
    """Whether an open file is the one ``identity`` names (same inode, same first bytes)."""
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (identity.dev, identity.ino):
        return False
    head = os.pread(fd, identity.head_len, 0)
    return len(head) == identity.head_len and hashlib.sha256(head).hexdigest() == identity.head_sha


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The tailer's position in one slow log.

    Attributes:
        path: The path the file was followed under (it may have been renamed since).
        file: Identity of the file.
        offset: End of the last entry safely spooled; reading resumes here.
        time_line: The last ``# Time:`` line before ``offset`` (servers write it only when
            the time changes, so entries after ``offset`` may rely on it).
        db: The default database in effect at ``offset`` (``use db;`` is written only when
            it changes).
        seq: Sequence number of the last spooled batch when this was written, to tell it
            from a newer checkpoint carried by a spooled batch after a crash.
    """

    path: str
    file: FileIdentity
    offset: int
    time_line: str | None
    db: str | None
    seq: int

    def to_json(self) -> dict[str, Any]:
        """The checkpoint as JSON-ready data."""
        return {"version": _FORMAT_VERSION, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Checkpoint:
        """Rebuild a checkpoint written by :meth:`to_json`; KeyError/TypeError if malformed."""
        return cls(
            path=str(data["path"]),
            file=FileIdentity(**data["file"]),
            offset=int(data["offset"]),
            time_line=data["time_line"],
            db=data["db"],
            seq=int(data["seq"]),
        )


def load_checkpoint(directory: Path) -> Checkpoint | None:
    """The checkpoint stored in ``directory``, or None if there is none (or it is unusable)."""
    try:
        data = json.loads((directory / CHECKPOINT_FILE).read_text(encoding="utf-8"))
        return Checkpoint.from_json(data)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"unreadable checkpoint in {directory}: {exc}") from exc


def save_checkpoint(directory: Path, checkpoint: Checkpoint) -> None:
    """Replace the checkpoint in ``directory`` atomically and durably."""
    write_atomically(directory / CHECKPOINT_FILE, json.dumps(checkpoint.to_json()).encode())


class CheckpointError(Exception):
    """A checkpoint file exists but cannot be used; the message says which and why."""


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves the old content or the new one."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_directory(path.parent)


def fsync_directory(directory: Path) -> None:
    """Make a rename or unlink in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
