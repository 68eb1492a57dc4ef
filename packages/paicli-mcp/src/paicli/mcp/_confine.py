"""Applying `Limits` to a server at spawn, and telling afterwards whether one stopped it.

Mechanisms (Linux; elsewhere only `cpu` and `files` can be applied):
- memory: RLIMIT_DATA, per process. Since Linux 4.7 it counts the heap and every private
  writable mapping, but not address space reserved without access, which is how V8, Go and
  glibc reserve far more than they use: Node runs normally under it, where RLIMIT_AS at
  512M stops V8 at start ("Failed to reserve virtual memory for CodeRange"). Other systems
  do not enforce RLIMIT_DATA on mmap, so there the limit cannot be applied.
- cpu: RLIMIT_CPU, per process: SIGXCPU at the limit, SIGKILL one second later.
- files: RLIMIT_NOFILE, per process: opening one more fails with EMFILE.
- processes: the `pids.max` of a cgroup of the server's own (`_cgroup`), counting every
  process and thread of the group. RLIMIT_NPROC is not used: it counts all processes of
  the user, not the server's, and root is exempt from it.
rlimits are inherited by every process the server starts. They are set, and the cgroup
joined, in the child between fork and exec, so no code of the server runs unlimited.
A limit that cannot be applied raises `LimitUnavailable` unless `strict` is false (then it
is skipped with a warning). A server that dies without a definitive sign (SIGXCPU, CPU
time used) is attributed to a limit by its stderr ("out of memory", "MemoryError", EMFILE).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ._cgroup import Cgroup, CgroupUnavailable
from ._limits import Limits

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

__all__ = ["Confinement", "LimitUnavailable"]

log = logging.getLogger("paicli.mcp.limits")

# How long to wait, after the process group is gone, for the kernel to empty the server's
# cgroup before deleting it (exited processes leave it within milliseconds).
CGROUP_EMPTY_GRACE = 1.0
CGROUP_POLL_INTERVAL = 0.02

# What a process that ran out of memory under RLIMIT_DATA says on the way out: Python's
# MemoryError, V8's "JavaScript heap out of memory" / "Fatal process out of memory", C++'s
# bad_alloc, Go's "runtime: out of memory", glibc's and Rust's allocation failures.
_OUT_OF_MEMORY = re.compile(
    r"MemoryError|out of memory|bad_alloc|Cannot allocate memory|memory allocation of \d+",
    re.IGNORECASE,
)
_OUT_OF_FILES = re.compile(r"Too many open files|EMFILE")
# RLIMIT_CPU's hard limit sits this far above the soft one: SIGXCPU first, so the server
# may note why it ends, then SIGKILL if it ignores that.
CPU_KILL_AFTER = 1


class LimitUnavailable(Exception):
    """A limit cannot be applied here; the message says which and why (one line)."""


@dataclass
class Confinement:
    """The limits in force for one server: what the child applies before exec, and the
    cgroup to remove once the server is gone."""

    limits: Limits
    rlimits: list[tuple[int, int, int]] = field(default_factory=list)
    cgroup: Cgroup | None = None

    @classmethod
    def prepare(cls, limits: Limits, *, extra_tasks: int = 0, track: bool = False) -> Confinement:
        """Work out how to apply `limits`; raises LimitUnavailable (strict limits).
        `extra_tasks` are processes of a sandbox's own (bwrap's) that the process limit
        must leave room for. `track`: a cgroup even without a process limit, so whatever
        the server leaves behind (a double fork, setsid) is killed with it, where no PID
        namespace does that (a Landlock sandbox, from which the cgroup cannot be left)."""
        confinement = cls(limits)
        for kind in ("memory", "cpu", "files", "processes"):
            if getattr(limits, kind) is None:
                continue
            try:
                confinement._add(kind, extra_tasks)
            except LimitUnavailable as exc:
                if limits.strict:
                    confinement.release()
                    raise LimitUnavailable(
                        f"{limits.describe(kind)} cannot be applied: {exc} "
                        '(set "strict": false in "limits" to run without it)'
                    ) from None
                log.warning("%s not applied: %s", limits.describe(kind), exc)
        if track and confinement.cgroup is None and sys.platform.startswith("linux"):
            try:
                confinement.cgroup = Cgroup.create(max_tasks=None)
            except CgroupUnavailable as exc:
                log.info("no cgroup to gather a sandboxed server's processes: %s", exc)
        if confinement.rlimits and resource is not None:
            # A limited server that dies leaves no core file (it may be gigabytes).
            confinement.rlimits.append((resource.RLIMIT_CORE, 0, 0))
        return confinement

    def _add(self, kind: str, extra_tasks: int) -> None:
        value: int = getattr(self.limits, kind)
        if kind == "processes":
            if not sys.platform.startswith("linux"):
                raise LimitUnavailable("needs Linux cgroups")
            try:
                self.cgroup = Cgroup.create(max_tasks=value + extra_tasks)
            except CgroupUnavailable as exc:
                raise LimitUnavailable(str(exc)) from None
            return
        if resource is None:
            raise LimitUnavailable("this system has no setrlimit")
        if kind == "memory" and not sys.platform.startswith("linux"):
            raise LimitUnavailable("RLIMIT_DATA bounds mmap only on Linux")
        which, extra = {
            "memory": (resource.RLIMIT_DATA, 0),
            "cpu": (resource.RLIMIT_CPU, CPU_KILL_AFTER),
            "files": (resource.RLIMIT_NOFILE, 0),
        }[kind]
        _, hard = resource.getrlimit(which)
        # Nobody but root may raise a hard limit; one already lower is stricter anyway.
        cap = hard if hard != resource.RLIM_INFINITY else value + extra
        self.rlimits.append((which, min(value, cap), min(value + extra, cap)))

    @staticmethod
    def folder_of(confinement: Confinement | None) -> str | None:
        """The folder of `confinement`'s cgroup (None: it has none)."""
        cgroup = confinement.cgroup if confinement is not None else None
        return str(cgroup.path) if cgroup is not None else None

    def preexec(self) -> Callable[[], None] | None:
        """What the child runs between fork and exec (None when nothing is to be done).

        It only makes system calls on values computed here, in the parent."""
        if not self.rlimits and self.cgroup is None:
            return None
        rlimits = tuple(self.rlimits)
        procs = self.cgroup.procs_file if self.cgroup is not None else None
        setrlimit = resource.setrlimit if resource is not None else None

        def apply() -> None:
            if procs is not None:
                fd = os.open(procs, os.O_WRONLY)
                try:
                    os.write(fd, b"0")
                finally:
                    os.close(fd)
            for which, soft, hard in rlimits:
                assert setrlimit is not None
                setrlimit(which, (soft, hard))

        return apply

    def verdict(
        self, returncode: int | None, cpu_seconds: float, stderr_tail: Sequence[str]
    ) -> str | None:
        """The limit that stopped a server which exited on its own (`memory limit (512M)`),
        or None when nothing points at one."""
        limits = self.limits
        if returncode is None or returncode == 0:
            return None
        if limits.cpu is not None and (
            returncode == -signal.SIGXCPU
            or (returncode == -signal.SIGKILL and cpu_seconds >= limits.cpu)
        ):
            return limits.describe("cpu")
        text = "\n".join(stderr_tail)
        if limits.memory is not None and _OUT_OF_MEMORY.search(text):
            return limits.describe("memory")
        if self.cgroup is not None and self.cgroup.refused_forks() > 0:
            return limits.describe("processes")
        if limits.files is not None and _OUT_OF_FILES.search(text):
            return limits.describe("files")
        return None

    def release(self) -> bool:
        """Kill what is left in the server's cgroup and delete it; False while processes
        are still in it (call again)."""
        if self.cgroup is None:
            return True
        self.cgroup.kill_members()
        if self.cgroup.try_remove():
            self.cgroup = None
            return True
        return False

    async def release_within(self, label: str) -> None:
        """`release()` until it succeeds, at most `CGROUP_EMPTY_GRACE`; `label` names the
        server in the warning when the cgroup stays."""
        deadline = asyncio.get_running_loop().time() + CGROUP_EMPTY_GRACE
        while not self.release():
            if asyncio.get_running_loop().time() >= deadline:
                log.warning("%s: could not remove its cgroup", label)
                return
            await asyncio.sleep(CGROUP_POLL_INTERVAL)
