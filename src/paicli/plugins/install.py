"""Fetching a plugin (or a marketplace): a local folder copied, a git repository cloned, into a
staging folder under `$PAICLI_HOME`, checked, then moved into place.

A source is a local folder or a git URL: `https://`, `http://`, `ssh://`, `file://` or
`user@host:path`. Anything else (`ext::`, `fd::`, an option) is refused before git runs, and
git itself is told the same (`GIT_ALLOW_PROTOCOL`), so a redirect or a submodule cannot bring
another transport. git runs without a shell, without a terminal to ask on, in a process group
of its own that is killed whole at the timeout.

The copy takes regular files and folders only: a symbolic link inside the source that stays
inside is copied as the file it points at (a link to a folder is left out), one that leads
out refuses the whole source; a name with a control character, too many files, too deep or
too large a tree refuse it too. Files are 0600 (0700 when executable), folders 0700. `.git`
is not copied.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from paicli.escape import one_line
from paicli.plugins.manifest import PluginError
from paicli.private_files import make_private_dir

__all__ = ["MAX_FILES", "check_source", "fetch_source", "is_git_url", "place"]

MAX_FILES = 5000
MAX_BYTES = 200 * 1024 * 1024  # a plugin is prompts and scripts; a marketplace a few of them
MAX_DEPTH = 24
# A clone of a plugin repository takes seconds; a server that answers nothing is stopped.
GIT_TIMEOUT = 120.0
ALLOWED_PROTOCOLS = "http:https:ssh:file"
_SCP = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^:]")
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f]")


def is_git_url(source: str) -> bool:
    """Whether `source` is a git URL of a transport paicli allows."""
    lowered = source.lower()
    return lowered.startswith(("https://", "http://", "ssh://", "file://")) or bool(
        _SCP.match(source)
    )


def check_source(source: str) -> None:
    """PluginError when `source` looks like a URL of a transport paicli does not allow."""
    if not is_git_url(source) and ("::" in source or "://" in source or source.startswith("-")):
        raise PluginError(
            f"{one_line(source, 120)}: not a folder nor a git URL paicli fetches "
            "(https, http, ssh, file, user@host:path)"
        )


def fetch_source(
    source: str,
    staging: Path,
    *,
    ref: str | None = None,
    timeout: float = GIT_TIMEOUT,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """`source` (a folder or a git URL) copied or cloned into a new folder under `staging`;
    PluginError in one line when it cannot be."""
    make_private_dir(staging)
    work = Path(tempfile.mkdtemp(dir=staging, prefix="fetch-"))
    target = work / "copy"
    try:
        if is_git_url(source):
            clone = work / "clone"
            _clone(source, clone, ref, timeout, environ)
            _copy_tree(clone, target)
        else:
            check_source(source)
            folder = Path(source).expanduser()
            if not folder.is_dir():
                raise PluginError(f"{one_line(source, 120)}: no such folder")
            _copy_tree(folder, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return target


def place(fetched: Path, destination: Path) -> None:
    """The fetched copy moved to `destination` (replacing what was there), and its staging
    folder removed."""
    make_private_dir(destination.parent)
    old = destination.with_name(f".{destination.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if destination.exists():
        destination.rename(old)
    fetched.rename(destination)
    shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(fetched.parent, ignore_errors=True)


def _clone(
    url: str, into: Path, ref: str | None, timeout: float, environ: Mapping[str, str] | None
) -> None:
    env = dict(os.environ if environ is None else environ)
    env.update(
        GIT_ALLOW_PROTOCOL=ALLOWED_PROTOCOLS,
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="true",
        SSH_ASKPASS="true",
        GIT_CONFIG_NOSYSTEM="1",
    )
    argv = ["git", "-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null"]
    argv += ["clone", "--quiet", "--depth", "1", "--no-recurse-submodules"]
    if ref is not None:
        if ref.startswith("-") or not ref.strip():
            raise PluginError(f"{one_line(ref, 60)}: not a branch or tag")
        argv += ["--branch", ref]
    argv += ["--", url, str(into)]
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        raise PluginError(f"git cannot run: {exc}") from exc
    try:
        _, error = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PluginError(f"{one_line(url, 120)}: git clone took over {timeout:g} s") from None
    finally:
        if process.returncode is None:  # timed out or interrupted: the whole group goes
            _kill_group(process)
    if process.returncode != 0:
        said = error.decode("utf-8", "replace").strip().splitlines()
        why = one_line(said[-1], 200) if said else f"exit {process.returncode}"
        raise PluginError(f"{one_line(url, 120)}: git clone failed: {why}")


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    # Every writer of the stderr pipe was in the group: it ends now; read it to close it.
    process.communicate()


def _copy_tree(source: Path, target: Path) -> None:
    root = Path(os.path.realpath(source))
    count, size = 0, 0
    make_private_dir(target)
    for top, folders, files in os.walk(root):
        here = Path(top)
        relative = here.relative_to(root)
        if len(relative.parts) > MAX_DEPTH:
            raise PluginError(f"{one_line(str(source), 120)}: folders deeper than {MAX_DEPTH}")
        folders[:] = sorted(f for f in folders if not (f == ".git" and not relative.parts))
        for name in [*folders, *files]:
            if _UNSAFE_NAME.search(name) or name in ("", ".", ".."):
                raise PluginError(f"{one_line(repr(name), 80)}: not a file name paicli copies")
        for name in list(folders):
            path = here / name
            if path.is_symlink():
                folders.remove(name)
                _inside(path, root, relative / name)
                files.append(name)  # copied as what it points at, below
            else:
                make_private_dir(target / relative / name)
        for name in sorted(files):
            count += 1
            if count > MAX_FILES:
                raise PluginError(f"{one_line(str(source), 120)}: more than {MAX_FILES} files")
            size += _copy_file(here / name, target / relative / name, root, relative / name)
            if size > MAX_BYTES:
                raise PluginError(
                    f"{one_line(str(source), 120)}: more than {MAX_BYTES // 2**20} MiB"
                )


def _inside(path: Path, root: Path, shown: Path) -> Path:
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(root):
        raise PluginError(f"{one_line(str(shown), 120)}: a symbolic link out of the plugin")
    return real


def _copy_file(path: Path, target: Path, root: Path, shown: Path) -> int:
    real = _inside(path, root, shown) if path.is_symlink() else path
    info = os.stat(real)
    if stat.S_ISDIR(info.st_mode):
        return 0  # a link to a folder of the plugin: the folder is copied where it is
    if not stat.S_ISREG(info.st_mode):
        raise PluginError(f"{one_line(str(shown), 120)}: not a regular file")
    executable = bool(info.st_mode & stat.S_IXUSR)
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with open(real, "rb") as reading, os.fdopen(descriptor, "wb") as writing:
        shutil.copyfileobj(reading, writing)
    os.chmod(target, 0o700 if executable else 0o600)
    return info.st_size
