"""Saved conversations: `~/.paicli/sessions/ID.json`, one per REPL session, rewritten after
each turn, so `paicli --continue` (the latest one of this project) and `paicli --resume
[ID]` can pick a conversation up again.

A file holds the project folder it belongs to, when it started and was last saved, the
model, a title (the first prompt, cut) and the messages without the system prompt (the
system prompt is rebuilt by the run that resumes it). Files are private (0600 in a 0700
folder), written atomically, and read through `paicli.config_files` (a regular file only,
opened without blocking, with a size cap: `--resume ID` names the file); an id is checked
before it becomes a file name, and a file that does not parse is skipped, never a crash.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from paicli.config_files import ConfigFileError, read_config_text
from paicli.llm.messages import Message, content_text
from paicli.private_files import write_atomically

__all__ = ["SavedSession", "SessionStore"]

# A session file larger than this is not read back (a conversation that size would not fit
# any model's window anyway).
MAX_SESSION_BYTES = 32 * 1024 * 1024
TITLE_CHARS = 80
_ID = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")


@dataclass(frozen=True)
class SavedSession:
    id: str
    project: str
    updated: str
    title: str
    messages: list[Message]
    model: str = ""


class SessionStore:
    """The saved conversations under `folder`, as seen from the project at `project`."""

    def __init__(self, folder: Path, project: Path) -> None:
        self.folder = folder
        self.project = str(project.resolve())

    @staticmethod
    def new_id() -> str:
        now = datetime.datetime.now()
        return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"

    def save(self, session_id: str, messages: list[Message], model: str = "") -> None:
        """Write the conversation (the system prompt left out); nothing for an empty one,
        unless it was saved before (a rewind emptied it)."""
        kept = [m for m in messages if m["role"] != "system"]
        if not kept and not self._path(session_id).exists():
            return
        first = next((m for m in kept if m["role"] == "user"), None)
        title = " ".join(content_text(first.get("content")).split())[:TITLE_CHARS] if first else ""
        document = {
            "id": session_id,
            "project": self.project,
            "updated": datetime.datetime.now().isoformat(timespec="seconds"),
            "model": model,
            "title": title,
            "messages": kept,
        }
        write_atomically(self._path(session_id), json.dumps(document).encode())

    def load(self, session_id: str) -> SavedSession | None:
        """The session `session_id` (of any project), or None when there is no such one."""
        if not _ID.fullmatch(session_id):
            return None
        return self._read(self._path(session_id))

    def elsewhere(self, session: SavedSession) -> str | None:
        """Why `session` is not resumed here: one line naming the project folder it belongs
        to and how to carry it on there (resumed here, it would move to this project)."""
        if session.project in ("", self.project):
            return None
        return (
            f"conversation {session.id} belongs to {session.project}; carry it on there: "
            f"paicli -C {shlex.quote(session.project)} --resume {session.id}"
        )

    def recent(self, limit: int = 20) -> list[SavedSession]:
        """This project's sessions, the most recently saved first."""
        try:
            names = sorted(os.listdir(self.folder), reverse=True)
        except OSError:
            return []
        found: list[SavedSession] = []
        for name in names:
            if not (name.endswith(".json") and _ID.fullmatch(name[:-5])):
                continue
            session = self._read(self.folder / name)
            if session is not None and session.project == self.project:
                found.append(session)
        found.sort(key=lambda s: s.updated, reverse=True)
        return found[:limit]

    def latest(self) -> SavedSession | None:
        sessions = self.recent(1)
        return sessions[0] if sessions else None

    def _path(self, session_id: str) -> Path:
        if not _ID.fullmatch(session_id):
            raise ValueError(f"not a session id: {session_id!r}")
        return self.folder / f"{session_id}.json"

    def _read(self, path: Path) -> SavedSession | None:
        try:
            text = read_config_text(path, str(path), max_bytes=MAX_SESSION_BYTES)
            if text is None:
                return None
            document = json.loads(text)
        except (ConfigFileError, ValueError, RecursionError):
            return None
        if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
            return None
        messages = [m for m in document["messages"] if _is_message(m)]
        return SavedSession(
            id=str(document.get("id", path.stem)),
            project=str(document.get("project", "")),
            updated=str(document.get("updated", "")),
            title=str(document.get("title", "")),
            messages=cast("list[Message]", messages),
            model=str(document.get("model", "")),
        )


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and value.get("role") in ("user", "assistant", "tool")
