"""One conversation's checkpoints on disk: `~/.paicli/checkpoints/SESSION-ID/`.

    index.json     the turns (prompt, where the turn begins in the saved conversation, each
                   file it changed: the content hash before and after, or that the file was
                   absent, or unknown), and what paicli last left each file as (`current`)
    blobs/SHA256   file contents, content-addressed (stored once however often they recur)

and `~/.paicli/checkpoints/blobs/SHA256`, a hard link to each content any conversation keeps,
so conversations of one project share one copy of its files on disk (the link count says
when no conversation keeps one any more: `prune_old` then deletes it).

Everything is private (0600 files in 0700 folders) and bounded: a content over
`Limits.blob_bytes` or past the store's `Limits.store_bytes` is not kept (that version is
"unknown", and a rewind says it cannot bring it back), and only the last `Limits.turns`
turns are kept (the blobs no turn needs any more are deleted). The index is rewritten
atomically before a file tool changes a file, so a crash never loses what was replaced.
A session id is checked before it names a folder; an index that does not parse is an empty
one, never a crash.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paicli.config_files import ConfigFileError, open_regular, read_config_text
from paicli.private_files import PRIVATE_FILE_MODE, make_private_dir, write_atomically

__all__ = [
    "ABSENT",
    "UNKNOWN",
    "Change",
    "CheckpointStore",
    "Limits",
    "State",
    "Turn",
    "digest",
    "prune_old",
]

# A file's state at one moment: the SHA-256 of its content, ABSENT (there was no file) or
# UNKNOWN (there was one, but its content was not kept: too large, or the store was full).
State = str | None
ABSENT: State = None
UNKNOWN = "?"

_SESSION = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")
_HEX = re.compile(r"[0-9a-f]{64}")
# The index of a store holding `Limits.turns` turns of a busy session stays far below this.
MAX_INDEX_BYTES = 16 * 1024 * 1024
SHARED = "blobs"  # beside the conversations: one link to each content any of them keeps
KEEP_DAYS = 30  # a conversation's checkpoints are kept this long after its last turn
PROMPT_CHARS = 8_000  # the prompt as typed (a rewind offers it again), cut


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Limits:
    """How much a session's checkpoints may hold."""

    blob_bytes: int = 5 * 1024 * 1024  # as write_file's own cap: every tool write fits
    store_bytes: int = 256 * 1024 * 1024  # one session's blobs together
    turns: int = 100  # as Claude Code: the last 100 checkpoints of a session
    files_per_turn: int = 5_000  # a command that changes more is said, not listed


@dataclass
class Change:
    """One file in one turn: its state before the turn changed it, and after."""

    before: State
    after: State
    by: str  # "write_file", "edit_file" or "command"


@dataclass
class Turn:
    """One prompt of the conversation and what it changed. `messages`: how many messages
    (the system prompt left out) the conversation had before it; `first`: the hash of the
    turn's first message, to find it again if the conversation was compacted since."""

    number: int
    prompt: str
    at: str
    messages: int
    first: str | None = None
    files: dict[str, Change] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "n": self.number,
            "prompt": self.prompt,
            "at": self.at,
            "messages": self.messages,
            "first": self.first,
            "files": {
                path: {"before": c.before, "after": c.after, "by": c.by}
                for path, c in self.files.items()
            },
            "commands": self.commands,
            "notes": self.notes,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Turn | None:
        number, messages = value.get("n"), value.get("messages")
        if not isinstance(number, int) or not isinstance(messages, int) or messages < 0:
            return None
        files: dict[str, Change] = {}
        raw_files = value.get("files")
        for path, change in (raw_files if isinstance(raw_files, dict) else {}).items():
            if not (isinstance(path, str) and os.path.isabs(path) and isinstance(change, dict)):
                continue
            before, after = change.get("before"), change.get("after")
            if _state_ok(before) and _state_ok(after):
                files[path] = Change(before, after, str(change.get("by", "")))
        first = value.get("first")
        return cls(
            number=number,
            prompt=str(value.get("prompt", "")),
            at=str(value.get("at", "")),
            messages=messages,
            first=first if isinstance(first, str) else None,
            files=files,
            commands=_strings(value.get("commands")),
            notes=_strings(value.get("notes")),
        )


def prune_old(folder: Path, days: float = KEEP_DAYS, now: float | None = None) -> list[str]:
    """Delete the checkpoints of conversations not recorded in for `days` days (as Claude
    Code cleans up after 30); the session ids removed."""
    limit = (time.time() if now is None else now) - days * 86_400
    removed: list[str] = []
    with suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if not _SESSION.fullmatch(entry.name) or entry.is_symlink():
                continue
            try:
                index = os.path.join(entry.path, "index.json")
                # (a folder without its index yet: a first turn is being recorded there)
                last = os.stat(index if os.path.exists(index) else entry.path).st_mtime
            except OSError:
                continue
            if last < limit:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.name)
    _collect_shared(folder / SHARED)
    return removed


def _collect_shared(shared: Path) -> None:
    """Delete the shared contents no conversation keeps any more: a shared blob is a hard
    link of each conversation's copy, so the file system counts who keeps it."""
    with suppress(OSError), os.scandir(shared) as entries:
        for entry in entries:
            with suppress(OSError):
                if entry.stat(follow_symlinks=False).st_nlink <= 1:
                    os.unlink(entry.path)


def _write_blob(path: Path, data: bytes) -> None:
    """Keep `data` at `path` (0600, atomically), without the fsync `write_atomically` does:
    the first command of a session keeps a whole project, and a blob a crash cut short no
    longer matches its name, which `get` checks (that content is then said to be lost)."""
    make_private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, PRIVATE_FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise


def _state_ok(value: object) -> bool:
    return (
        value is None
        or value == UNKNOWN
        or (isinstance(value, str) and bool(_HEX.fullmatch(value)))
    )


def _strings(value: object) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


class CheckpointStore:
    """The checkpoints of the session `session_id` under `folder` (paicli's checkpoints
    folder). `roots`: the folders the session's tools worked in, kept with the index."""

    def __init__(self, folder: Path, session_id: str, limits: Limits | None = None) -> None:
        if not _SESSION.fullmatch(session_id):
            raise ValueError(f"not a session id: {session_id!r}")
        self.session_id = session_id
        self.folder = folder / session_id
        self.limits = limits or Limits()
        self.turns: list[Turn] = []
        self.current: dict[str, State] = {}
        self.roots: list[str] = []
        self._stored: int | None = None  # bytes in blobs/, counted on first need
        # Contents kept for a command that may yet change them (`ProjectScan`), which no turn
        # refers to yet: never collected while this store is in use.
        self.pinned: set[str] = set()
        self._load()

    @staticmethod
    def exists(folder: Path, session_id: str) -> bool:
        return (
            bool(_SESSION.fullmatch(session_id)) and (folder / session_id / "index.json").is_file()
        )

    # -- blobs -------------------------------------------------------------------------------

    def put(self, data: bytes) -> State:
        """Keep `data`; its hash, or UNKNOWN when it is too large or the store is full."""
        if len(data) > self.limits.blob_bytes:
            return UNKNOWN
        key = digest(data)
        path = self._blob(key)
        if path.exists():
            return key
        if self.stored_bytes() + len(data) > self.limits.store_bytes:
            return UNKNOWN
        shared = self.folder.parent / SHARED / key
        try:  # another conversation keeps the same content: one copy on disk for both
            make_private_dir(path.parent)
            os.link(shared, path, follow_symlinks=False)
        except OSError:
            _write_blob(path, data)
            with suppress(OSError):
                make_private_dir(shared.parent)
                os.link(path, shared, follow_symlinks=False)
        self._stored = self.stored_bytes() + len(data)
        return key

    def has(self, key: str) -> bool:
        return bool(_HEX.fullmatch(key)) and self._blob(key).is_file()

    def get(self, key: str) -> bytes | None:
        """The content stored as `key`, None when it is not there (or does not match it)."""
        if not _HEX.fullmatch(key):
            return None
        try:
            file = open_regular(self._blob(key), key, max_bytes=self.limits.blob_bytes)
            if file is None:
                return None
            with file:
                data = file.read()
        except ConfigFileError:
            return None
        return data if digest(data) == key else None

    def stored_bytes(self) -> int:
        if self._stored is None:
            total = 0
            with suppress(OSError), os.scandir(self.folder / "blobs") as entries:
                for entry in entries:
                    with suppress(OSError):
                        total += entry.stat(follow_symlinks=False).st_size
            self._stored = total
        return self._stored

    def _blob(self, key: str) -> Path:
        return self.folder / "blobs" / key

    # -- the index ---------------------------------------------------------------------------

    def next_number(self) -> int:
        return self.turns[-1].number + 1 if self.turns else 1

    def turn(self, number: int) -> Turn | None:
        return next((t for t in self.turns if t.number == number), None)

    def save(self) -> None:
        """Write the index (the oldest turns past the limit dropped, with blobs no one needs)."""
        dropped = self.turns[: max(0, len(self.turns) - self.limits.turns)]
        if dropped:
            self.turns = self.turns[len(dropped) :]
            self._collect()
        document = {
            "version": 1,
            "session": self.session_id,
            "roots": self.roots,
            "current": self.current,
            "turns": [turn.as_json() for turn in self.turns],
        }
        make_private_dir(self.folder)
        write_atomically(self.folder / "index.json", json.dumps(document).encode())

    def drop_from(self, number: int) -> None:
        """Forget turn `number` and every later one (their conversation was rewound)."""
        self.turns = [turn for turn in self.turns if turn.number < number]
        self._collect()
        self.save()

    def _collect(self) -> None:
        """Delete the blobs no kept turn, no `current` state and no `pinned` one refers to."""
        needed = set(self._referenced())
        with suppress(OSError), os.scandir(self.folder / "blobs") as entries:
            for entry in entries:
                if entry.name not in needed and not entry.name.startswith("."):
                    with suppress(OSError):
                        os.unlink(entry.path)
        self._stored = None

    def _referenced(self) -> Iterable[str]:
        yield from self.pinned
        yield from (state for state in self.current.values() if state)
        for turn in self.turns:
            for change in turn.files.values():
                yield from (state for state in (change.before, change.after) if state)

    def _load(self) -> None:
        path = self.folder / "index.json"
        try:
            text = read_config_text(path, str(path), max_bytes=MAX_INDEX_BYTES)
            document = json.loads(text) if text is not None else None
        except (ConfigFileError, ValueError, RecursionError):
            document = None
        if not isinstance(document, dict):
            return
        turns = document.get("turns")
        for value in turns if isinstance(turns, list) else []:
            turn = Turn.from_json(value) if isinstance(value, dict) else None
            if turn is not None:
                self.turns.append(turn)
        current = document.get("current")
        if isinstance(current, dict):
            self.current = {
                path: state
                for path, state in current.items()
                if isinstance(path, str) and os.path.isabs(path) and _state_ok(state)
            }
        self.roots = [r for r in _strings(document.get("roots")) if os.path.isabs(r)]
