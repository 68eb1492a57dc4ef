"""A `Sandbox` made real on this machine, for one server (restarts included) or command.

`PreparedSandbox.open` picks the mechanism (`support`) and starts the proxy of an
allow-list; `launch` gives what one process is spawned with: the argv (bwrap or
sandbox-exec in front, and the in-sandbox forwarder for an allow-list), its environment,
what the child runs before exec (Landlock and seccomp, for the Landlock fallback) and the
descriptors it inherits (the seccomp program bwrap reads). `aclose` stops the proxy and
removes its folder. With bubblewrap the network is a namespace of its own in every case;
seccomp adds: no sockets but Unix ones for "none", no TIOCSTI and no kernel keyrings in
any. Every mechanism's module is imported with this one, so preparing a sandbox imports
nothing (gh-91351).
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConnectionClosed, SandboxUnavailable
from . import landlock, seccomp
from .bwrap import ProxyMount, bwrap_argv, exit_status
from .native import capability_dropper
from .profile import Sandbox
from .proxy import FilteringProxy
from .seatbelt import seatbelt_argv
from .support import SandboxSupport, current_support

__all__ = ["Launch", "PreparedSandbox", "open_for_server"]

log = logging.getLogger("paicli.mcp.stdio")

FORWARD = str(Path(__file__).with_name("forward.py"))
# Where the forwarder listens inside the sandbox's own network namespace, where nothing
# else does; 3128 is the port HTTP proxies are known by.
PROXY_PORT = 3128
# The proxy's socket folder inside: under the private /tmp, where bwrap can make the mount
# point (the rest of the tree is read-only by then).
PROXY_INSIDE = "/tmp/.paicli-proxy"
PROXY_SOCKET = "proxy.sock"
# bwrap's own processes (its monitor, and the init of the PID namespace) count toward a
# server's process limit; so does the forwarder of an allow-list.
BWRAP_TASKS = 2
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
# Left out with a proxy: an exception list would send those hosts around the proxy, where
# they fail with a confusing error instead of the proxy's clear refusal.
NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")
# glibc's variables unsafe for a program more privileged than its caller (`unsecvars.h`),
# besides the LD_ and MALLOC_ ones.
UNSAFE_VARIABLES = frozenset(
    {
        "GCONV_PATH",
        "GETCONF_DIR",
        "GLIBC_TUNABLES",
        "HOSTALIASES",
        "LOCALDOMAIN",
        "LOCPATH",
        "NIS_PATH",
        "NLSPATH",
        "RESOLV_HOST_CONF",
        "RES_OPTIONS",
        "TZDIR",
    }
)
# Writable under Landlock, as the private /tmp is under bwrap (/var/tmp stays read-only in
# both).
TEMP_FOLDERS = ("/tmp",)


@dataclass
class Launch:
    """How to spawn one process in the sandbox. `close()` once it is spawned (or not)."""

    argv: list[str]
    env: dict[str, str]
    preexec: Callable[[], None] | None = None
    pass_fds: tuple[int, ...] = ()
    _fds: list[int] = field(default_factory=list)

    def preexec_after(self, first: Callable[[], None] | None) -> Callable[[], None] | None:
        """One function for the child running `first` (a server's limits), then the
        sandbox's: joining a cgroup is a write Landlock would refuse."""
        then = self.preexec
        if first is None or then is None:
            return first or then

        def run() -> None:
            first()
            then()

        return run

    def close(self) -> None:
        """Close the parent's copies of what the child inherited or used before exec."""
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds.clear()


class PreparedSandbox:
    """One profile, ready to launch processes with, and the proxy it owns."""

    def __init__(self, sandbox: Sandbox, mechanism: str, support: SandboxSupport) -> None:
        self.sandbox = sandbox
        self.mechanism = mechanism
        self._support = support
        self._proxy: FilteringProxy | None = None
        self._folder: str | None = None
        self._proxy_port: int | None = None

    @classmethod
    async def open(
        cls,
        sandbox: Sandbox,
        *,
        support: SandboxSupport | None = None,
        aliases: Mapping[str, str] | None = None,
    ) -> PreparedSandbox:
        """Raises SandboxUnavailable when nothing here can enforce `sandbox`. `aliases`
        (loopback addresses for names) is for tests of the allow-list."""
        support = support or await current_support()
        mechanism = support.mechanism(sandbox)
        if mechanism is None:
            raise SandboxUnavailable(support.missing(sandbox))
        prepared = cls(sandbox, mechanism, support)
        if sandbox.hosts:
            await prepared._start_proxy(aliases)
        return prepared

    async def _start_proxy(self, aliases: Mapping[str, str] | None) -> None:
        proxy = FilteringProxy(self.sandbox.hosts, aliases=aliases)
        self._proxy = proxy
        if self.mechanism == "bubblewrap":
            self._folder = tempfile.mkdtemp(prefix="paicli-proxy-")
            await proxy.start_unix(os.path.join(self._folder, PROXY_SOCKET))
        else:
            self._proxy_port = await proxy.start_tcp()

    @property
    def refused(self) -> list[str]:
        """The proxy's last refusals, one line each."""
        return [] if self._proxy is None else list(self._proxy.refused)

    @property
    def needs_cgroup(self) -> bool:
        """Whether only a cgroup can gather what a server leaves behind: Landlock has no PID
        namespace whose end takes every process with it."""
        return self.mechanism == "landlock"

    @property
    def overhead_tasks(self) -> int:
        """Processes of the sandbox's own that count toward a process limit."""
        if self.mechanism != "bubblewrap":
            return 0
        return BWRAP_TASKS + (1 if self.sandbox.hosts else 0)

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """`env` as the sandboxed process gets it: a temporary folder that exists inside,
        and the proxy for an allow-list."""
        result = dict(env)
        if self.mechanism == "bubblewrap":
            result["TMPDIR"] = "/tmp"  # the private /tmp; the caller's TMPDIR is not there
        if self.sandbox.hosts:
            port = PROXY_PORT if self.mechanism == "bubblewrap" else self._proxy_port
            for name in NO_PROXY_VARIABLES:
                result.pop(name, None)
            for name in PROXY_VARIABLES:
                result[name] = f"http://127.0.0.1:{port}"
        return result

    def launch(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        new_session: bool = True,
    ) -> Launch:
        """What to spawn for `argv`. `new_session` (unless the process needs the caller's
        terminal): bwrap starts it in a session of its own, so it cannot push keystrokes
        into the terminal it came from."""
        env = self.environment(env)
        where = None if cwd is None else os.fspath(cwd)
        if self.mechanism == "bubblewrap":
            return self._bwrap(argv, env, where, new_session)
        if self.mechanism == "landlock":
            return self._landlock(argv, env)
        temp = os.environ.get("TMPDIR")
        command = seatbelt_argv(self.sandbox, argv, proxy_port=self._proxy_port, temp=temp)
        return Launch(command, env)

    def _bwrap(
        self, argv: Sequence[str], env: dict[str, str], cwd: str | None, new_session: bool
    ) -> Launch:
        # bwrap itself runs outside the sandbox: the variables its dynamic loader and C
        # library obey (LD_PRELOAD: code of the caller's choosing) reach the command only
        # through bwrap's --setenv.
        loader = {name: value for name, value in env.items() if _unsafe_outside(name)}
        launch = Launch([], {k: v for k, v in env.items() if k not in loader})
        seccomp_fd = None
        if self._support.seccomp is None:
            program = seccomp.program("unix" if self.sandbox.network == "none" else "any")
            seccomp_fd, write_end = os.pipe()
            launch._fds.append(seccomp_fd)
            with os.fdopen(write_end, "wb") as pipe:  # far below a pipe's buffer
                pipe.write(program)
            launch.pass_fds = (seccomp_fd,)
        proxy = None
        command = list(argv)
        if self._folder is not None:
            proxy = ProxyMount(self._folder, PROXY_INSIDE)
            socket_inside = f"{PROXY_INSIDE}/{PROXY_SOCKET}"
            command = [sys.executable, "-I", "-S", FORWARD, socket_inside, str(PROXY_PORT), "--"]
            command += argv
        assert self._support.bwrap is not None
        launch.argv = bwrap_argv(
            self._support.bwrap,
            self.sandbox,
            command,
            cwd=cwd,
            seccomp_fd=seccomp_fd,
            new_session=new_session,
            proxy=proxy,
            setenv=loader,
        )
        return launch

    def _landlock(self, argv: Sequence[str], env: dict[str, str]) -> Launch:
        # The user's own temporary folder, from paicli's environment: the child's comes
        # from a server's entry too, where TMPDIR=~ would make the home folder writable.
        user_temp = os.environ.get("TMPDIR")
        temp = [*TEMP_FOLDERS, *([user_temp] if user_temp else [])]
        sandbox = self.sandbox
        ruleset = landlock.build_ruleset(
            sandbox.read, [*sandbox.write, *temp], sandbox.hide, network=False
        )
        restrict = landlock.restrictor(ruleset)
        # Landlock leaves capabilities alone: run by root, the process could still read
        # paicli's environment through /proc or load a kernel module.
        drop = capability_dropper()
        # Without a network namespace even Unix sockets must go: the D-Bus buses and the
        # docker socket would be reachable by path.
        install = seccomp.installer(seccomp.program("none", truncate=landlock.abi() >= 3))

        def preexec() -> None:
            restrict()
            drop()
            install()

        return Launch(list(argv), env, preexec, _fds=[ruleset])

    def exit_status(self, code: int) -> int:
        """The sandboxed process's exit status as a parent sees its child's (negative for a
        signal), from what the launched process reported."""
        if self.mechanism == "bubblewrap":
            return exit_status(code)
        return code

    async def aclose(self) -> None:
        """Stop the proxy and remove its folder (safe twice). Everything but waiting for
        the proxy's tasks happens before the first await, so a cancelled close still
        closes the listener and removes the folder."""
        proxy, self._proxy = self._proxy, None
        if proxy is not None:
            proxy.close()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
        if proxy is not None:
            await proxy.wait_closed()


def _unsafe_outside(name: str) -> bool:
    """Whether the loader or the C library of a program run with variable `name` would
    take code or files from it: glibc's list of variables it ignores for a setuid program
    (`unsecvars.h`), every LD_ and MALLOC_ one included."""
    return name.startswith(("LD_", "MALLOC_")) or name in UNSAFE_VARIABLES


async def open_for_server(name: str, sandbox: Sandbox) -> PreparedSandbox | None:
    """The sandbox of stdio server `name`, or None (with a warning) when none works here
    and the profile is not strict; a strict one that cannot be had fails the start."""
    try:
        return await PreparedSandbox.open(sandbox)
    except SandboxUnavailable as exc:
        if sandbox.strict:
            raise ConnectionClosed(f"{name}: not started: {exc}") from None
        log.warning("%s: running without a sandbox: %s", name, exc)
        return None
