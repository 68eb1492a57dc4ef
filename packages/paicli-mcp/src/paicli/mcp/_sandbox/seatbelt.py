"""macOS Seatbelt: the profile `sandbox-exec -p` runs a command under. Written and tested
for its text only; no macOS machine has run it (docs/security.md says so).

The profile allows by default and then denies: every write outside the writable folders,
the temporary folders and the terminal devices; reading or writing a hidden path; the
network (a loopback profile may bind and reach 127.0.0.1, which on macOS is this
machine's, unlike Linux's own namespace; an allow-list may reach the proxy's port only);
and the keychain's service. In SBPL a later rule wins over an earlier one it overlaps.
Paths are resolved first: Seatbelt sees /private/tmp, not /tmp.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from .profile import Sandbox

__all__ = ["seatbelt_argv", "seatbelt_profile"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
TEMP_FOLDERS = ("/tmp", "/var/tmp", "/var/folders")
TERMINALS = ('(literal "/dev/null")', '(literal "/dev/zero")', '(literal "/dev/tty")')
TERMINAL_PATTERN = '(regex #"^/dev/ttys[0-9]+$")'
# What every program needs to read to start, when a profile narrows what may be read.
SYSTEM_READ = ("/usr", "/bin", "/sbin", "/System", "/Library", "/private/etc", "/dev")
# securityd answers keychain queries (`security find-generic-password`) over Mach IPC.
KEYCHAIN_SERVICES = ("com.apple.SecurityServer",)


def _quoted(path: str) -> str:
    escaped = path.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _subpaths(paths: Sequence[str]) -> list[str]:
    real = dict.fromkeys(os.path.realpath(p) for p in paths)
    return [f"(subpath {_quoted(p)})" for p in real]


def seatbelt_profile(
    sandbox: Sandbox, *, proxy_port: int | None = None, temp: str | None = None
) -> str:
    """The SBPL text for `sandbox`; `temp` is the user's $TMPDIR (writable too)."""
    lines = ["(version 1)", "(allow default)", "(deny file-write*)"]
    writable = [*sandbox.write, *TEMP_FOLDERS, *([temp] if temp else [])]
    lines.append(
        "(allow file-write* " + " ".join([*_subpaths(writable), *TERMINALS, TERMINAL_PATTERN]) + ")"
    )
    if sandbox.read != ("/",):
        lines.append('(deny file-read* (subpath "/"))')
        readable = [*sandbox.read, *sandbox.write, *TEMP_FOLDERS, *SYSTEM_READ]
        lines.append("(allow file-read* " + " ".join(_subpaths(readable)) + ")")
    if sandbox.read_only:
        lines.append("(deny file-write* " + " ".join(_subpaths(sandbox.read_only)) + ")")
    if sandbox.hide:
        lines.append("(deny file-read* file-write* " + " ".join(_subpaths(sandbox.hide)) + ")")
    lines.append("(deny network*)")
    if sandbox.network == "loopback":
        lines.append('(allow network-bind network-inbound (local ip "localhost:*"))')
        lines.append('(allow network-outbound (remote ip "localhost:*"))')
    elif sandbox.hosts:
        if proxy_port is None:
            raise ValueError("an allow-list needs the proxy's port")
        lines.append(f'(allow network-outbound (remote ip "localhost:{proxy_port}"))')
    names = " ".join(f"(global-name {_quoted(name)})" for name in KEYCHAIN_SERVICES)
    lines.append(f"(deny mach-lookup {names})")
    return "\n".join(lines) + "\n"


def seatbelt_argv(
    sandbox: Sandbox,
    command: Sequence[str],
    *,
    proxy_port: int | None = None,
    temp: str | None = None,
) -> list[str]:
    profile = seatbelt_profile(sandbox, proxy_port=proxy_port, temp=temp)
    return [SANDBOX_EXEC, "-p", profile, *command]
