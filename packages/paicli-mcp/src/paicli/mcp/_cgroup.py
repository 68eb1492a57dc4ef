"""A cgroup of one server's processes (Linux), for limits no rlimit can express.

The cgroup is created as a child of the one paicli runs in, in whichever hierarchy has the
controller: cgroup v2 (the unified hierarchy, where enabling a threaded controller such as
`pids` is allowed even in a cgroup that has processes) or a cgroup v1 hierarchy of its own.
It is named `paicli-<our pid>-<n>` (nothing from a config reaches a file name). The server
joins it between fork and exec (`procs_file`), so all its processes are counted from the
start; `remove()` kills whatever is left in it (a process that left the process group
included) and deletes it.
"""

from __future__ import annotations

import itertools
import os
import signal
from pathlib import Path

__all__ = ["Cgroup", "CgroupUnavailable"]

_counter = itertools.count(1)


class CgroupUnavailable(Exception):
    """No cgroup with this controller can be made here; the message says why (one line)."""


def _own_cgroups() -> dict[str, str]:
    """Our cgroup path per controller ("" keys the v2 unified hierarchy)."""
    paths: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if number == "0":
            paths[""] = path
        for controller in controllers.split(","):
            if controller:
                paths[controller] = path
    return paths


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, root inside the hierarchy, controllers or {""} for v2) of each
    cgroup mount."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        ours, _, theirs = line.partition(" - ")
        fields, extra = ours.split(), theirs.split()
        if len(extra) < 3 or len(fields) < 5:
            continue
        fstype, options = extra[0], set(extra[2].split(","))
        if fstype == "cgroup2":
            found.append((fields[4], fields[3], {""}))
        elif fstype == "cgroup":
            found.append((fields[4], fields[3], options))
    return found


def _parent_for(controller: str) -> tuple[Path, bool]:
    """The folder of our own cgroup in a hierarchy that has `controller`, and whether it
    is cgroup v2."""
    try:
        own, mounts = _own_cgroups(), _mounts()
    except OSError as exc:
        raise CgroupUnavailable(f"cannot read /proc: {exc.strerror}") from exc
    for point, root, options in mounts:
        v2 = options == {""}
        key = "" if v2 else controller
        if key not in own or (not v2 and controller not in options):
            continue
        relative = os.path.relpath(own[key], root) if own[key] != root else "."
        if relative.startswith(".."):
            continue  # our cgroup is outside what this mount shows
        folder = Path(point, relative)
        if v2:
            try:
                available = (folder / "cgroup.controllers").read_text().split()
            except OSError:
                continue
            if controller not in available:
                continue
        return folder, v2
    raise CgroupUnavailable(f"no cgroup hierarchy with the {controller!r} controller")


class Cgroup:
    """One server's cgroup with the `pids` controller and its `pids.max`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, *, max_tasks: int | None) -> Cgroup:
        """Make the cgroup with `pids.max` set (None: no limit, only a group to kill);
        raises CgroupUnavailable."""
        parent, v2 = _parent_for("pids")
        try:
            if v2 and "pids" not in (parent / "cgroup.subtree_control").read_text().split():
                (parent / "cgroup.subtree_control").write_text("+pids")
            path = parent / f"paicli-{os.getpid()}-{next(_counter)}"
            path.mkdir()
        except OSError as exc:
            raise CgroupUnavailable(f"cannot create a cgroup in {parent}: {exc.strerror}") from exc
        group = cls(path)
        if max_tasks is None:
            return group
        try:
            (path / "pids.max").write_text(str(max_tasks))
            # Read back: a limit that did not take must not pass for one that did.
            if (path / "pids.max").read_text().strip() != str(max_tasks):
                raise CgroupUnavailable(f"{path}/pids.max did not keep the limit")
        except OSError as exc:
            group.remove()
            raise CgroupUnavailable(f"cannot set {path}/pids.max: {exc.strerror}") from exc
        except CgroupUnavailable:
            group.remove()
            raise
        return group

    @property
    def procs_file(self) -> str:
        """Writing "0" here moves the writer into the cgroup."""
        return str(self.path / "cgroup.procs")

    def refused_forks(self) -> int:
        """How many times a fork or thread was refused for `pids.max`."""
        try:
            for line in (self.path / "pids.events").read_text().splitlines():
                key, _, count = line.partition(" ")
                if key == "max":
                    return int(count)
        except (OSError, ValueError):
            pass
        return 0

    def members(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_members(self) -> None:
        """SIGKILL every process still in the cgroup (a process that left the server's
        process group cannot leave its cgroup)."""
        for pid in self.members():
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def try_remove(self) -> bool:
        """Delete the cgroup; False while processes are still in it."""
        try:
            self.path.rmdir()
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True

    def remove(self) -> None:
        self.try_remove()
