"""Servers die with the process that started them, however it ends (Linux).

Two mechanisms, because a server's children are beyond the reach of the first:
- the direct child gets `PR_SET_PDEATHSIG` (SIGKILL when the thread that spawned it ends,
  which is the event loop's): set by `setpriv --pdeathsig KILL` in front of the command
  when util-linux's setpriv is there (the spawn keeps the fast vfork path: a `preexec_fn`
  costs 10-20 ms of fork per server in a process of paicli's size), else in the preexec
  function a server already has (limits, Landlock), else in one of its own. A command
  bwrap runs is left alone: `--die-with-parent` does it, and its PID namespace takes
  every process of the server with it;
- every process group a server is started in, with its cgroup if it has one, is told to
  the lifeline: one small helper process per Python process (`_lifeline_main.py`, started
  with the first server), which kills what is still watched when its stdin, a pipe only
  this process writes to, reaches its end, that is, when this process is gone.

A process that leaves its group and has no cgroup (setsid, a daemon's double fork) escapes
both; the application sweeps those at its next start (it marks its servers' environment).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import logging
import os
import shutil
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ._executable import check_command
from ._lifeline_main import start_time

__all__ = ["Lifeline", "die_with_parent", "lifeline", "start_time"]

log = logging.getLogger("paicli.mcp.lifeline")

PR_SET_PDEATHSIG = 1
_MAIN = Path(__file__).with_name("_lifeline_main.py")
_LINUX = sys.platform.startswith("linux")


@functools.cache
def _setpriv() -> str | None:
    """util-linux's setpriv, if it is on PATH and knows --pdeathsig (2.33, 2018, on)."""
    path = shutil.which("setpriv")
    if path is None:
        return None
    try:
        with open(path, "rb") as file:
            # The option's name is in the binary's usage text; no process to ask.
            return path if b"pdeathsig" in file.read(4 * 1024 * 1024) else None
    except OSError:
        return None


@functools.cache
def _prctl() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _pdeathsig(then: Callable[[], None] | None) -> Callable[[], None] | None:
    """A preexec function that sets the parent-death signal, then runs `then`."""
    prctl = _prctl()
    if prctl is None:
        return then
    parent = os.getpid()

    def apply() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was set
            os._exit(1)
        if then is not None:
            then()

    return apply


def die_with_parent(
    argv: Sequence[str],
    env: dict[str, str],
    cwd: str | os.PathLike[str] | None,
    preexec: Callable[[], None] | None,
) -> tuple[list[str], Callable[[], None] | None]:
    """`argv` and `preexec` made so that the process dies with this one (see the module)."""
    argv = list(argv)
    if not _LINUX or not argv:
        return argv, preexec
    if os.path.basename(argv[0]) == "bwrap" and "--die-with-parent" in argv:
        return argv, preexec
    if preexec is not None:
        return argv, _pdeathsig(preexec)
    setpriv = _setpriv()
    search = env.get("PATH", os.defpath)
    # Only a command exec will take: a failed exec must stay our OSError (its words say
    # how to fix it), not setpriv's exit status.
    if setpriv is not None and check_command(argv[0], cwd=cwd, search_path=search).problem is None:
        return [setpriv, "--pdeathsig", "KILL", "--", *argv], None
    return argv, _pdeathsig(None)


class Lifeline:
    """The pipe to the helper process that ends our servers' groups when we are gone."""

    def __init__(self) -> None:
        self._owner = os.getpid()
        self._helper: int | None = None  # its pid
        self._pipe: int | None = None  # the write end of its stdin
        self._watched: dict[int, bytes] = {}

    def watch(self, pgid: int, cgroup: str | None = None) -> None:
        """Kill process group `pgid` (and `cgroup`) if this process ends while it lives."""
        line = json.dumps({"watch": pgid, "start": start_time(pgid), "cgroup": cgroup})
        self._watched[pgid] = line.encode() + b"\n"
        self._send(self._watched[pgid])

    def forget(self, pgid: int) -> None:
        """The group is gone (or no longer ours to end)."""
        if self._watched.pop(pgid, None) is not None:
            self._send(json.dumps({"forget": pgid}).encode() + b"\n")

    def _send(self, line: bytes) -> None:
        for _ in range(2):
            if self._pipe is None:
                if not self._start():
                    return
                line = b"".join(self._watched.values())  # a new helper knows nothing yet
            assert self._pipe is not None
            try:
                # A few dozen bytes into a pipe the helper always reads: never blocks.
                os.write(self._pipe, line)
                return
            except OSError:  # it died (someone killed it): start another
                self._stop()

    def _start(self) -> bool:
        read, write = os.pipe()  # both ends close on exec: no server inherits them
        try:
            # posix_spawn rather than Popen: nothing to warn at exit about a child that
            # is meant to outlive us; setsid: no terminal signal reaches it.
            self._helper = os.posix_spawn(
                sys.executable,
                [sys.executable, "-I", "-S", str(_MAIN)],
                {},
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, read, 0),
                    (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                ],
                setsid=True,
            )
        except OSError as exc:
            log.warning("servers will not be ended if this process is killed: %s", exc)
            os.close(write)
            return False
        finally:
            os.close(read)
        self._pipe = write
        return True

    def _stop(self) -> None:
        if self._pipe is not None:
            os.close(self._pipe)
            self._pipe = None
        if self._helper is not None:
            try:
                os.waitpid(self._helper, os.WNOHANG)
            except ChildProcessError:
                pass
            self._helper = None


_LIFELINE: Lifeline | None = None


def _close_in_child() -> None:
    """A forked child (multiprocessing) must not hold our end of the pipe open: the helper
    would then wait for it too before ending our servers."""
    if _LIFELINE is not None and _LIFELINE._pipe is not None:
        with contextlib.suppress(OSError):
            os.close(_LIFELINE._pipe)
        _LIFELINE._pipe = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_in_child)


def lifeline() -> Lifeline | None:
    """This process's lifeline (one per process; a forked child gets its own), None where
    there is no /proc to name processes by (not Linux)."""
    global _LIFELINE  # noqa: PLW0603 - one helper per process, started on first need
    if not _LINUX:
        return None
    if _LIFELINE is None or _LIFELINE._owner != os.getpid():
        _LIFELINE = Lifeline()
    return _LIFELINE
