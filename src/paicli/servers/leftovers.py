"""Server processes an earlier paicli left behind, found and ended at the next start.

While paicli runs, the library makes its servers die with it (`PR_SET_PDEATHSIG`, and a
helper that kills their process groups when paicli is gone). What can still escape is a
process that left its group (setsid, a daemon's double fork) outside any cgroup. So each run
marks its servers' environment with a random token (`PAICLI_SERVER_RUN`) and keeps a record,
`$PAICLI_HOME/runs/<pid>.json` (0600 in a 0700 folder: the token, its own pid and start time,
and each running server's pid and start time). At the next start (`sweep`), the record of a
paicli that is no longer running leads to its leftovers: every process that still carries
its token, and each recorded server whose pid still has the recorded start time (a pid
reused since is never touched); then the record goes. Linux only (/proc); elsewhere nothing
is recorded or swept. The record's name is paicli's own pid, never anything from a config.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import signal
from dataclasses import dataclass, field, replace
from pathlib import Path

from paicli.mcp import HttpServer, StdioServer
from paicli.private_files import PRIVATE_FILE_MODE, make_private_dir

__all__ = ["MARK_VARIABLE", "RunRecord", "carries", "start_time", "state_of", "sweep"]

log = logging.getLogger("paicli.servers")

MARK_VARIABLE = "PAICLI_SERVER_RUN"
# A record larger than this is not ours (a few hundred bytes per server).
MAX_RECORD = 1024 * 1024


def _stat(pid: int | str) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def start_time(pid: int | str) -> int | None:
    """A process's start time in clock ticks since boot (None: no such process)."""
    fields = _stat(pid)
    return int(fields[19]) if fields is not None and len(fields) > 19 else None


def state_of(pid: int | str) -> str | None:
    """A process's state letter (`Z` for a zombie; None: no such process)."""
    fields = _stat(pid)
    return fields[0].decode("ascii", "replace") if fields else None


def carries(pid: int | str, needle: bytes) -> bool:
    """Whether the process's environment holds the `NAME=value` entry `needle`."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            return needle in file.read().split(b"\0")
    except OSError:
        return False


def _alive_as(pid: int, start: object) -> bool:
    return isinstance(start, int) and start_time(pid) == start and state_of(pid) != "Z"


def _kill(pid: int) -> bool:
    """SIGKILL `pid` through a pidfd, so that a pid reused meanwhile is never hit."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return False
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        os.close(pidfd)


@dataclass
class RunRecord:
    """This run's record of its servers (see the module); `folder` is `$PAICLI_HOME/runs`."""

    folder: Path
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    servers: dict[str, tuple[int, int]] = field(default_factory=dict)
    usable: bool = field(default_factory=lambda: os.path.isdir("/proc/self"))

    def marked(self, spec: StdioServer | HttpServer) -> StdioServer | HttpServer:
        """`spec` with this run's mark in its environment (a stdio server's)."""
        if not isinstance(spec, StdioServer) or not self.usable:
            return spec
        return replace(spec, env={**spec.env, MARK_VARIABLE: self.token})

    def started(self, name: str, pid: int | None) -> None:
        """Server `name` runs as `pid` (None: not a local process)."""
        start = start_time(pid) if pid is not None and self.usable else None
        if pid is not None and start is not None:
            self.servers[name] = (pid, start)
            self._write()

    def ended(self, name: str) -> None:
        if self.servers.pop(name, None) is not None:
            self._write()

    def close(self) -> None:
        """Every server is stopped: the record goes."""
        self.servers.clear()
        with contextlib.suppress(OSError):
            (self.folder / f"{os.getpid()}.json").unlink()

    def _write(self) -> None:
        me = os.getpid()
        record = {
            "pid": me,
            "start": start_time(me),
            "token": self.token,
            "servers": {name: list(pair) for name, pair in self.servers.items()},
        }
        path = self.folder / f"{me}.json"
        temporary = self.folder / f".{me}.json.tmp"
        try:
            make_private_dir(self.folder)
            # No fsync: the record matters when paicli is killed, not the machine, and the
            # kernel keeps what was written either way; a start must not wait on the disk.
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
            with os.fdopen(fd, "wb") as file:
                file.write(json.dumps(record).encode())
            os.replace(temporary, path)
        except OSError as exc:
            log.debug("cannot record the running servers in %s: %s", path, exc)


def sweep(folder: Path) -> int:
    """End what earlier paicli runs that are gone left of their servers (see the module);
    how many processes were killed."""
    try:
        names = [name for name in os.listdir(folder) if name.endswith(".json")]
    except OSError:
        return 0
    killed = 0
    for name in names:
        path = folder / name
        record = _read(path)
        if record is None:
            continue
        owner = record.get("pid")
        if isinstance(owner, int) and _alive_as(owner, record.get("start")):
            continue  # that paicli still runs: its servers are its own
        killed += _end_leftovers(record)
        with contextlib.suppress(OSError):
            path.unlink()
    if killed:
        log.info("ended %d server process(es) an earlier paicli left running", killed)
    return killed


def _read(path: Path) -> dict[str, object] | None:
    try:
        with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as file:
            data = file.read(MAX_RECORD + 1)
        record = json.loads(data) if len(data) <= MAX_RECORD else None
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _end_leftovers(record: dict[str, object]) -> int:
    killed = 0
    servers = record.get("servers")
    for pair in servers.values() if isinstance(servers, dict) else ():
        alive = isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int)
        if alive and _alive_as(pair[0], pair[1]) and _kill(pair[0]):
            killed += 1
    token = record.get("token")
    if not isinstance(token, str) or len(token) < 16:
        return killed
    needle = f"{MARK_VARIABLE}={token}".encode()
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit() and state_of(entry) not in (None, "Z") and carries(entry, needle):
                killed += _kill(int(entry))
    return killed
