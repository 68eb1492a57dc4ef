"""Landlock (Linux 5.13 and later) through ctypes: the fallback where bubblewrap cannot run.

The ruleset is built in paicli, which opens each granted path; the child restricts itself
with it between fork and exec, after setting no_new_privs. Landlock only ever grants, so a
hidden folder inside a readable one is left out by granting the readable folder's other
entries one by one (`cover`), symlinks resolved, so a link to a hidden folder grants
nothing. Listing is granted from each readable root: `ls ~/.ssh` shows names, never
contents. What Landlock cannot do here: keep a folder inside a writable one read-only
(`read_only` is not enforced: that would forbid new files beside it), or refuse connect()
to a named Unix socket (seccomp refuses socket() itself instead). An entry created later
in a folder that holds a hidden one (the home folder) is not readable.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import stat
import struct
from collections.abc import Callable, Iterable

from .native import PR_SET_NO_NEW_PRIVS, libc

__all__ = ["abi", "build_ruleset", "cover", "restrictor"]

# The Landlock system calls have the same numbers on every architecture.
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
READ = EXECUTE | READ_FILE | READ_DIR
# The rights that make sense on a file, not a folder (the kernel refuses the others).
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
# Devices every program writes to (or opens read-write), and the shared-memory folder.
# Not /dev/pts: without a mount namespace it holds the user's own terminals, which a
# command could type into, read keystrokes from or paint; so no new terminal either.
DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/shm",
)


@functools.cache
def abi() -> int:
    """The Landlock ABI version the kernel offers (0: none)."""
    try:
        return libc().syscall(SYS_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    except OSError:
        return 0


def _fs_rights(version: int) -> int:
    """Every filesystem right this ABI knows (all of them are handled, hence denied unless
    granted)."""
    rights = (1 << 13) - 1  # ABI 1: execute .. make_sym
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    if version >= 5:
        rights |= IOCTL_DEV
    return rights


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def cover(roots: Iterable[str], hidden: Iterable[str]) -> list[str]:
    """Real paths that together grant `roots` minus `hidden`: a root with nothing hidden
    inside is itself; one with something hidden is replaced by its entries, recursively."""
    secret = {os.path.realpath(h) for h in hidden}
    granted: list[str] = []
    seen: set[str] = set()

    def visit(path: str) -> None:
        if path in seen or any(_within(path, h) for h in secret):
            return
        seen.add(path)
        if not any(_within(h, path) for h in secret):
            granted.append(path)
            return
        try:
            entries = [entry.path for entry in os.scandir(path)]
        except OSError:
            return  # unreadable here: granted nothing
        for entry in entries:
            visit(os.path.realpath(entry))

    for root in roots:
        if os.path.exists(root):
            visit(os.path.realpath(root))
    return granted


def build_ruleset(
    read: Iterable[str], write: Iterable[str], hidden: Iterable[str], *, network: bool
) -> int:
    """A ruleset's file descriptor (the caller closes it): `read` readable, `write` (and
    the usual devices) writable, `hidden` neither; without `network`, no TCP bind or
    connect (ABI 4). Abstract Unix sockets and signals stay inside the sandbox (ABI 6)."""
    version = abi()
    if version < 1:
        raise OSError("Landlock is not available")
    native = libc()
    fs = _fs_rights(version)
    handled_net = BIND_TCP | CONNECT_TCP if version >= 4 and not network else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0
    size = 24 if version >= 6 else 16 if version >= 4 else 8
    attr = ctypes.create_string_buffer(struct.pack("=QQQ", fs, handled_net, scoped)[:size])
    fd = native.syscall(SYS_CREATE_RULESET, ctypes.cast(attr, ctypes.c_void_p), size, 0)
    try:
        hidden = list(hidden)
        read = list(read)
        for path in read:  # names may be listed from the roots down, never read
            _grant(fd, path, READ_DIR)
        for path in cover(read, hidden):
            _grant(fd, path, READ)
        for path in cover([*write, *DEVICES], hidden):
            _grant(fd, path, fs)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _grant(ruleset: int, path: str, rights: int) -> None:
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone since it was listed: nothing to grant
    try:
        if not stat.S_ISDIR(os.fstat(target).st_mode):
            rights &= FILE_RIGHTS
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, target))
        pointer = ctypes.cast(rule, ctypes.c_void_p)
        with contextlib.suppress(OSError):  # refused: granted nothing, which is safe
            libc().syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, pointer, 0)
    finally:
        os.close(target)


def restrictor(ruleset: int) -> Callable[[], None]:
    """What a child calls before exec to put itself under `ruleset`."""
    native = libc()

    def restrict() -> None:
        native.prctl(PR_SET_NO_NEW_PRIVS, 1)
        native.syscall(SYS_RESTRICT_SELF, ruleset, 0)

    return restrict
