"""bubblewrap: the command line that runs a process in namespaces shaped by a `Sandbox`.

A mount namespace: the readable folders bound read-only (`/` by default), bwrap's own /dev
read-only with a bounded /dev/shm, a private tmpfs on /tmp, the writable folders bound
read-write, the read-only ones inside them bound again read-only (and each folder between
onto itself: a mount point cannot be moved aside), and each hidden path covered (an empty
read-only tmpfs over a folder, /dev/null over a file), in that order so a later mount
wins. A network namespace always (its own
loopback only; an allow-list goes through the proxy's socket, bound in), a PID namespace
(when its first process exits the kernel kills every other one: double forks and setsid
included), an IPC namespace, no capabilities (bwrap run by root would keep them all) and
no_new_privs (bwrap sets it), and death with paicli.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .profile import Sandbox

__all__ = ["ProxyMount", "bwrap_argv", "exit_status"]

# The private /tmp is memory: a build's temporary files fit, and a runaway writer cannot
# take more of the machine's memory than this.
TEMP_SIZE = 1024**3


@dataclass(frozen=True, slots=True)
class ProxyMount:
    """The proxy's socket folder (outside) and where it appears inside."""

    outside: str
    inside: str


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def bwrap_argv(
    bwrap: str,
    sandbox: Sandbox,
    command: Sequence[str],
    *,
    cwd: str | None = None,
    seccomp_fd: int | None = None,
    new_session: bool = True,
    proxy: ProxyMount | None = None,
    setenv: Mapping[str, str] | None = None,
) -> list[str]:
    """`bwrap OPTIONS -- COMMAND`. Paths that do not exist are left out (a folder to write
    that is missing cannot be created inside either). `setenv`: variables the command gets
    that bwrap itself must not run with."""
    argv = [bwrap]
    for path in sandbox.read:
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    # bwrap's /dev and its /dev/shm are memory without a bound (half the machine's): /dev
    # goes read-only (its devices stay usable) and /dev/shm gets the bound /tmp has.
    argv += ["--dev", "/dev", "--size", str(TEMP_SIZE), "--tmpfs", "/dev/shm"]
    argv += ["--remount-ro", "/dev", "--proc", "/proc", "--size", str(TEMP_SIZE), "--tmpfs", "/tmp"]
    for path in sorted(sandbox.write, key=len):  # a folder before the folders inside it
        if os.path.exists(path):
            argv += ["--bind", path, path]
    for path in _pinned(sandbox):
        argv += ["--bind", path, path]
    for path in sandbox.read_only:
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    argv += _hidden(sandbox)
    if proxy is not None:
        argv += ["--ro-bind", proxy.outside, proxy.inside]
    argv += ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent"]
    argv += ["--cap-drop", "ALL"]
    if new_session:
        argv.append("--new-session")
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    if cwd is not None:
        argv += ["--chdir", os.path.abspath(cwd)]
    for name, value in (setenv or {}).items():
        argv += ["--setenv", name, value]
    return [*argv, "--", *command]


def _pinned(sandbox: Sandbox) -> list[str]:
    """The folders between a writable root and a read-only or hidden path inside it, each
    to be bound onto itself: a mount point cannot be renamed or removed (EBUSY), so the
    command cannot move `.git` aside, with the read-only `.git/hooks` in it, and put a
    `.git` of its own (a config that runs a command) in its place."""
    roots = [os.path.realpath(root) for root in sandbox.write]
    folders: set[str] = set()
    for path in (*sandbox.read_only, *sandbox.hide):
        real = os.path.realpath(path)
        inside = [root for root in roots if _within(real, root) and real != root]
        if not inside or not os.path.exists(real):
            continue
        root = max(inside, key=len)
        folder = os.path.dirname(real)
        while folder != root and _within(folder, root):
            folders.add(folder)
            folder = os.path.dirname(folder)
    return sorted(folders, key=len)  # a folder before the folders inside it


def _hidden(sandbox: Sandbox) -> list[str]:
    """Mounts that cover each hidden path the sandbox would otherwise see (symlinks
    resolved: a link to a secret folder leads to the empty mount)."""
    argv: list[str] = []
    covered: set[str] = set()
    for path in sandbox.hide:
        real = os.path.realpath(path)
        if real in covered or not os.path.exists(real) or not _visible(real, sandbox):
            continue
        covered.add(real)
        if os.path.isdir(real):
            argv += ["--tmpfs", real, "--remount-ro", real]
        else:
            argv += ["--ro-bind", "/dev/null", real]
    return argv


def _visible(path: str, sandbox: Sandbox) -> bool:
    """Whether the sandbox sees `path`: in a writable folder, or in a readable one outside
    the private /tmp."""
    if any(_within(path, os.path.realpath(root)) for root in sandbox.write):
        return True
    return not _within(path, "/tmp") and any(
        _within(path, os.path.realpath(root)) for root in sandbox.read
    )


def exit_status(code: int) -> int:
    """The command's exit status as the parent sees a child's: bwrap reports a command
    killed by signal N as 128+N, which becomes -N."""
    if 128 < code <= 128 + 64:
        return 128 - code
    return code
