"""A tiny parent for one command, so that none of its processes outlives it or stays a zombie.

Run as `python -I -S _reaper.py -- ARGV...` in a new process group (Linux only). It makes
itself a child subreaper, so the command's orphaned descendants become its children instead of
PID 1's (which, in containers, may never reap them), runs ARGV, and reaps everything. When the
command exits, or a SIGTERM/SIGINT/SIGHUP arrives (SIGTERM too when its parent, paicli, dies),
what is left of the group gets SIGTERM, then SIGKILL after a grace period; the reaper exits
with the command's exit status once all are reaped (128+N when a signal N ended the command).
In a sandbox the command gets a Landlock domain of its own that cannot signal the reaper.
Standard library only: it starts in milliseconds.
"""

from __future__ import annotations

import ctypes
import os
import signal
import struct
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_GET_NO_NEW_PRIVS = 39
# Landlock (the same numbers on every architecture): a ruleset that handles only signals.
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_RESTRICT_SELF = 444, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_SCOPE_SIGNAL = 1 << 1
LANDLOCK_SCOPE_ABI = 6
# Time for the rest of the group to exit on SIGTERM before SIGKILL; programs that flush and
# remove temporary files on SIGTERM need well under a second.
TERM_GRACE = 1.0
# After SIGKILL the kernel ends the processes at once; this bounds waiting for escapees
# (a descendant that left the group with setsid and is no longer signalled).
KILL_GRACE = 1.0
_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}


def _group_members() -> list[int]:
    """Live processes to stop: our process group, and our children outside it (a descendant
    that left the group with setsid becomes our child once its parent exits, since we are
    its subreaper)."""
    me, group = os.getpid(), os.getpgrp()
    members: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # Fields after the parenthesised command name: state, ppid, pgrp, ...
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) < 3 or fields[0] == b"Z":
            continue
        if int(fields[2]) == group or int(fields[1]) == me:
            members.append(int(entry))
    return members


def _signal_group(sig: int) -> None:
    for pid in _group_members():
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def main(argv: list[str]) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # Signals are taken synchronously with sigtimedwait; the command starts with none blocked.
    signal.pthread_sigmask(signal.SIG_BLOCK, {*_STOP_SIGNALS, signal.SIGCHLD})
    # paicli gone (killed, crashed) is a stop too: nothing else would end the command where
    # no PID namespace does (Landlock, no sandbox).
    libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGTERM), 0, 0, 0)
    try:
        child = _spawn(argv, libc)
    except OSError as exc:
        sys.stderr.write(f"{argv[0]}: {exc.strerror}\n")
        return 127
    status: int | None = None
    term_at: float | None = None  # When the rest of the group got SIGTERM.
    kill_at: float | None = None  # When it got SIGKILL.
    while True:
        while True:  # Reap every child that has exited.
            try:
                pid, raw = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return _exit_code(status)
            if pid == 0:
                break
            if pid == child:
                status = os.waitstatus_to_exitcode(raw)
        now = time.monotonic()
        if status is not None and term_at is None:
            _signal_group(signal.SIGTERM)
            term_at = now
        if term_at is not None and kill_at is None and now - term_at >= TERM_GRACE:
            _signal_group(signal.SIGKILL)
            kill_at = now
        if kill_at is not None and now - kill_at >= KILL_GRACE:
            return _exit_code(status)
        if kill_at is not None:
            wait: float = KILL_GRACE
        elif term_at is not None:
            wait = max(0.0, term_at + TERM_GRACE - now)
        else:
            wait = 3600.0
        received = signal.sigtimedwait({*_STOP_SIGNALS, signal.SIGCHLD}, wait)
        if received is not None and received.si_signo in _STOP_SIGNALS and term_at is None:
            # The group got the signal too (it was sent to the group) or, if only we did,
            # it gets it now.
            _signal_group(signal.SIGTERM)
            term_at = time.monotonic()


def _spawn(argv: list[str], libc: ctypes.CDLL) -> int:
    """Start the command. Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays
    ignored across exec: the command gets their default actions back (`yes | head -1` ends
    quietly on SIGPIPE). In a sandbox (no_new_privs set) the command goes into a Landlock
    domain of its own that cannot signal us: else it could SIGKILL its reaper and leave a
    process that left the group with setsid running after the call."""
    nothing = ctypes.c_ulong(0)
    scope = (
        libc.prctl(PR_GET_NO_NEW_PRIVS, nothing, nothing, nothing, nothing) == 1
        and _landlock_abi(libc) >= 6
    )
    if not scope:
        return os.posix_spawnp(
            argv[0], argv, os.environ, setsigmask=(), setsigdef=(signal.SIGPIPE, signal.SIGXFSZ)
        )
    attr = struct.pack("=QQQ", 0, 0, LANDLOCK_SCOPE_SIGNAL)
    ruleset = libc.syscall(
        ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET), attr, ctypes.c_long(len(attr)), ctypes.c_long(0)
    )
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "cannot make the command's Landlock domain")
    pid = os.fork()
    if pid == 0:  # the child: restricted, then the command, or 127
        try:
            if (
                libc.syscall(
                    ctypes.c_long(SYS_LANDLOCK_RESTRICT_SELF),
                    ctypes.c_long(ruleset),
                    ctypes.c_long(0),
                )
                < 0
            ):
                raise OSError(ctypes.get_errno(), "cannot enter the command's Landlock domain")
            os.close(ruleset)
            for sig in (signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, ())
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"{argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    os.close(ruleset)
    return pid


def _landlock_abi(libc: ctypes.CDLL) -> int:
    version = libc.syscall(
        ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET),
        None,
        ctypes.c_long(0),
        ctypes.c_long(LANDLOCK_CREATE_RULESET_VERSION),
    )
    return max(int(version), 0)


def _exit_code(status: int | None) -> int:
    if status is None:
        return 128 + signal.SIGKILL
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    sys.exit(main(args))
