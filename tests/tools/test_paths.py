"""Confinement: every path a built-in tool touches stays inside the project root."""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

import pytest

from paicli.tools.base import ToolSpec
from paicli.tools.builtin import files as _files
from paicli.tools.builtin import writes as _writes
from paicli.tools.builtin.paths import Confinement, PathRefused
from paicli.tools.builtin.toolbox import BuiltinToolbox


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A project root and, beside it, an outside directory with a secret."""
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (root / "inside.txt").write_text("hello\n")
    return root, outside


def spec(toolbox: BuiltinToolbox, name: str) -> ToolSpec:
    return next(s for s in toolbox.specs() if s.name == name)


def test_relative_and_absolute_paths_inside_the_root_resolve(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    paths = Confinement(root)
    assert paths.resolve("inside.txt") == root.resolve() / "inside.txt"
    assert paths.resolve(str(root / "inside.txt")) == root.resolve() / "inside.txt"
    assert paths.resolve(".") == root.resolve()
    assert paths.resolve("sub/../inside.txt") == root.resolve() / "inside.txt"
    assert paths.resolve("not/yet/there.txt") == root.resolve() / "not/yet/there.txt"


@pytest.mark.parametrize(
    "raw",
    ["../outside/secret.txt", "..", "sub/../../outside", "/etc/passwd", "~/x", "a\x00b", "\ud800"],
)
def test_paths_leaving_the_root_are_refused(layout: tuple[Path, Path], raw: str) -> None:
    root, _ = layout
    with pytest.raises(PathRefused, match="refused path"):
        Confinement(root).resolve(raw)


def test_a_symlinked_file_pointing_outside_is_refused(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(PathRefused, match="through a symlink"):
        Confinement(root).resolve("link.txt")


def test_a_symlinked_directory_pointing_outside_is_refused(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "linkdir").symlink_to(outside)
    with pytest.raises(PathRefused):
        Confinement(root).resolve("linkdir/secret.txt")
    with pytest.raises(PathRefused):
        Confinement(root).resolve("linkdir/new/file.txt")


def test_a_dangling_symlink_pointing_outside_is_refused(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "dangling").symlink_to(outside / "does-not-exist")
    with pytest.raises(PathRefused):
        Confinement(root).resolve("dangling")


def test_a_symlink_staying_inside_the_root_is_followed(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    (root / "alias.txt").symlink_to(root / "inside.txt")
    assert Confinement(root).resolve("alias.txt") == root.resolve() / "inside.txt"


def test_a_root_reached_through_a_symlink_still_confines(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    via = root.parent / "via"
    via.symlink_to(root)
    paths = Confinement(via)
    assert paths.resolve("inside.txt") == root.resolve() / "inside.txt"
    with pytest.raises(PathRefused):
        paths.resolve(str(outside / "secret.txt"))


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_file", {"path": "../outside/secret.txt"}),
        ("write_file", {"path": "../outside/new.txt", "content": "x"}),
        ("edit_file", {"path": "/etc/hostname", "old_string": "a", "new_string": "b"}),
        ("list_dir", {"path": ".."}),
        ("glob", {"pattern": "*", "path": "/"}),
        ("grep", {"pattern": "secret", "path": "../outside"}),
    ],
)
def test_every_file_tool_refuses_escapes_in_precheck(
    layout: tuple[Path, Path], tool: str, arguments: dict[str, object]
) -> None:
    root, _ = layout
    toolbox = BuiltinToolbox(root)
    outcome = toolbox.precheck(spec(toolbox, tool), arguments)
    assert outcome is not None
    assert outcome.is_error
    assert (outcome.decision, outcome.decided_by) == ("refused", "refusal")
    assert "refused path" in outcome.text
    assert "\n" not in outcome.text


async def test_call_refuses_an_escape_even_without_precheck(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / "link.txt").symlink_to(outside / "secret.txt")
    toolbox = BuiltinToolbox(root)
    outcome = await toolbox.call(spec(toolbox, "read_file"), {"path": "link.txt"})
    assert outcome.decided_by == "refusal"
    assert "secret" not in outcome.text.replace("secret.txt", "")


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_file", {"path": "a\ud800b"}),
        ("write_file", {"path": "a\ud800b", "content": "x"}),
        ("grep", {"pattern": "x", "path": "a\ud800b"}),
    ],
)
async def test_a_path_no_file_can_have_is_a_refusal_not_an_exception(
    layout: tuple[Path, Path], tool: str, arguments: dict[str, object]
) -> None:
    root, _ = layout
    toolbox = BuiltinToolbox(root)
    outcome = await toolbox.call(spec(toolbox, tool), arguments)
    assert (outcome.decision, outcome.decided_by) == ("refused", "refusal")
    assert "not a valid file name" in outcome.text


async def test_write_file_through_a_symlinked_parent_is_refused(
    layout: tuple[Path, Path],
) -> None:
    root, outside = layout
    (root / "out").symlink_to(outside)
    toolbox = BuiltinToolbox(root)
    outcome = await toolbox.call(
        spec(toolbox, "write_file"), {"path": "out/deeper/new.txt", "content": "x"}
    )
    assert outcome.decided_by == "refusal"
    assert not (outside / "deeper").exists()
    assert sorted(os.listdir(outside)) == ["secret.txt"]


def test_a_link_swapped_in_after_the_check_is_refused_not_followed(
    layout: tuple[Path, Path],
) -> None:
    root, outside = layout
    (root / "sub").mkdir()
    (root / "sub" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("outside\n")
    toolbox = BuiltinToolbox(root)
    checked = toolbox.paths.resolve("sub/f.txt")  # what precheck and approval saw
    os.rename(root / "sub", root / "aside")
    (root / "sub").symlink_to(outside)
    with pytest.raises(PathRefused, match="'sub' is a symbolic link now"):
        _files.read_file(toolbox.paths, checked, {}, 30_000)
    with pytest.raises(PathRefused, match="'sub' is a symbolic link now"):
        _writes.write_file(toolbox.paths, checked, {"content": "x"})
    assert (outside / "f.txt").read_text() == "outside\n"
    # The last name is opened without following a link either.
    os.unlink(root / "sub")
    os.rename(root / "aside", root / "sub")
    os.replace(root / "sub" / "f.txt", root / "sub" / "g.txt")
    (root / "sub" / "f.txt").symlink_to(outside / "f.txt")
    with pytest.raises(PathRefused, match=r"'f\.txt' is a symbolic link now"):
        _files.read_file(toolbox.paths, checked, {}, 30_000)


# -- a symlink swapped in and out while the tools work -----------------------------------------

ATTEMPTS = 200
_RENAME_EXCHANGE = 2  # renameat2 flag: swap two names in one step


def exchange(a: Path, b: Path) -> None:
    """Swap what the names `a` and `b` point to, atomically (Linux renameat2), so a folder
    and a symlink trade places with no moment where neither is there."""
    libc = ctypes.CDLL(None, use_errno=True)
    at_cwd = -100
    if libc.renameat2(at_cwd, bytes(a), at_cwd, bytes(b), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


class Swapper:
    """Swaps the folder `sub` with a symlink to `outside` over and over in a thread until the
    `with` block ends. Nothing waits on timing: the tools simply run while the tree keeps
    changing under them."""

    def __init__(self, sub: Path, outside: Path) -> None:
        self._sub = sub
        self._link = sub.with_name(".swap")
        self._link.symlink_to(outside)
        try:
            exchange(self._sub, self._link)
            exchange(self._sub, self._link)
        except OSError as exc:
            pytest.skip(f"this file system cannot swap names atomically: {exc}")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self.swaps = 0

    def _loop(self) -> None:
        while not self._stop.is_set():
            exchange(self._sub, self._link)
            self.swaps += 1

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        assert not self._thread.is_alive()
        assert self.swaps > 0


@pytest.fixture
def swapped(layout: tuple[Path, Path]) -> tuple[BuiltinToolbox, Path, Swapper]:
    """A project whose folder `sub` keeps trading places with a link to the outside folder;
    both hold a victim.txt, the outside one with a secret."""
    root, outside = layout
    (root / "sub").mkdir()
    (root / "sub" / "victim.txt").write_text("token inside\n")
    (outside / "victim.txt").write_text("token secret\n")
    return BuiltinToolbox(root), outside, Swapper(root / "sub", outside)


async def test_read_file_never_returns_an_outside_file_while_a_link_is_swapped_in(
    swapped: tuple[BuiltinToolbox, Path, Swapper],
) -> None:
    toolbox, _, swapper = swapped
    texts: list[str] = []
    inside = "     1\ttoken inside"
    with swapper:
        # At least ATTEMPTS reads, and on until one fell between swaps (on a loaded machine
        # the swaps may win many times running), within a bound.
        while len(texts) < ATTEMPTS or (inside not in texts and len(texts) < 25 * ATTEMPTS):
            outcome = await toolbox.call(spec(toolbox, "read_file"), {"path": "sub/victim.txt"})
            texts.append(outcome.text)
    assert not [text for text in texts if "secret" in text]
    assert inside in texts  # the reads did happen between swaps


async def test_write_file_never_lands_outside_while_a_link_is_swapped_in(
    swapped: tuple[BuiltinToolbox, Path, Swapper],
) -> None:
    toolbox, outside, swapper = swapped
    with swapper:
        for n in range(ATTEMPTS):
            await toolbox.call(
                spec(toolbox, "write_file"), {"path": f"sub/new{n}.txt", "content": "x"}
            )
    assert sorted(os.listdir(outside)) == ["secret.txt", "victim.txt"]


async def test_edit_file_never_changes_an_outside_file_while_a_link_is_swapped_in(
    swapped: tuple[BuiltinToolbox, Path, Swapper],
) -> None:
    toolbox, outside, swapper = swapped
    arguments = {"path": "sub/victim.txt", "old_string": "token", "new_string": "TOKEN"}
    with swapper:
        for _ in range(ATTEMPTS):
            await toolbox.call(spec(toolbox, "edit_file"), arguments)
    assert (outside / "victim.txt").read_text() == "token secret\n"
    assert sorted(os.listdir(outside)) == ["secret.txt", "victim.txt"]


async def test_list_dir_and_grep_never_show_an_outside_folder_while_a_link_is_swapped_in(
    swapped: tuple[BuiltinToolbox, Path, Swapper],
) -> None:
    toolbox, _, swapper = swapped
    texts: list[str] = []
    with swapper:
        for _ in range(ATTEMPTS // 2):
            listed = await toolbox.call(spec(toolbox, "list_dir"), {"path": "sub"})
            grepped = await toolbox.call(spec(toolbox, "grep"), {"pattern": "secret"})
            texts += [listed.text, grepped.text]
    assert not [text for text in texts if "secret" in text.replace("'secret'", "")]
