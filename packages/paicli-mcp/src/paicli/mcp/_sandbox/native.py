"""The C library calls the Linux mechanisms need (prctl, raw system calls), through ctypes.

Loaded on first use only; every function is looked up here, in the parent, so what a child
runs between fork and exec is a call through a ready pointer.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
from collections.abc import Callable

__all__ = ["PR_SET_NO_NEW_PRIVS", "Libc", "capability_dropper", "libc"]

PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}
CAPABILITY_VERSION_3 = 0x20080522


class Libc:
    """prctl and syscall, each raising OSError on failure."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(None, use_errno=True)
        self._prctl = lib.prctl
        self._prctl.argtypes = [ctypes.c_int, *[ctypes.c_ulong] * 4]
        self._prctl.restype = ctypes.c_int
        self._syscall = lib.syscall
        self._syscall.restype = ctypes.c_long
        self.socket = lib.socket
        self.socket.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self.socket.restype = ctypes.c_int

    def prctl(self, option: int, arg: int = 0, arg3: int = 0) -> int:
        result: int = self._prctl(option, arg, arg3, 0, 0)
        if result < 0:
            raise _error()
        return result

    def syscall(self, number: int, *args: int | ctypes.c_void_p | None) -> int:
        # Every argument as a full register: a bare int would go as a 32-bit vararg.
        wide = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
        result: int = self._syscall(ctypes.c_long(number), *wide)
        if result < 0:
            raise _error()
        return result


def _error() -> OSError:
    code = ctypes.get_errno()
    return OSError(code, os.strerror(code))


@functools.cache
def libc() -> Libc:
    return Libc()


def capability_dropper() -> Callable[[], None]:
    """What a child calls to give up every capability, for good: the bounding set first
    (which needs CAP_SETPCAP: a process without it has nothing to drop there), then the
    effective, permitted and inheritable sets. Root keeps its uid but none of its powers
    (reading another process's memory and environment, loading modules, raw I/O)."""
    native = libc()
    try:
        with open("/proc/sys/kernel/cap_last_cap") as file:
            last = int(file.read())
    except (OSError, ValueError):
        last = 63
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    nothing = (ctypes.c_uint32 * 6)()
    capset = SYS_CAPSET[machine()]
    header_p, nothing_p = (
        ctypes.cast(header, ctypes.c_void_p),
        ctypes.cast(nothing, ctypes.c_void_p),
    )

    def drop() -> None:
        for capability in range(last + 1):
            try:
                native.prctl(PR_CAPBSET_DROP, capability)
            except OSError:
                break  # not allowed to: it holds no CAP_SETPCAP, so no capability to drop
        native.syscall(capset, header_p, nothing_p)

    return drop


def machine() -> str:
    """`x86_64`, `aarch64`, ...: which system call table applies."""
    return platform.machine().lower().replace("amd64", "x86_64").replace("arm64", "aarch64")
