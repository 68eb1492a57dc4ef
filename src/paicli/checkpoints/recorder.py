"""`Checkpoints`: what a run records of each turn, for `/rewind` and `paicli rewind`.

A turn begins before its prompt is prepared (so the `!` lines it runs are in it) and ends
once the agent answered, before the conversation is saved. In between, the file tools tell
it a file's content before they change it and after (`changing`), and commands are looked
at around (`ProjectScan`). Each file keeps, per turn, the state it had before the turn
first changed it and the state the turn left it in. Outside a turn (an editor's ACP session,
no session saved) nothing is recorded. Blocking: called off the event loop, under one lock.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from paicli.checkpoints.scan import ProjectScan
from paicli.checkpoints.store import (
    ABSENT,
    PROMPT_CHARS,
    UNKNOWN,
    Change,
    CheckpointStore,
    Limits,
    State,
    Turn,
    prune_old,
)

__all__ = ["Checkpoints", "fingerprint"]


def _state(store: CheckpointStore, content: bytes | str | None) -> State:
    if content is None:
        return ABSENT
    return UNKNOWN if isinstance(content, str) else store.put(content)


COMMAND_CHARS = 200


def fingerprint(message: Mapping[str, object]) -> str:
    """A conversation message's hash, to find a turn's first message again."""
    text = json.dumps(message, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Checkpoints:
    """The checkpoints of one run, kept under `folder` per conversation; `roots` are the
    folders the tools work in (a rewind writes there only), `skip` paicli's own folder."""

    def __init__(
        self,
        folder: Path,
        roots: Sequence[Path],
        *,
        skip: Sequence[Path] = (),
        limits: Limits | None = None,
    ) -> None:
        self.folder = folder
        self.roots = [str(root) for root in roots]
        self.limits = limits or Limits()
        self.scan = ProjectScan(roots, skip)
        self.store: CheckpointStore | None = None
        self.turn: Turn | None = None
        self._lock = threading.Lock()
        self._pruned = False

    def open(self, session_id: str) -> CheckpointStore:
        """The store of the conversation `session_id` (the one in use, if it is that)."""
        with self._lock:
            if not self._pruned:  # once a run: conversations a month old go
                self._pruned = True
                prune_old(self.folder)
            if self.store is None or self.store.session_id != session_id:
                self.store = CheckpointStore(self.folder, session_id, self.limits)
                # What the scan kept is in the other conversation's store: start again.
                self.scan = ProjectScan(self.scan.roots, self.scan.skip)
            return self.store

    def begin(self, session_id: str, prompt: str, messages: int) -> None:
        """A turn of the conversation `session_id` starts, after `messages` messages."""
        store = self.open(session_id)
        with self._lock:
            now = datetime.datetime.now().isoformat(timespec="seconds")
            self.turn = Turn(store.next_number(), prompt[:PROMPT_CHARS], now, messages)
            store.turns.append(self.turn)
            store.roots = self.roots

    def end(self, messages: Sequence[Mapping[str, object]]) -> None:
        """The turn is over; `messages`: the conversation now (no system prompt)."""
        with self._lock:
            turn, store, self.turn = self.turn, self.store, None
            if turn is None or store is None:
                return
            if len(messages) > turn.messages:
                turn.first = fingerprint(messages[turn.messages])
            store.save()

    @property
    def recording(self) -> bool:
        return self.turn is not None

    def changing(self, path: Path, before: bytes | str | None, by: str) -> None:
        """A file tool is about to change `path`, whose content is `before` (None: absent;
        UNKNOWN: too large to keep). Saved before the change is made."""
        with self._lock:
            turn, store = self.turn, self.store
            if turn is None or store is None or str(path) in turn.files:
                return
            state = _state(store, before)
            turn.files[str(path)] = Change(state, state, by)
            store.save()

    def changed(self, path: Path, after: bytes | str | None) -> None:
        """The file tool is done with `path`, which now holds `after` (None: absent)."""
        with self._lock:
            turn, store = self.turn, self.store
            if turn is None or store is None or (change := turn.files.get(str(path))) is None:
                return
            change.after = _state(store, after)
            store.current[str(path)] = change.after
            if change.after == change.before and change.by != "command":
                del turn.files[str(path)]  # (a failed or empty edit changed nothing)
            store.save()

    def before_command(self) -> None:
        """A command is about to run: the project as it is now is kept."""
        with self._lock:
            if self.turn is not None and self.store is not None:
                self.scan.before(self.store)

    def after_command(self, command: str) -> None:
        """The command has run: what it changed joins the turn."""
        with self._lock:
            turn, store = self.turn, self.store
            if turn is None or store is None:
                return
            changes = self.scan.after(store)
            turn.commands.append(" ".join(command.split())[:COMMAND_CHARS])
            for note in changes.notes:
                if note not in turn.notes:
                    turn.notes.append(note)
            for path, (before, after) in changes.files.items():
                self._command_change(turn, store, path, before, after)
            store.save()

    def _command_change(
        self, turn: Turn, store: CheckpointStore, path: str, before: State, after: State
    ) -> None:
        store.current[path] = after
        change = turn.files.get(path)
        if change is not None:
            change.after = after
            return
        if len(turn.files) >= self.limits.files_per_turn:
            note = (
                f"more than {self.limits.files_per_turn:,} files changed: the rest are not listed"
            )
            if note not in turn.notes:
                turn.notes.append(note)
            return
        turn.files[path] = Change(before, after, "command")
