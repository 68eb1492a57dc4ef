"""`sandbox_command`: one command made ready to run in a sandbox, for an application that
spawns it itself (the agent's command tool).

The caller spawns `argv` once, with `env`, `preexec_fn=preexec` and `pass_fds=pass_fds`, and
then awaits `aclose()`, which stops the proxy of an allow-list; the exit status the caller
sees goes through `exit_status`. bwrap's `--die-with-parent` ties the sandbox to the thread
that spawns it (Linux's parent-death signal): spawn from a thread that outlives the command.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from ..errors import SandboxUnavailable
from .prepare import Launch, PreparedSandbox
from .profile import Sandbox

__all__ = ["SandboxedCommand", "filter_env", "sandbox_command"]

log = logging.getLogger("paicli.mcp.sandbox")


def filter_env(env: Mapping[str, str], names: Sequence[str] | None) -> dict[str, str]:
    """The variables of `env` whose names match one of `names` (all of them for None)."""
    if names is None:
        return dict(env)
    return {k: v for k, v in env.items() if any(fnmatchcase(k, n) for n in names)}


@dataclass
class SandboxedCommand:
    """A command ready to spawn in a sandbox (see the module's docstring for how)."""

    argv: list[str]
    env: dict[str, str]
    preexec: Callable[[], None] | None
    pass_fds: tuple[int, ...]
    mechanism: str  # "bubblewrap", "landlock", "seatbelt"; "none" when not strict
    _prepared: PreparedSandbox | None = field(default=None, repr=False)
    _launch: Launch | None = field(default=None, repr=False)

    def exit_status(self, code: int) -> int:
        """The command's own exit status from the spawned process's (bwrap reports a
        command killed by signal N as 128+N; this gives -N, as for a direct child)."""
        return code if self._prepared is None else self._prepared.exit_status(code)

    @property
    def refused(self) -> list[str]:
        """One line per request the allow-list refused lately (`curl` does not show the
        proxy's answer, so a caller may add these to the command's output)."""
        return [] if self._prepared is None else self._prepared.refused

    async def aclose(self) -> None:
        """Release what the sandbox holds (descriptors, the proxy); safe twice."""
        if self._launch is not None:
            self._launch.close()
        if self._prepared is not None:
            await self._prepared.aclose()


async def sandbox_command(
    argv: Sequence[str],
    sandbox: Sandbox,
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    terminal: bool = False,
) -> SandboxedCommand:
    """Wrap `argv` so it runs in `sandbox`. `env` (default: this process's environment) is
    filtered by the profile's `env` names; `terminal` keeps the caller's terminal session
    (bwrap's `--new-session` otherwise: no keystrokes can be pushed into the user's shell).
    Raises SandboxUnavailable when no mechanism here can enforce a strict profile; one
    that is not strict then runs as it is, with a warning."""
    passed = filter_env(os.environ if env is None else env, sandbox.env)
    try:
        prepared = await PreparedSandbox.open(sandbox)
    except SandboxUnavailable as exc:
        if sandbox.strict:
            raise
        log.warning("running %s without a sandbox: %s", argv[0] if argv else "", exc)
        return SandboxedCommand(list(argv), passed, None, (), "none")
    try:
        launch = prepared.launch(argv, passed, cwd=cwd, new_session=not terminal)
    except BaseException:
        await prepared.aclose()
        raise
    return SandboxedCommand(
        argv=launch.argv,
        env=launch.env,
        preexec=launch.preexec,
        pass_fds=launch.pass_fds,
        mechanism=prepared.mechanism,
        _prepared=prepared,
        _launch=launch,
    )
