"""Projects whose start asks nothing: their servers and permission rules were answered.

Before the REPL draws its prompt it must ask about a project's servers and allow rules the
user has not answered yet, which takes loading most of paicli (config, trust, rules). Once a
start has had every question answered (`remember`), the project's config files are kept as a
digest, with the state of the files holding the answers; a later start whose digest is the
same asks nothing, so its prompt can come first (`answered`). Any change to those files (a
new server, an edited rule, an answer given or revoked) means a start that loads and asks
first again. Standard library only: this runs before the prompt.

The user's own server and settings files are part of the digest too (a user server of the
same name hides a project's, `[projects]` in config.toml lets one read secrets). Any answer
given or revoked anywhere changes the answer files, so every project's next start asks first
once more (and is remembered again). A config file that is not a regular file, is larger than
any config file paicli reads, or leads out of the project has no digest: that start takes the
careful path (which reads such files with its own checks and says what is wrong).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

from paicli.config_files import ConfigFileError, read_config_text
from paicli.home import PaicliHome
from paicli.private_files import write_atomically

__all__ = ["QUESTION_FILES", "answered", "remember"]

# The project's files whose content decides what a start asks (relative to its root).
QUESTION_FILES = (
    ".mcp.json",
    ".paicli/mcp.json",
    ".paicli/settings.json",
    # Hooks are asked about too (paicli.hooks.approval).
    ".claude/settings.json",
    ".claude/settings.local.json",
)
_ABSENT = "\0absent"  # a file that does not exist (never the text of one that does)
_KEPT = 200  # projects remembered; the oldest are forgotten


def _content(path: Path, inside: Path | None) -> str | None:
    """`path`'s text, _ABSENT when it does not exist, None when it is no plain config file
    (`read_config_text`: not a regular file, too large, not UTF-8, or, with `inside`, reached
    through a link out of that folder; nothing but a regular file is opened)."""
    try:
        text = read_config_text(path, str(path), inside=inside)
    except ConfigFileError:
        return None
    return _ABSENT if text is None else text


def _digest(project: Path, home: PaicliHome) -> str | None:
    """What decides whether a start in `project` asks anything, hashed: the project's
    question files and the user's server and settings files (content), and the files holding
    the answers (size, time, inode: any answer given or revoked counts); None when one of them
    cannot be taken as a config file."""
    hashed = hashlib.sha256()
    files: list[tuple[Path, Path | None]] = [(project / name, project) for name in QUESTION_FILES]
    mine = (home.mcp_config, home.local_mcp_config(project), *home.settings_files)
    files += [(path, None) for path in mine]
    for path, inside in files:
        text = _content(path, inside)
        if text is None:
            return None
        hashed.update(f"{path}\0{len(text)}\0{text}".encode("utf-8", "surrogateescape"))
    for answers in (home.trust_store, home.permissions, home.hook_approvals):
        try:
            found = os.stat(answers)
        except OSError:
            hashed.update(b"none\0")
            continue
        hashed.update(f"{found.st_size}:{found.st_mtime_ns}:{found.st_ino}\0".encode())
    return hashed.hexdigest()


def _records(home: PaicliHome) -> dict[str, str]:
    text = _content(home.answered_projects, None)
    try:
        value = json.loads(text if text and text != _ABSENT else "{}")
    except ValueError:
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
