"""A task's own copy of its folder, the diff of what the run changed, and its removal.

Each task works in `SCRATCH/<line>/work`: a detached git worktree of its repository (at
`ref`, else HEAD; a folder inside a repository is that repository's worktree, entered at the
same place), or a copy of its plain folder (symlinks copied as links, never followed; FIFOs,
sockets and devices left out), or an empty folder. A copy's starting state is kept in a
repository of ours beside it (`SCRATCH/<line>/start.git`), so both kinds are diffed by git
the same way: every file added, then the index against the start. Git never runs a
configured diff program or text filter here, nor a configured file-system monitor or hook,
and asks no one for anything.

`remove` undoes `prepare` whatever state a killed worker left (the owner of the worker calls
it after a timeout): the worktree unregistered, the scratch folder deleted.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from paicli.batch.task import Task
from paicli.errors import PaicliError

__all__ = ["MAX_DIFF", "Workspace", "WorkspaceError", "prepare", "remove", "scratch_of"]

# A diff is part of a result line: beyond 4 MiB it is cut (and says so); the work itself
# was in the folder, and a result file of gigabytes helps nobody.
MAX_DIFF = 4 * 1024 * 1024
# Git on a local repository answers in well under this; a hung one (a lock, a network
# filesystem) must not hold the task forever: the task's own timeout may be longer.
GIT_TIMEOUT = 120.0
CUT = "\n[paicli: the diff is longer than 4 MiB and was cut here]\n"
# A plain folder is copied for each task: past these it is refused (see `_copy`).
MAX_COPY_ENTRIES = 100_000
MAX_COPY_BYTES = 4 * 2**30
QUIET_GIT = (
    "-c",
    "core.hooksPath=/dev/null",
    # A repository's own config may name a program git runs on every index refresh
    # (`worktree add`, `add -A`): a folder from elsewhere, or a task's own commands, would
    # have it run here, outside any sandbox the task had.
    "-c",
    "core.fsmonitor=false",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "user.name=paicli batch",
    "-c",
    "user.email=batch@paicli.invalid",
    "-c",
    "core.autocrlf=false",
)


class WorkspaceError(PaicliError):
    """The task's folder cannot be had (no such folder, not a repository, a bad ref)."""


@dataclass(frozen=True)
class Workspace:
    """Where a task runs (`folder`), and how its changes are found: `git` is the git
    command (with its `--git-dir`/`-C`) that sees the work tree."""

    folder: Path
    tree: Path  # the top of what is diffed (the worktree or the copy)
    git: tuple[str, ...]


def scratch_of(scratch: Path, task: Task) -> Path:
    """The task's own scratch folder: named by its line number, never by its id."""
    return scratch / str(task.line)


def prepare(task: Task, scratch: Path) -> Workspace:
    """The task's folder made ready under `scratch` (see the module)."""
    own = scratch_of(scratch, task)
    if own.exists():
        remove(task, scratch)  # a run killed before it cleaned up
    own.mkdir(parents=True)
    work = own / "work"
    if task.folder is None:
        work.mkdir()
        return _snapshot(work, work, own, empty=True)
    source = Path(task.folder)
    if not source.is_dir():
        raise WorkspaceError(
            f"{task.folder}: {'not a folder' if source.exists() else 'no such folder'}"
        )
    top = _toplevel(source)
    if task.git and top is None:
        raise WorkspaceError(f"{task.folder}: not a git repository")
    if top is None:
        _copy(source, work, scratch)
        return _snapshot(work, work, own)
    ref = task.ref or "HEAD"
    commit = _git(["-C", str(top), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"])
    if commit.returncode != 0:
        raise WorkspaceError(f"{task.folder}: no commit {ref!r} in that repository")
    sha = commit.stdout.strip()
    added = _git(["-C", str(top), "worktree", "add", "--detach", "--quiet", str(work), sha])
    if added.returncode != 0:
        raise WorkspaceError(f"{task.folder}: git worktree add failed: {_last(added.stderr)}")
    inside = work / source.resolve().relative_to(top)
    return Workspace(inside if inside.is_dir() else work, work, ("-C", str(work)))


def diff(workspace: Workspace) -> str:
    """What the run changed in the folder, as a unified diff (cut at `MAX_DIFF`)."""
    git = workspace.git
    added = _git([*git, "add", "-A"])
    if added.returncode != 0:
        return f"[paicli: the diff could not be taken: {_last(added.stderr)}]\n"
    argv = ["git", *QUIET_GIT, *git, "diff", "--cached", "--no-color", "--no-ext-diff"]
    argv += ["--no-textconv", "--binary"]
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    ) as process:
        assert process.stdout is not None
        data = process.stdout.read(MAX_DIFF + 1)
        process.kill()  # done reading (it may still be writing a diff over the cap)
    text = data[:MAX_DIFF].decode("utf-8", errors="replace")
    return text + CUT if len(data) > MAX_DIFF else text


def remove(task: Task, scratch: Path) -> None:
    """The task's scratch folder gone, its worktree unregistered (best effort: a folder
    that cannot be removed stays, and says nothing worse than that)."""
    own = scratch_of(scratch, task)
    work = own / "work"
    if task.folder is not None and (top := _toplevel(Path(task.folder))) is not None:
        _git(["-C", str(top), "worktree", "remove", "--force", str(work)])
        shutil.rmtree(own, ignore_errors=True)
        _git(["-C", str(top), "worktree", "prune"])
    shutil.rmtree(own, ignore_errors=True)


def _copy(source: Path, work: Path, scratch: Path) -> None:
    """`source` copied to `work`: links as links, and no FIFO, socket or device (a copy
    would read a FIFO forever; shutil refuses them, and one refusal failed the task), nor
    the batch's scratch folder when it is inside (TMPDIR in the project: the copy copied
    itself until its path was too long); a folder over `MAX_COPY_ENTRIES` entries or
    `MAX_COPY_BYTES` is refused as the copy reaches the limit (a task's `cwd` of `/` or a
    home folder would fill the disk, once per task)."""
    own = _inside(scratch, source)
    seen = _Tally(str(source))

    def left_out(folder: str, names: list[str]) -> set[str]:
        special = seen.special_files(folder, names)
        if own is not None and os.path.dirname(own) == folder:
            special.add(os.path.basename(own))
        return special

    try:
        shutil.copytree(source, work, symlinks=True, ignore=left_out)
    except shutil.Error as exc:  # one (source, target, why) per file that failed
        failed = exc.args[0] if exc.args and isinstance(exc.args[0], list) else [("", "", exc)]
        path, _, why = failed[0]
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise WorkspaceError(f"cannot copy {path or source}: {why}{more}") from None


def _inside(folder: Path, source: Path) -> str | None:
    """`folder` as the copy of `source` would meet it (None: it is not inside)."""
    real, top = folder.resolve(), source.resolve()
    if top not in real.parents:
        return None
    return os.path.join(source, real.relative_to(top))


class _Tally:
    """What a copy has met so far, folder by folder (copytree asks before each)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.entries = 0
        self.size = 0

    def special_files(self, folder: str, names: list[str]) -> set[str]:
        """The FIFOs, sockets and devices among `names`, the others counted (WorkspaceError
        past the limits)."""
        special = set()
        for name in names:
            with contextlib.suppress(OSError):  # gone since: copytree says so, if it matters
                info = os.lstat(os.path.join(folder, name))
                mode = info.st_mode
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                    special.add(name)
                    continue
                self.entries += 1
                self.size += info.st_size if stat.S_ISREG(mode) else 0
        if self.entries > MAX_COPY_ENTRIES or self.size > MAX_COPY_BYTES:
            raise WorkspaceError(
                f"{self.source}: too big to copy for a task (over {MAX_COPY_ENTRIES:,} files "
                f"or {MAX_COPY_BYTES // 2**30} GiB); give a git repository (a worktree is made "
                "instead of a copy) or a smaller folder"
            )
        return special


def _snapshot(folder: Path, tree: Path, own: Path, *, empty: bool = False) -> Workspace:
    """A repository of ours, outside the work tree, holding its starting state (an empty
    folder needs no commit: the index of a repository without one is diffed against
    nothing)."""
    git = (f"--git-dir={own / 'start.git'}", f"--work-tree={tree}")
    steps = (["init", "--quiet"], ["add", "-A"], ["commit", "--quiet", "--allow-empty"])
    for step in steps[:1] if empty else steps:
        extra = ["-m", "start", "--no-verify"] if step[0] == "commit" else []
        done = _git([*git, *step, *extra])
        if done.returncode != 0:
            raise WorkspaceError(f"cannot record the folder's start: {_last(done.stderr)}")
    return Workspace(folder, tree, git)


def _toplevel(folder: Path) -> Path | None:
    if not folder.is_dir():
        return None
    found = _git(["-C", str(folder), "rev-parse", "--show-toplevel"])
    return Path(found.stdout.strip()) if found.returncode == 0 else None


def _git(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)  # ours, not whatever the caller's shell had
    try:
        return subprocess.run(
            ["git", *QUIET_GIT, *args],
            capture_output=True,
            text=True,
            errors="replace",
            stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT,
            env=env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(args, 1, "", str(exc))


def _last(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no reason given"
