"""Writing files: write_file and edit_file.

Each runs synchronously (the toolbox moves it to a thread) on a path already confined by
`Confinement`, and turns every failure into an error outcome naming the path. The target's
folder is opened through `Confinement`'s descriptors, and the write is atomic within it: the
new content goes to a temporary file made in that folder descriptor, which then replaces the
target by a rename in the same descriptor, so a failure at any step leaves the old file as it
was and a symlink swapped in never leads the write elsewhere.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path

from paicli.tools.base import APPROVED, Preview, ToolOutcome
from paicli.tools.builtin.files import NotRegularFile, is_binary, open_regular_at
from paicli.tools.builtin.paths import Confinement

__all__ = ["MAX_WRITE_BYTES", "check_write", "edit_file", "preview", "replace_at", "write_file"]

MAX_WRITE_BYTES = 5 * 1024 * 1024


def _error(text: str) -> ToolOutcome:
    return ToolOutcome(text=text, is_error=True)


def _decode(data: bytes, shown: str) -> str | ToolOutcome:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error(f"{shown} is not UTF-8 text (invalid byte at offset {exc.start})")


Replace = Callable[[bytes], None]  # writes a file's new bytes elsewhere (an editor)


def write_file(
    paths: Confinement,
    path: Path,
    arguments: Mapping[str, object],
    *,
    replace: Replace | None = None,
) -> ToolOutcome:
    """Create or replace a file with `content`, creating parent directories as needed;
    `replace`: who writes the checked file's bytes (default: an atomic replace on disk)."""
    shown = paths.display(path)
    content = str(arguments["content"])
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError as exc:
        return _error(f"content for {shown} cannot be encoded as UTF-8: {exc.reason}")
    if len(data) > MAX_WRITE_BYTES:
        return _error(_too_large(len(data)))
    directory = _error(f"{shown} is a directory; cannot write a file there")
    if path == paths.root:
        return directory
    with paths.open_parent(path, create=True) as folder:
        existing = paths.stat_at(folder, path.name, path)
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            return directory
        if existing is not None and (problem := _not_writable(folder, path.name, shown)):
            return problem
        if existing is not None and (problem := _changed_since_approval(paths, folder, path)):
            return problem
        if replace is not None:
            replace(data)
        else:
            replace_at(folder, path.name, data, keep=existing)
    verb = "Overwrote" if existing is not None else "Created"
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    return ToolOutcome(text=f"{verb} {shown} ({len(data)} bytes, {lines} lines)")


def _changed_since_approval(paths: Confinement, folder: int, path: Path) -> ToolOutcome | None:
    """A file replaced by an approved write_file must still be what the approval showed
    (its diff, or the hunks picked from it), else nothing is written."""
    approved, shown = APPROVED.get(), paths.display(path)
    if approved is None or approved.digest is None or approved.path != shown:
        return None
    with open_regular_at(paths, folder, path) as f:
        data = f.read(MAX_WRITE_BYTES + 1)
    if hashlib.sha256(data).hexdigest() == approved.digest:
        return None
    return _error(
        f"{shown} changed after this edit was approved, so the change shown is not the one "
        "that would be made; nothing was written. Read the file again"
    )


def check_write(arguments: Mapping[str, object]) -> ToolOutcome | None:
    """Refuse content over the write cap before anyone is asked to approve writing it."""
    size = len(str(arguments["content"]).encode("utf-8", errors="surrogatepass"))
    return ToolOutcome.refused(_too_large(size)) if size > MAX_WRITE_BYTES else None


def _too_large(size: int) -> str:
    return (
        f"content is {size} bytes, over the {MAX_WRITE_BYTES // (1024 * 1024)} MB limit of "
        "write_file; write it in smaller files"
    )


def edit_file(
    paths: Confinement,
    path: Path,
    arguments: Mapping[str, object],
    *,
    source: bytes | None = None,
    replace: Replace | None = None,
) -> ToolOutcome:
    """Replace `old_string` with `new_string`: once (it must be unique) or everywhere;
    `source` and `replace`: the content as an editor has it, and who writes it back (the
    file on disk is still checked)."""
    shown = paths.display(path)
    old = str(arguments["old_string"])
    new = str(arguments["new_string"])
    replace_all = bool(arguments.get("replace_all", False))
    if old == new:
        return _error("old_string and new_string are identical; nothing to change")
    if path == paths.root:
        return _error(f"{shown} is a directory, not a file")
    # One folder descriptor for the read and the replace: both touch the same folder.
    with paths.open_parent(path) as folder:
        try:
            opened = open_regular_at(paths, folder, path)
        except NotRegularFile as exc:
            if stat.S_ISDIR(exc.mode):
                return _error(f"{shown} is a directory, not a file")
            raise
        with opened as f:
            existing = os.fstat(f.fileno())
            if existing.st_size > MAX_WRITE_BYTES:
                return _error(
                    f"{shown} is {existing.st_size} bytes, over the "
                    f"{MAX_WRITE_BYTES // (1024 * 1024)} MB limit of edit_file; change it with "
                    "a command instead"
                )
            data = f.read(MAX_WRITE_BYTES + 1) if source is None else source
        approved = APPROVED.get()
        if (
            approved is not None
            and approved.digest is not None
            and approved.path == shown
            and hashlib.sha256(data).hexdigest() != approved.digest
        ):
            return _error(
                f"{shown} changed after this edit was approved, so the change shown is not "
                "the one that would be made; nothing was written. Read the file again"
            )
        if problem := _not_writable(folder, path.name, shown):
            return problem
        edited = _edited(data, old, new, replace_all=replace_all, shown=shown)
        if isinstance(edited, ToolOutcome):
            return edited
        updated, count = edited
        if replace is not None:
            replace(updated)
        else:
            replace_at(folder, path.name, updated, keep=existing)
    noun = "occurrence" if count == 1 else "occurrences"
    return ToolOutcome(text=f"Replaced {count} {noun} in {shown}")


def preview(
    paths: Confinement, path: Path, arguments: Mapping[str, object], tool: str
) -> Preview | None:
    """What write_file or edit_file would change in `path`, for the approval prompt; None
    when it cannot be shown as text (the call itself then reports why, if it fails)."""
    shown = paths.display(path)
    data: bytes | None = None
    try:
        with paths.open_parent(path) as folder, open_regular_at(paths, folder, path) as f:
            data = f.read(MAX_WRITE_BYTES + 1)
    except FileNotFoundError:
        data = None
    except Exception:  # a folder, a link, a device, no permission: the call will say
        return None
    if data is not None and (len(data) > MAX_WRITE_BYTES or is_binary(data)):
        return None
    before = _decode(data, shown) if data is not None else None
    if isinstance(before, ToolOutcome):
        return None
    digest = hashlib.sha256(data).hexdigest() if data is not None else None
    if tool == "write_file":
        return Preview(shown, before, str(arguments["content"]), digest)
    if data is None:
        return None
    edited = _edited(
        data,
        str(arguments["old_string"]),
        str(arguments["new_string"]),
        replace_all=bool(arguments.get("replace_all", False)),
        shown=shown,
    )
    if isinstance(edited, ToolOutcome):
        return None
    return Preview(shown, before, edited[0].decode("utf-8", "surrogateescape"), digest)


def _edited(
    data: bytes, old: str, new: str, *, replace_all: bool, shown: str
) -> tuple[bytes, int] | ToolOutcome:
    """The file's new bytes and how many occurrences were replaced, or why not."""
    if is_binary(data):
        return _error(f"{shown} looks like a binary file; edit_file only edits text")
    text = _decode(data, shown)
    if isinstance(text, ToolOutcome):
        return text
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r" not in old:
        # The model copies lines from read_file, which shows them without their "\r".
        old, new = old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        return _error(
            f"old_string was not found in {shown}; read the file and copy the exact text "
            "(whitespace and indentation included)"
        )
    if count > 1 and not replace_all:
        return _error(
            f"old_string occurs {count} times in {shown}; include more surrounding context "
            "to make it unique, or set replace_all to replace every occurrence"
        )
    updated = (text.replace(old, new) if replace_all else text.replace(old, new, 1)).encode()
    if len(updated) > MAX_WRITE_BYTES:
        return _error(
            f"the edit would make {shown} {len(updated)} bytes, over the "
            f"{MAX_WRITE_BYTES // (1024 * 1024)} MB limit of edit_file; nothing was changed"
        )
    return updated, count


def _not_writable(folder: int, name: str, shown: str) -> ToolOutcome | None:
    # Replacing by rename needs only the directory to be writable, so a read-only file would
    # be replaced silently; and root passes os.access, so the mode bits are asked too.
    found = os.stat(name, dir_fd=folder, follow_symlinks=False)
    if os.access(name, os.W_OK, dir_fd=folder, follow_symlinks=False) and found.st_mode & 0o222:
        return None
    return _error(f"{shown} is read-only; change its permissions first if it should be edited")


def replace_at(folder: int, name: str, data: bytes, *, keep: os.stat_result | None) -> None:
    """Replace `name` in the folder `folder` with `data` in one step: a temporary file made
    in the same folder descriptor (never through a link), flushed, then renamed over `name`
    (a rename replaces a link there rather than following it). The file keeps `keep`'s
    permissions; a new one gets the usual mode for the umask, as an editor's would. On any
    failure `name` is untouched and the temporary file removed."""
    temporary = f".{name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, 0o666, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            if keep is not None:
                os.fchmod(file.fileno(), stat.S_IMODE(keep.st_mode))
            os.fsync(file.fileno())
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise
