"""A seccomp filter (classic BPF) for what no namespace or Landlock rule covers.

It refuses:
- `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)`, which push keystrokes into a terminal: a process
  that shares the user's terminal could type commands into their shell;
- with `sockets="unix"`, `socket()` of every family but AF_UNIX; with `sockets="none"`,
  `socket()` of every family; in both, `io_uring_setup`, since io_uring opens sockets
  without calling `socket()`. `socketpair()` stays allowed (it reaches nobody);
- every system call of a foreign ABI (i386, x32), whose socket calls cannot be told apart
  (`socketcall`): a 32-bit program is killed (SIGSYS) at its first call;
- `add_key`, `request_key` and `keyctl`: the kernel's keyrings are the user's, not the
  sandbox's (Kerberos tickets live in one where `KRB5CCNAME` is `KEYRING:`);
- beside a Landlock older than ABI 3, `truncate()` by path, which that Landlock misses.
Refused calls fail with EPERM (ioctl, keyrings) or EACCES (socket): "Permission denied".
Only the low 32 bits of an argument are compared, as the kernel reads an int argument.
"""

from __future__ import annotations

import ctypes
import errno
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from .native import PR_SET_NO_NEW_PRIVS, libc, machine

__all__ = ["Sockets", "installer", "program", "supported"]

Sockets = Literal["any", "unix", "none"]

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
RET_KILL_PROCESS = 0x80000000
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
# Offsets in struct seccomp_data: nr, arch, then six 64-bit arguments (little-endian: the
# low half first).
NR, ARCH, ARG0, ARG1 = 0, 4, 16, 24
X32_BIT = 0x40000000
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
AF_UNIX = 1


@dataclass(frozen=True)
class Arch:
    audit: int
    ioctl: int
    socket: int
    io_uring_setup: int
    x32: bool
    keyrings: tuple[int, ...]  # add_key, request_key, keyctl
    truncate: int


ARCHES = {
    "x86_64": Arch(
        0xC000003E,
        ioctl=16,
        socket=41,
        io_uring_setup=425,
        x32=True,
        keyrings=(248, 249, 250),
        truncate=76,
    ),
    "aarch64": Arch(
        0xC00000B7,
        ioctl=29,
        socket=198,
        io_uring_setup=425,
        x32=False,
        keyrings=(217, 218, 219),
        truncate=45,
    ),
}


def supported() -> str | None:
    """None when a filter can be built for this machine, else why not."""
    return None if machine() in ARCHES else f"no filter written for {machine()}"


def program(sockets: Sockets, arch: str | None = None, *, truncate: bool = True) -> bytes:
    """The filter as `struct sock_filter[]` bytes (what `bwrap --seccomp FD` reads). Without
    `truncate`, `truncate()` by path is refused too (EACCES): Landlock before ABI 3 does not
    see it, so any file the user owns could be emptied; `ftruncate` of a file opened for
    writing stays allowed."""
    a = ARCHES[arch or machine()]
    # (code, k, label if true, label if false); None goes on to the next instruction.
    ops: list[tuple[int, int, str | None, str | None] | str] = [
        (_LD_ABS, ARCH, None, None),
        (_JEQ, a.audit, None, "foreign"),
        (_LD_ABS, NR, None, None),
    ]
    if a.x32:
        ops.append((_JGE, X32_BIT, "foreign", None))
    ops.append((_JEQ, a.ioctl, "ioctl", None))
    ops += [(_JEQ, number, "eperm", None) for number in a.keyrings]
    if not truncate:
        ops.append((_JEQ, a.truncate, "eacces", None))
    if sockets != "any":
        ops += [(_JEQ, a.socket, "socket", None), (_JEQ, a.io_uring_setup, "eacces", None)]
    ops += [
        (_RET, RET_ALLOW, None, None),
        "ioctl",
        (_LD_ABS, ARG1, None, None),
        (_JEQ, TIOCSTI, "eperm", None),
        (_JEQ, TIOCLINUX, "eperm", "allow"),
        "socket",
    ]
    if sockets == "unix":
        ops += [(_LD_ABS, ARG0, None, None), (_JEQ, AF_UNIX, "allow", "eacces")]
    ops += [
        "eacces",
        (_RET, RET_ERRNO | errno.EACCES, None, None),
        "eperm",
        (_RET, RET_ERRNO | errno.EPERM, None, None),
        "allow",
        (_RET, RET_ALLOW, None, None),
        "foreign",
        (_RET, RET_KILL_PROCESS, None, None),
    ]
    return _assemble(ops)


def _assemble(ops: list[tuple[int, int, str | None, str | None] | str]) -> bytes:
    labels: dict[str, int] = {}
    code: list[tuple[int, int, str | None, str | None]] = []
    for op in ops:
        if isinstance(op, str):
            labels[op] = len(code)
        else:
            code.append(op)
    out = bytearray()
    for index, (opcode, k, if_true, if_false) in enumerate(code):
        jt = labels[if_true] - index - 1 if if_true else 0
        jf = labels[if_false] - index - 1 if if_false else 0
        assert 0 <= jt < 256 and 0 <= jf < 256  # classic BPF jumps forward only
        out += struct.pack("=HBBI", opcode, jt, jf, k)
    return bytes(out)


class _Fprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def installer(filter_program: bytes) -> Callable[[], None]:
    """What a child calls before exec to put itself under the filter (no_new_privs first,
    which the kernel requires of an unprivileged process)."""
    native = libc()
    buffer = ctypes.create_string_buffer(filter_program, len(filter_program))
    fprog = _Fprog(len(filter_program) // 8, ctypes.addressof(buffer))
    address = ctypes.addressof(fprog)

    def install() -> None:
        _ = buffer, fprog  # kept alive with the closure: `address` points into them
        native.prctl(PR_SET_NO_NEW_PRIVS, 1)
        native.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, address)

    return install
