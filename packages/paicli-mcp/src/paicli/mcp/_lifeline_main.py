"""The lifeline's other end: a tiny process that outlives its parent only to end what the
parent started.

Run as `python -I -S _lifeline_main.py` in a session of its own (Linux). Its stdin is a pipe
whose write end only the parent holds; the parent writes one JSON line per process group
it starts (`{"watch": PGID, "start": TICKS, "cgroup": PATH | null}`) and one when the group
is gone (`{"forget": PGID}`). At end of input, however the parent ended (SIGKILL, its
terminal closed, a crash, a normal exit), every group still watched is killed with SIGKILL,
and so is every process left in its cgroup, if it has one; then it exits. A group is
killed only while its leader is gone or is still the process that was started (same start
time): a process group id is not reused while any member lives, so that check is enough.
Standard library only: it starts in milliseconds.
"""

from __future__ import annotations

import json
import os
import signal
import sys


def start_time(pid: int) -> int | None:
    """A process's start time in clock ticks since boot, which with its pid names it for
    good (None: no such process, or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            stat = file.read()
    except OSError:
        return None
    # Fields after the parenthesised command name; starttime is field 22 (index 19 here).
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[19]) if len(fields) > 19 else None


def kill_cgroup(path: str) -> None:
    try:
        with open(os.path.join(path, "cgroup.kill"), "w") as file:
            file.write("1")
        return
    except OSError:
        pass  # cgroup v1, or a kernel before 5.14: one process at a time
    try:
        with open(os.path.join(path, "cgroup.procs")) as file:
            pids = [int(line) for line in file if line.strip()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def main() -> None:
    # Ctrl+C or a closed terminal reach the parent's process group, never this session;
    # the end of input is the only signal that matters.
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTSTP):
        signal.signal(sig, signal.SIG_IGN)
    groups: dict[int, tuple[int | None, str | None]] = {}
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
            if "watch" in message:
                groups[int(message["watch"])] = (message.get("start"), message.get("cgroup"))
            else:
                groups.pop(int(message["forget"]), None)
        except (ValueError, KeyError, TypeError):
            continue
    for pgid, (start, cgroup) in groups.items():
        if start_time(pgid) in (None, start):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        if cgroup:
            kill_cgroup(cgroup)


if __name__ == "__main__":
    main()
