"""Whether and how `execute_command` runs in the OS sandbox (`paicli.mcp.Sandbox`).

`SandboxSettings` is what the user chose: `mode` (`on`, the default: sandboxed where a
mechanism works, asked about where none does; `required`: no command runs unsandboxed; `off`)
from `--sandbox` or `[sandbox] mode` in the user's config.toml (never a repository's), the
hosts the network allow-list lets through and the folders commands may write besides the
project. `CommandSandbox` turns them into the profile (`Sandbox.for_project`: the project
writable, a private temporary folder, the rest read-only, secret stores hidden, the network
off unless hosts are listed) and says, per run, whether it can be enforced here: probed once
per process, by a thread the run starts (`prefetch`, once the run's first output is out); a
command checked before that probe ended waits for it.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from paicli.mcp import Sandbox, ServerConfigError

if TYPE_CHECKING:
    from paicli.mcp import SandboxSupport

__all__ = ["CommandSandbox", "SandboxMode", "SandboxSettings", "sandbox_settings"]

log = logging.getLogger("paicli.sandbox")

SandboxMode = Literal["on", "off", "required"]
MODES: tuple[str, ...] = get_args(SandboxMode)


@dataclass(frozen=True)
class SandboxSettings:
    """The user's sandbox choice for commands (see the module)."""

    mode: SandboxMode = "on"
    allow_hosts: tuple[str, ...] = ()
    write: tuple[str, ...] = field(default=())


def sandbox_settings(
    table: object, where: str, flag: str | None
) -> tuple[SandboxSettings, list[str]]:
    """The `[sandbox]` table of config.toml (`where` names it) with `--sandbox` (`flag`) over
    its mode; one problem line per bad value (which is then left at its default)."""
    problems: list[str] = []
    values = table if isinstance(table, dict) else {}
    if table is not None and not isinstance(table, dict):
        problems.append(f"{where}: [sandbox] must be a table; ignored")
    mode = values.get("mode", "on")
    if mode not in MODES:
        problems.append(f"{where}: sandbox.mode must be one of {', '.join(MODES)}; using on")
        mode = "on"
    if flag is not None:
        mode = flag
    hosts = _strings(values.get("allow_hosts", []), f"{where}: sandbox.allow_hosts", problems)
    write = _strings(values.get("write", []), f"{where}: sandbox.write", problems)
    try:  # the library checks each host's shape
        Sandbox(network=hosts or "none")
    except ServerConfigError as exc:
        problems.append(f"{where}: sandbox.allow_hosts: {exc}; no host is allowed")
        hosts = ()
    chosen: SandboxMode = "off" if mode == "off" else "required" if mode == "required" else "on"
    return SandboxSettings(chosen, hosts, write), problems


def _strings(value: object, where: str, problems: list[str]) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    problems.append(f"{where} must be a list of strings; ignored")
    return ()


class CommandSandbox:
    """The sandbox commands of one run get: their profile, and whether it holds here."""

    def __init__(
        self,
        settings: SandboxSettings,
        project: Path,
        *,
        home: Path | None = None,
        support: SandboxSupport | None = None,
        network: Literal["none", "loopback"] | tuple[str, ...] | None = None,
    ) -> None:
        """`network` (default: the allowed hosts, else none) is for `paicli sandbox
        --network`; a bad host raises ServerConfigError."""
        self.settings = settings
        write = [os.path.expanduser(w) for w in settings.write]
        self.profile = Sandbox.for_project(
            project,
            write=write,
            network=network or settings.allow_hosts or "none",
            home=home,
        )
        self._support = support  # probed at the first command unless given
        self._probing = False  # `prefetch` started the probe

    @property
    def off(self) -> bool:
        return self.settings.mode == "off"

    def prefetch(self) -> None:
        """Start probing what works here in the background, so the first command does not
        wait for it (the probes are a few short processes, about 50 ms). The probe's modules
        are loaded here, in the caller's thread: the probing thread imports nothing, so it
        may run beside a thread that does (gh-91351)."""
        if not self.off and self._support is None and not self._probing:
            self._probing = True
            # What a command needs too, so its first one imports nothing either.
            from paicli.mcp import check_sandbox, sandbox_command  # noqa: F401, PLC0415

            threading.Thread(
                target=_probe_quietly,
                args=(check_sandbox,),
                name="paicli-sandbox-probe",
                daemon=True,
            ).start()

    def mechanism(self) -> str | None:
        """The mechanism that contains commands here (`bubblewrap`, `landlock`, ...), or None
        when the sandbox is off or nothing here can enforce the profile. Blocking the first
        time (see `prefetch`)."""
        if self.off:
            return None
        return self._checked().mechanism(self.profile)

    def missing(self) -> str:
        """One line: why commands cannot be contained here, and what to do about it."""
        return (
            f"{self._checked().missing(self.profile)}; install bubblewrap (Debian and Ubuntu: "
            "apt-get install bubblewrap), or pass --sandbox off to run commands uncontained"
        )

    def _checked(self) -> SandboxSupport:
        if self._support is None:
            from paicli.mcp import check_sandbox  # noqa: PLC0415 - ctypes & co. when probing

            self._support = check_sandbox()
        return self._support

    def describe(self) -> Sequence[str]:
        """What the profile allows, for `paicli sandbox --check` and the doctor."""
        network = ", ".join(self.profile.hosts) or str(self.profile.network)
        return (
            f"writable: {', '.join(self.profile.write)} and a private temporary folder",
            f"hidden: {', '.join(self.profile.hide)}",
            f"network: {network}",
        )


def _probe_quietly(check_sandbox: Callable[[], SandboxSupport]) -> None:
    """`check_sandbox()` ahead of time; a failure here is only logged: the first command
    probes again and says what went wrong."""
    try:
        check_sandbox()
    except Exception:
        log.debug("probing the sandbox ahead of time failed", exc_info=True)
