"""Projects whose start asks nothing: their servers and permission rules were answered.

Before the REPL draws its prompt it must ask about a project's servers and allow rules the
user has not answered yet, which takes loading most of paicli (config, trust, rules). Once a
start has had every question answered (`remember`), the project's config files are kept as a
digest, with the state of the files holding the answers; a later start whose digest is the
same asks nothing, so its prompt can come first (`answered`). Any change to those files (a
new server, an edited rule, an answer given or revoked) means a start that loads and asks
first again. Standard library only: this runs before the prompt.

A config file that is not a regular file, or larger than any config file paicli reads, has
no digest: that start takes the careful path (which reads such files with its own checks and
says what is wrong).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path

from paicli.home import PaicliHome
from paicli.private_files import write_atomically

__all__ = ["QUESTION_FILES", "answered", "remember"]

# The project's files whose content decides what a start asks (relative to its root).
QUESTION_FILES = (".mcp.json", ".paicli/mcp.json", ".paicli/settings.json")
_MAX_BYTES = 1 << 20  # above what paicli reads as a config file
_KEPT = 200  # projects remembered; the oldest are forgotten


def _digest(project: Path, home: PaicliHome) -> str | None:
    """The project's question files (content) and the answer files (size, time), hashed;
    None when one of the project's files cannot be taken as a config file."""
    hashed = hashlib.sha256()
    for name in QUESTION_FILES:
        hashed.update(name.encode() + b"\0")
        try:
            # O_NONBLOCK: a FIFO planted as .mcp.json must not hang the start here.
            fd = os.open(project / name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        except FileNotFoundError:
            hashed.update(b"absent\0")
            continue
        except OSError:
            return None
        try:
            found = os.fstat(fd)
            if not stat.S_ISREG(found.st_mode) or found.st_size > _MAX_BYTES:
                return None
            data = os.read(fd, _MAX_BYTES + 1)
        finally:
            os.close(fd)
        hashed.update(len(data).to_bytes(8, "big") + data)
    for answers in (home.trust_store, home.permissions):
        try:
            found = os.stat(answers)
        except OSError:
            hashed.update(b"none\0")
            continue
        hashed.update(f"{found.st_size}:{found.st_mtime_ns}:{found.st_ino}\0".encode())
    return hashed.hexdigest()


def _records(home: PaicliHome) -> dict[str, str]:
    try:
        with open(home.answered_projects, "rb") as file:
            value = json.loads(file.read(_MAX_BYTES))
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def answered(project: Path, home: PaicliHome) -> bool:
    """Whether a start in `project` (its root) asks nothing, as far as the record knows."""
    digest = _digest(project, home)
    return digest is not None and _records(home).get(os.path.abspath(project)) == digest


def remember(project: Path, home: PaicliHome) -> None:
    """Note that every question of a start in `project` is answered (after the answers
    were saved). A record that cannot be written costs the next start its head start."""
    digest = _digest(project, home)
    if digest is None:
        return
    records = _records(home)
    key = os.path.abspath(project)
    records.pop(key, None)
    records[key] = digest  # the newest last
    kept = dict(list(records.items())[-_KEPT:])
    with contextlib.suppress(OSError):
        write_atomically(home.answered_projects, json.dumps(kept, indent=1).encode())
