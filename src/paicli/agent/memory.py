"""Project memory: the instruction files a project keeps for coding agents, read into the
system prompt.

`PAICLI.md`, `AGENTS.md` and `CLAUDE.md` are read in every folder from the repository root
(the nearest folder above the project with a `.git`, else the project folder itself) down
to the project folder, plus the user's own `~/.paicli/PAICLI.md`, which comes first. Files
are read the safe way config files are (regular files only, no symbolic link out of the
project, at most 1 MiB each) and cut to `MAX_FILE_CHARS`; the whole block to
`MAX_TOTAL_CHARS`. A file that cannot be read is skipped and named in `problems`.

`ProjectMemory.text()` re-reads only what changed on disk (by size and mtime), so a file
written during the session (`/init`) is in the next request.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from paicli.config_files import ConfigFileError, read_config_text

__all__ = ["MEMORY_FILES", "ProjectMemory"]

MEMORY_FILES = ("PAICLI.md", "AGENTS.md", "CLAUDE.md")
MAX_FILE_CHARS = 20_000
MAX_TOTAL_CHARS = 40_000


@dataclass
class ProjectMemory:
    """The memory files of `project` (and the user's, in `user_dir`)."""

    project: Path
    user_dir: Path | None = None
    problems: list[str] = field(default_factory=list)
    _read: dict[Path, tuple[tuple[int, int], str]] = field(default_factory=dict)

    def files(self) -> list[Path]:
        """The memory files that exist, in the order they are read."""
        candidates: list[tuple[Path, Path | None]] = []
        if self.user_dir is not None:
            candidates.append((self.user_dir / "PAICLI.md", None))
        top = _repository_root(self.project)
        folders = [self.project, *self.project.parents]
        chain = list(reversed(folders[: folders.index(top) + 1]))
        for folder in chain:
            candidates += [(folder / name, top) for name in MEMORY_FILES]
        return [path for path, _ in candidates if os.path.lexists(path)]

    def text(self) -> str:
        """The memory block for the system prompt ("" when there is no memory file)."""
        top = _repository_root(self.project)
        parts: list[str] = []
        total = 0
        for path in self.files():
            inside = None if self.user_dir is not None and path.parent == self.user_dir else top
            content = self._content(path, inside)
            if not content.strip():
                continue
            if len(content) > MAX_FILE_CHARS:
                content = content[:MAX_FILE_CHARS] + f"\n[cut at {MAX_FILE_CHARS:,} characters]"
            if total + len(content) > MAX_TOTAL_CHARS:
                parts.append(f"[{self._shown(path)} and later memory files left out: too long]")
                break
            total += len(content)
            parts.append(f'<memory file="{self._shown(path)}">\n{content.strip()}\n</memory>')
        return "\n\n".join(parts)

    def _content(self, path: Path, inside: Path | None) -> str:
        try:
            stat = os.stat(path)
        except OSError:
            return ""
        stamp = (stat.st_size, stat.st_mtime_ns)
        cached = self._read.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            content = read_config_text(path, self._shown(path), inside=inside) or ""
        except ConfigFileError as exc:
            self.problems.append(f"memory file skipped: {exc}")
            content = ""
        self._read[path] = (stamp, content)
        return content

    def _shown(self, path: Path) -> str:
        if self.user_dir is not None and path.parent == self.user_dir:
            return "~/.paicli/" + path.name
        top = _repository_root(self.project)
        return path.relative_to(top).as_posix() if path.is_relative_to(top) else str(path)


def _repository_root(project: Path) -> Path:
    """The nearest folder at or above `project` holding `.git`; `project` when none does."""
    for folder in (project, *project.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return project
