"""`Sandbox`: what a sandboxed process may read, write and reach. Data only.

How this machine enforces a profile is `prepare`'s business (bubblewrap, Landlock and
seccomp, Seatbelt). Paths are made absolute and normalised when the profile is made, so it
means the same wherever it is used later; symlinks are resolved only when it is applied.
The default hides the user's secret stores, so a profile built by hand is not weaker than
`Sandbox.for_project` by accident.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..errors import ServerConfigError

__all__ = ["PROJECT_READ_ONLY", "SECRET_STORES", "Network", "Sandbox", "sandbox_from_dict"]

Network = Literal["none", "loopback"] | tuple[str, ...]

# Credential stores under the home folder, hidden whole (neither read nor written): keys,
# cloud and cluster credentials, registry tokens, keyrings, and paicli's own folder. A
# command that needs a credential is given it explicitly (an environment variable).
SECRET_STORES = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".paicli",
    ".local/share/keyrings",
    ".password-store",
    ".git-credentials",
    ".config/gh",
    ".azure",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    # git's credential store where XDG puts it, registry logins of podman, buildah and
    # skopeo, Claude Code's login, and the credential files paicli's own file tools guard
    # (Vault, PostgreSQL, MySQL, boto, s3cmd).
    ".config/git/credentials",
    ".config/containers/auth.json",
    ".claude/.credentials.json",
    ".vault-token",
    ".pgpass",
    ".my.cnf",
    ".boto",
    ".s3cfg",
    # Shell and client histories: what was typed, `export TOKEN=...` and `mysql -p...`
    # included.
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
    ".sqlite_history",
    ".rediscli_history",
)
# The runtime folders hold the sockets of the D-Bus buses (the keyring's Secret Service,
# systemd), of ssh- and gpg-agents and of docker, podman and containerd: each one is a way
# out of any sandbox that can reach it.
RUNTIME_PATHS = ("/run", "/var/run")
# The system's own secrets, which only root reads, but paicli run as root (a container, a
# CI job) keeps root's uid in the sandbox, and the owner of a file needs no capability to
# read it: password hashes and the SSH host keys.
SYSTEM_SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
    "/etc/ssh/ssh_host_dsa_key",
)
# Inside a writable project, files that make code run outside the sandbox later (a git hook,
# `core.fsmonitor` or `core.hooksPath` in git's config) stay read-only.
PROJECT_READ_ONLY = (".git/hooks", ".git/config")

_LABEL = r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"
_HOST_NAME = re.compile(rf"(?:\*\.)?(?:{_LABEL}\.)*{_LABEL}")
_ENV_NAME = re.compile(r"[A-Za-z_*?][A-Za-z0-9_*?]*")
_DICT_KEYS = ("write", "read", "network", "env")


def secret_paths(home: str | os.PathLike[str] | None = None) -> tuple[str, ...]:
    """The secret stores of `home` (default: the current user's), the runtime folders and
    the system's secrets."""
    base = os.fspath(home) if home is not None else os.path.expanduser("~")
    stores = (os.path.join(base, name) for name in SECRET_STORES)
    return (*stores, *RUNTIME_PATHS, *SYSTEM_SECRETS)


def _paths(value: object, key: str) -> tuple[str, ...]:
    if isinstance(value, str | os.PathLike) or not isinstance(value, Sequence):
        raise ServerConfigError(f"sandbox: {key!r} must be a list of paths")
    paths = []
    for item in value:
        if not isinstance(item, str | os.PathLike):
            raise ServerConfigError(f"sandbox: {key!r} must be a list of paths")
        path = os.path.expanduser(os.fspath(item))
        if not os.path.isabs(path):
            raise ServerConfigError(f"sandbox: {key!r}: {path!r} is not an absolute path")
        paths.append(os.path.normpath(path))
    return tuple(dict.fromkeys(paths))


def check_host(entry: object) -> str:
    """One allow-list entry, normalised: `example.com`, `*.example.com` (its subdomains),
    an IP address, each optionally with `:port`."""
    if not isinstance(entry, str) or not entry:
        raise ServerConfigError("sandbox: each allowed host must be a non-empty string")
    text = entry.strip().lower().rstrip(".")
    host, port = text, ""
    if text.startswith("["):  # [v6]:port
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, port = text.split(":")
    if port and not (port.isdigit() and 0 < int(port) < 65536):
        raise ServerConfigError(f"sandbox: allowed host {entry!r} has a bad port")
    import ipaddress  # noqa: PLC0415 - only for an allow-list

    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        if not _HOST_NAME.fullmatch(host) or len(host) > 253:
            raise ServerConfigError(f"sandbox: {entry!r} is not a host name") from None
        return f"{host}:{port}" if port else host
    shown = f"[{address}]" if address.version == 6 else str(address)
    return f"{shown}:{port}" if port else shown


def _network(value: object) -> Network:
    if value == "none" or value == "loopback":  # noqa: PLR1714 - narrows the Literal
        return value
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ServerConfigError(
            'sandbox: \'network\' must be "none", "loopback" or a list of allowed hosts'
        )
    hosts = tuple(dict.fromkeys(check_host(entry) for entry in value))
    return hosts or "none"


@dataclass(frozen=True, slots=True)
class Sandbox:
    """What a sandboxed process may do.

    `read`: folders it may read (default: everything); `write`: folders it may change
    (besides a private temporary folder, always writable); `hide`: paths it can neither
    read nor change (default: the user's secret stores and the runtime sockets, see
    `SECRET_STORES`); `read_only`: paths inside `write` that stay read-only.
    `network`: `"none"` (no network at all), `"loopback"` (a loopback of its own: servers it
    starts itself are reachable, nothing of this machine or beyond is), or a tuple of hosts
    reached through a filtering proxy (`example.com`, `*.example.com`, optionally `:443`).
    `env`: the inherited environment variables that pass (names, `*` patterns); None passes
    what the caller gives. `strict` (the default): when no mechanism here can enforce the
    profile, nothing runs, instead of running unsandboxed with a warning.
    """

    read: tuple[str, ...] = ("/",)
    write: tuple[str, ...] = ()
    hide: tuple[str, ...] = field(default_factory=secret_paths)
    read_only: tuple[str, ...] = ()
    network: Network = "none"
    env: tuple[str, ...] | None = None
    strict: bool = True

    def __post_init__(self) -> None:
        for key in ("read", "write", "hide", "read_only"):
            object.__setattr__(self, key, _paths(getattr(self, key), key))
        object.__setattr__(self, "network", _network(self.network))
        if self.env is not None:
            names = self.env
            if isinstance(names, str) or not all(
                isinstance(n, str) and _ENV_NAME.fullmatch(n) for n in names
            ):
                raise ServerConfigError("sandbox: 'env' must be a list of variable names")
            object.__setattr__(self, "env", tuple(names))
        if not isinstance(self.strict, bool):
            raise ServerConfigError("sandbox: 'strict' must be true or false")

    @classmethod
    def for_project(
        cls,
        root: str | os.PathLike[str],
        *,
        write: Sequence[str | os.PathLike[str]] = (),
        network: Network | Sequence[str] = "none",
        env: Sequence[str] | None = None,
        home: str | os.PathLike[str] | None = None,
        strict: bool = True,
    ) -> Sandbox:
        """The project folder (and `write`) writable, a private temporary folder, the rest
        read-only, the secret stores of `home` (default: the user's) hidden, the project's
        git hooks and config read-only, and the given network."""
        project = os.path.abspath(os.path.expanduser(os.fspath(root)))
        return cls(
            write=(project, *(os.fspath(w) for w in write)),
            hide=secret_paths(home),
            read_only=tuple(os.path.join(project, name) for name in PROJECT_READ_ONLY),
            network=_network(network),
            env=None if env is None else tuple(env),
            strict=strict,
        )

    @property
    def hosts(self) -> tuple[str, ...]:
        """The allowed hosts (empty unless `network` is an allow-list)."""
        return self.network if isinstance(self.network, tuple) else ()


def sandbox_from_dict(value: object, where: str, *, cwd: str | None) -> Sandbox | None:
    """The `"sandbox"` key of a server entry: `true` (its folder writable, see
    `Sandbox.for_project`), `false` (none), or an object with any of `write`, `read`,
    `network` and `env`; relative paths are from the server's `cwd` (default: the current
    folder), and `write` replaces the server's folder when given."""
    if value is False:
        return None
    base = os.path.abspath(os.path.expanduser(cwd or os.curdir))
    if value is True:
        return Sandbox.for_project(base)
    if not isinstance(value, Mapping):
        raise ServerConfigError(f"{where}: 'sandbox' must be true, false or an object")
    unknown = sorted(set(value) - set(_DICT_KEYS))
    if unknown:
        raise ServerConfigError(f"{where}: sandbox: unknown key {unknown[0]!r}")
    try:
        default = Sandbox.for_project(base)
        write = value.get("write")
        read = value.get("read", default.read)
        for key, paths in (("write", write), ("read", read)):
            if paths is not None and not isinstance(paths, list | tuple):
                raise ServerConfigError(f"sandbox: {key!r} must be a list of paths")
        return Sandbox(
            read=tuple(_from(base, p) for p in read),
            write=default.write if write is None else tuple(_from(base, p) for p in write),
            hide=default.hide,
            read_only=default.read_only,
            network=value.get("network", "none"),
            env=value.get("env"),
        )
    except ServerConfigError as exc:
        raise ServerConfigError(f"{where}: {exc}") from None


def _from(base: str, path: object) -> str:
    if not isinstance(path, str):
        raise ServerConfigError("sandbox: paths must be strings")
    return os.path.join(base, os.path.expanduser(path))
