"""Adding and removing one server in one mcp.json file (`paicli mcp add/remove`).

A file is changed only when it parsed: it is rewritten whole, atomically (a temporary file
next to it, then a rename), through a symlink rather than over it, keeping its mode. The
read and the write happen under a lock on the file's folder (`folder_lock`), so two edits at
once (two `paicli mcp add` in a script) both land: without it the later write dropped the
earlier one's server. A project's file (`inside` its project) is edited only when it really
is in the project: a cloned repository's `.paicli` or `mcp.json` may be a symlink leading
anywhere, and the loader would not read the file so written anyway. On any failure the file
is left exactly as it was and `ConfigWriteError` says why.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

from paicli.private_files import folder_lock, make_private_dir, write_atomically
from paicli.servers._config_file import InvalidConfig, read_document
from paicli.servers._names import name_problem
from paicli.servers.errors import ConfigError

__all__ = ["ConfigWriteError", "ServerExists", "add_server", "remove_server"]


class ConfigWriteError(ConfigError):
    """A config file could not be updated; it is left exactly as it was."""


class ServerExists(ConfigWriteError):
    """The file already has a server of that name and replacing it was not asked for."""


def add_server(
    path: Path,
    name: str,
    entry: Mapping[str, object],
    *,
    replace: bool = False,
    inside: Path | None = None,
) -> None:
    """Add server `name` to the config file at `path`, creating it if needed; an existing
    server of that name is replaced only with `replace` (else `ServerExists`). `inside` is
    the project folder a project's file must really be in."""
    problem = name_problem(name)
    if problem is not None:
        raise ConfigWriteError(f"{path}: cannot add server {name!r}: {problem}")
    with _editing(path, create=True, inside=inside):
        document = _document_for_update(path)
        servers = document.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise ConfigWriteError(f"{path}: 'mcpServers' is not an object; not changing the file")
        if name in servers and not replace:
            raise ServerExists(f"{path} already has a server named {name!r}")
        servers[name] = dict(entry)  # a replaced name keeps its place in the file
        _write_atomically(path, document)


def remove_server(path: Path, name: str, *, inside: Path | None = None) -> bool:
    """Remove server `name` from the file at `path`; False when it was not there."""
    with _editing(path, create=False, inside=inside):
        document = _document_for_update(path)
        servers = document.get("mcpServers", {})
        if not isinstance(servers, dict):
            raise ConfigWriteError(f"{path}: 'mcpServers' is not an object; not changing the file")
        if name not in servers:
            return False
        del servers[name]
        _write_atomically(path, document)
        return True


@contextmanager
def _editing(path: Path, *, create: bool, inside: Path | None) -> Iterator[None]:
    """The lock for one edit of `path`: on the folder of the file it leads to (a symlink's
    target), made first when `create` (an add); a missing folder has nothing to remove, so
    without `create` it is not made (a remove leaves no `.paicli/` behind) nor locked.
    Nothing is made or locked for a file that leads out of `inside`."""
    if inside is not None and not Path(os.path.realpath(path)).is_relative_to(
        os.path.realpath(inside)
    ):
        raise ConfigWriteError(
            f"{path}: not changing it: a symbolic link out of the project ({inside})"
        )
    folder = _target(path).parent
    with ExitStack() as held:
        try:
            if create:
                make_private_dir(folder)
            if folder.is_dir():
                held.enter_context(folder_lock(folder))
        except OSError as exc:
            raise ConfigWriteError(f"{path}: cannot write: {exc.strerror or exc}") from exc
        yield


def _target(path: Path) -> Path:
    # Write through a symlink (dotfiles managers link config files) instead of replacing it.
    return path.resolve() if path.is_symlink() else path


def _document_for_update(path: Path) -> dict[str, object]:
    try:
        return read_document(path, str(path))
    except InvalidConfig as exc:
        # Rewriting a file we could not parse would throw away the user's text.
        raise ConfigWriteError(f"{exc}; not changing the file") from exc


def _write_atomically(path: Path, document: dict[str, object]) -> None:
    target = _target(path)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    try:
        # A new file is 0600, which suits a file that may hold tokens; an existing file
        # keeps the mode its owner chose.
        write_atomically(target, text.encode("utf-8"), keep_mode=True)
    except OSError as exc:
        raise ConfigWriteError(f"{path}: cannot write: {exc.strerror or exc}") from exc
