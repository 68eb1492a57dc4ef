"""Confinement: every path a built-in tool touches stays inside the project root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paicli.tools._paths import Confinement, PathRefused
from paicli.tools.base import ToolSpec
from paicli.tools.builtin import BuiltinToolbox


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
    ["../outside/secret.txt", "..", "sub/../../outside", "/etc/passwd", "~/x", "a\x00b"],
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
