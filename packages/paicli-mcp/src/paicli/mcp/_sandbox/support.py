"""Which sandbox mechanisms work on this machine: each probed for real, once, then cached.

A probe runs what the sandbox would run: bubblewrap with the namespaces it always asks for;
a Landlock ruleset under which the child must fail to create a file; a seccomp filter under
which the child must fail to open a socket; `sandbox-exec` with an empty profile (macOS).
Knowing that the kernel offers a feature is not enough: containers and hardened kernels
refuse user namespaces, and an LSM list can leave Landlock out.

Everything a probe needs is imported with this module (ctypes included): `check_sandbox()`
imports nothing, so a program may probe in a thread of its own while another thread imports
(Python 3.11's import locks can fail imports made by two threads at once, gh-91351).
The event loop's thread pool is imported here too: see `concurrent.futures.thread` below.
"""

from __future__ import annotations

import asyncio

# A probe forks with a `preexec_fn`, so CPython runs the `os.register_at_fork` hooks around
# that fork: the `before` ones as listed when the fork starts, the `after_in_parent` ones as
# listed when it ends. This module registers such a pair (its lock taken before a fork,
# released after). Imported for the first time by another thread during a probe's fork (that
# thread's first `asyncio.to_thread`), its release runs without the take and frees the lock
# from under that thread's `ThreadPoolExecutor.submit` ("RuntimeError: release unlocked
# lock"). So it is imported before any probe runs.
import concurrent.futures.thread  # noqa: F401
import ctypes
import errno
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass

from . import landlock, seccomp
from .bwrap import bwrap_argv
from .native import libc
from .profile import Sandbox
from .seatbelt import SANDBOX_EXEC

__all__ = ["SandboxSupport", "check_sandbox", "current_support"]

# Each probe is one short process; one that takes longer than this is as good as broken.
PROBE_TIMEOUT = 5.0
MECHANISMS = ("bubblewrap", "landlock", "seccomp", "seatbelt")


@dataclass(frozen=True, slots=True)
class SandboxSupport:
    """What works here: each mechanism's field is None when it works, else one line saying
    why not. `bwrap` is the bubblewrap program found, `landlock_abi` the kernel's version."""

    bubblewrap: str | None
    landlock: str | None
    seccomp: str | None
    seatbelt: str | None
    bwrap: str | None = None
    landlock_abi: int = 0

    def mechanism(self, sandbox: Sandbox) -> str | None:
        """The mechanism that would enforce `sandbox` here, or None. Landlock needs seccomp
        beside it (the network), and can only take the network away entirely."""
        if self.bubblewrap is None:
            return "bubblewrap"
        if self.landlock is None and self.seccomp is None and sandbox.network == "none":
            return "landlock"
        if self.seatbelt is None:
            return "seatbelt"
        return None

    def missing(self, sandbox: Sandbox) -> str:
        """One line: why nothing here can enforce `sandbox`."""
        if sys.platform == "darwin":
            return f"no sandbox works here (Seatbelt: {self.seatbelt})"
        if not sys.platform.startswith("linux"):
            return f"no sandbox works on {sys.platform}"
        reasons = [f"bubblewrap: {self.bubblewrap}"]
        if self.landlock is not None:
            reasons.append(f"Landlock: {self.landlock}")
        elif self.seccomp is not None:
            reasons.append(f"seccomp (needed beside Landlock): {self.seccomp}")
        else:
            wanted = "loopback" if sandbox.network == "loopback" else "an allow-list"
            reasons.append(f"Landlock cannot give network {wanted}: that needs bubblewrap")
        return "no sandbox works here (" + "; ".join(reasons) + ")"

    def describe(self) -> list[str]:
        """One line per mechanism: works, or why not."""
        return [
            f"{name}: {'works' if why is None else why}"
            for name, why in zip(
                MECHANISMS,
                (self.bubblewrap, self.landlock, self.seccomp, self.seatbelt),
                strict=True,
            )
        ]


class _Cache:
    """The probes' verdict, made once per process (by whichever thread asks first)."""

    lock = threading.Lock()
    support: SandboxSupport | None = None


def check_sandbox(*, fresh: bool = False) -> SandboxSupport:
    """Which sandbox mechanisms work here (probed once per process; `fresh` probes again).
    Blocking: it may run a few short processes."""
    with _Cache.lock:
        if _Cache.support is None or fresh:
            _Cache.support = _probe()
        return _Cache.support


async def current_support() -> SandboxSupport:
    """`check_sandbox()` without blocking the event loop when it has to probe."""
    cached = _Cache.support
    return cached if cached is not None else await asyncio.to_thread(check_sandbox)


def _probe() -> SandboxSupport:
    elsewhere = f"not on {sys.platform}"
    if sys.platform == "darwin":
        return SandboxSupport("Linux only", "Linux only", "Linux only", _probe_seatbelt())
    if not sys.platform.startswith("linux"):
        return SandboxSupport(elsewhere, elsewhere, elsewhere, elsewhere)
    bubblewrap, bwrap = _probe_bwrap()
    return SandboxSupport(
        bubblewrap=bubblewrap,
        landlock=_probe_landlock(),
        seccomp=_probe_seccomp(),
        seatbelt="macOS only",
        bwrap=bwrap,
        landlock_abi=landlock.abi(),
    )


def _true() -> str:
    return shutil.which("true") or "/bin/true"


def _run(argv: list[str], preexec: Callable[[], None] | None = None) -> str | None:
    """None when `argv` ran and exited 0, else the reason in a few words."""
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            check=False,
            preexec_fn=preexec,  # system calls only
        )
    except subprocess.SubprocessError as exc:
        return str(exc).rstrip(".")
    except OSError as exc:
        return exc.strerror or str(exc)
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else f"exit status {done.returncode}"
    return None


def _probe_bwrap() -> tuple[str | None, str | None]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bwrap is not installed (Debian and Ubuntu: apt install bubblewrap)", None
    why = _run(bwrap_argv(bwrap, Sandbox(hide=()), [_true()]))
    if why is not None:
        return f"bwrap cannot make its namespaces here ({why})", None
    return None, bwrap


def _probe_landlock() -> str | None:
    if landlock.abi() < 1:
        return "the kernel offers no Landlock (Linux 5.13 or later, with landlock in its LSMs)"
    with tempfile.TemporaryDirectory(prefix="paicli-probe-") as folder:
        target = os.path.join(folder, "written")
        ruleset = landlock.build_ruleset(["/"], [], [], network=True)
        restrict = landlock.restrictor(ruleset)

        def child() -> None:
            restrict()
            try:
                os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o600))
            except PermissionError:
                return
            raise RuntimeError("a write was not refused")

        try:
            why = _run([_true()], child)
        finally:
            os.close(ruleset)
    return None if why is None else f"a Landlock ruleset did not hold ({why})"


def _probe_seccomp() -> str | None:
    unsupported = seccomp.supported()
    if unsupported is not None:
        return unsupported
    install = seccomp.installer(seccomp.program("none"))
    native = libc()

    def child() -> None:
        install()
        if native.socket(socket.AF_INET, socket.SOCK_STREAM, 0) >= 0:
            raise RuntimeError("a socket was not refused")
        if ctypes.get_errno() != errno.EACCES:
            raise RuntimeError("a socket was refused for another reason")

    why = _run([_true()], child)
    return None if why is None else f"a seccomp filter did not hold ({why})"


def _probe_seatbelt() -> str | None:
    if not os.path.exists(SANDBOX_EXEC):
        return f"{SANDBOX_EXEC} is missing"
    why = _run([SANDBOX_EXEC, "-p", "(version 1)(allow default)", _true()])
    return None if why is None else f"sandbox-exec refused an empty profile ({why})"
