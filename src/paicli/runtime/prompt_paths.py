"""`@path` mentions (and pasted image paths) in the user's prompt, for the REPL and `-p` alike.

A mention of a file attaches it, read through the run's toolbox as the model's own read_file
would be (so the project's bounds, deny rules, protected files that must be asked about, the
secret values a read shows, hooks and the audit log all apply): its text goes before the
prompt in a delimited block with its path. A folder attaches its listing (list_dir, bounded);
a file over `max_bytes` is referenced, not pasted (its path and size, for the model to page
through with read_file). An image (`@shot.png`, or a bare path to one, as a terminal pastes a
dragged file) is checked by its bytes and goes to the model as an image part when the model
takes images. Anything else named `@word` that is not an existing path is left as typed
(e-mail addresses, decorators, `@server:uri` resources).
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from paicli.escape import one_line
from paicli.llm.images import IMAGE_SUFFIXES, MAX_IMAGE_BYTES, ImageProblem, image_part
from paicli.llm.messages import ImagePart
from paicli.runtime.run import Runtime
from paicli.tools.base import ToolSpec
from paicli.tools.builtin.files import NotRegularFile, open_regular
from paicli.tools.builtin.paths import Confinement, PathRefused
from paicli.tools.protected import ProtectedPaths

__all__ = ["MAX_PASTED_BYTES", "Attached", "attach_paths", "mentioned_paths"]

# A file larger than this is named to the model (path and size), not pasted: it would crowd
# out the conversation; read_file pages through it.
MAX_PASTED_BYTES = 256 * 1024
# `@path`, `@"path with spaces"`; not in the middle of a word (e-mail addresses).
_MENTION = re.compile(r'(?<![\w@])@(?:"([^"\n]+)"|([^\s"]+))')
_TRAILING = ".,;:!?)]}'\""


@dataclass
class Attached:
    """What the mentions add: the blocks to send before the prompt, the images, lines for
    the user (`notes`) and problems, one line each."""

    blocks: list[str] = field(default_factory=list)
    images: list[ImagePart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def prompt(self, text: str) -> str:
        """`text` (the user's words, resources already put before them) after the blocks."""
        return "\n\n".join([*self.blocks, text])


def mentioned_paths(text: str, servers: frozenset[str] = frozenset()) -> list[str]:
    """The paths `text` names: its `@path` mentions (not `@server:uri` of a configured
    server) and bare words ending in an image's extension, in order, each once."""
    found: dict[str, None] = {}
    for match in _MENTION.finditer(text):
        raw = match.group(1) or match.group(2).rstrip(_TRAILING)
        server, colon, _ = raw.partition(":")
        if raw and not (colon and server in servers):
            found[raw] = None
    for word in text.split():
        bare = word.strip("'\"")
        if not word.startswith("@") and Path(bare).suffix.lower() in IMAGE_SUFFIXES:
            found[bare] = None
    return list(found)


async def attach_paths(
    runtime: Runtime, text: str, *, max_bytes: int = MAX_PASTED_BYTES
) -> Attached:
    """The files and folders the user's `text` mentions (see the module's doc); never given
    text from elsewhere (a server's resource naming `@.env` must not read it)."""
    attached = Attached()
    servers = frozenset(runtime.config.servers)
    raws = [raw for raw in mentioned_paths(text, servers) if "\x00" not in raw]
    if not raws:
        return attached
    paths = Confinement(runtime.root)
    blocks = attached.blocks
    for raw in raws:
        bare = not text.count("@" + raw) and not text.count(f'@"{raw}"')
        found = await asyncio.to_thread(_look, paths, raw)
        if found is None:
            continue  # not a path: left as typed
        if isinstance(found, str):
            attached.problems.append(f"@{one_line(raw, 120)}: not attached: {found}")
            continue
        real, mode, size = found
        shown = paths.display(real)
        if stat.S_ISREG(mode) and real.suffix.lower() in IMAGE_SUFFIXES:
            await _image(runtime, paths, (paths.lexical(raw), real), attached)
        elif bare:
            continue  # only an image is taken from a bare path
        elif stat.S_ISDIR(mode):
            await _through(runtime, "folder", shown, attached)
        elif not stat.S_ISREG(mode):
            why = NotRegularFile(mode)
            attached.problems.append(f"@{one_line(raw, 120)}: not attached: {why}")
        elif size > max_bytes:
            blocks.append(
                _fenced(
                    "file",
                    shown,
                    f"[{size:,} bytes, over the {max_bytes // 1024:,} KiB that are attached "
                    "whole: not pasted. Read the parts you need with read_file.]",
                )
            )
            attached.notes.append(f"referenced @{shown} ({size:,} bytes, not pasted)")
        else:
            await _through(runtime, "file", shown, attached)
    return attached


def _look(paths: Confinement, raw: str) -> tuple[Path, int, int] | str | None:
    """What `raw` names: (real path, mode, size), why it cannot be attached, or None when
    it names nothing (then it is not a mention)."""
    try:
        lexical = paths.lexical(raw)
    except (ValueError, RuntimeError):  # `~nobody/x`: no such user
        return None
    if not os.path.lexists(lexical):
        return None
    try:
        real = paths.resolve(raw)
        found = os.stat(real)  # (a FIFO's stat does not open it)
    except PathRefused as exc:
        return str(exc)
    except OSError as exc:
        return exc.strerror or str(exc)
    return real, found.st_mode, found.st_size


async def _through(runtime: Runtime, kind: str, shown: str, attached: Attached) -> None:
    """A file (read_file) or folder (list_dir) attached through the run's toolbox."""
    tool = "read_file" if kind == "file" else "list_dir"
    outcome = await runtime.toolbox.call(_spec(runtime, tool), {"path": shown})
    if outcome.is_error:
        attached.problems.append(f"@{shown}: not attached: {one_line(outcome.text, 200)}")
        return
    attached.blocks.append(_fenced(kind, shown, outcome.text))
    what = "" if kind == "file" else "the listing of "
    attached.notes.append(f"attached {what}@{shown}")


async def _image(
    runtime: Runtime, paths: Confinement, names: tuple[Path, Path], attached: Attached
) -> None:
    """The image at `names` (as written, as resolved) attached, or a problem line."""
    lexical, real = names
    protected = ProtectedPaths(runtime.home.root)
    shown = paths.display(real)
    if not runtime.settings.images:
        attached.problems.append(
            f"@{shown}: not attached: the model does not take images (set images = true in "
            "~/.paicli/config.toml if it does)"
        )
        return
    why = protected.reason(lexical, writing=False) or protected.reason(real, writing=False)
    if why is not None:
        attached.problems.append(f"@{shown}: not attached: it is protected ({why})")
        return
    claimed = IMAGE_SUFFIXES[real.suffix.lower()]

    def read() -> bytes:
        with open_regular(paths, real) as file:
            return file.read(MAX_IMAGE_BYTES + 1)

    try:
        part = image_part(await asyncio.to_thread(read), claimed)
    except (ImageProblem, OSError, PathRefused) as exc:
        attached.problems.append(f"@{shown}: not attached: {exc}")
        return
    attached.images.append(part)
    attached.notes.append(f"attached the image @{shown}")


def _spec(runtime: Runtime, name: str) -> ToolSpec:
    return next(spec for spec in runtime.toolbox.specs() if spec.name == name)


def _fenced(kind: str, path: str, body: str) -> str:
    """`body` inside `<kind path="...">` tags the body does not contain, so nothing in a
    file can close the block early."""
    tag, number = kind, 1
    while f"</{tag}>" in body:
        number += 1
        tag = f"{kind}-{number}"
    quoted = path.replace("&", "&amp;").replace('"', "&quot;")
    ending = "" if body.endswith("\n") else "\n"
    return f'<{tag} path="{quoted}">\n{body}{ending}</{tag}>'
