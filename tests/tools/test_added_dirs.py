"""`--add-dir DIR` (issue 27): the file tools and the command rules treat an added folder as
the project's, and nothing else: a path beside it, or a link out of it, is still refused."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from paicli.permissions.approval import ApprovingToolbox
from paicli.permissions.policy import PermissionStore, Policy
from paicli.permissions.rules import command_limit
from paicli.tools.base import ToolOutcome
from paicli.tools.builtin.toolbox import BuiltinToolbox
from paicli.tools.shell.reach import uncovered


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path, Path]:
    project, added, beside = tmp_path / "project", tmp_path / "added", tmp_path / "beside"
    for folder in (project, added, beside):
        folder.mkdir()
    (added / "notes.txt").write_text("from the added folder\n")
    (beside / "secret.txt").write_text("not yours\n")
    os.symlink(beside / "secret.txt", added / "link.txt")
    return project, added, beside


async def run(toolbox: BuiltinToolbox, name: str, arguments: Mapping[str, object]) -> ToolOutcome:
    spec = next(s for s in toolbox.specs() if s.name == name)
    early = toolbox.precheck(spec, arguments)
    return early if early is not None else await toolbox.call(spec, arguments)


async def test_the_file_tools_read_and_write_an_added_folder(
    places: tuple[Path, Path, Path],
) -> None:
    project, added, beside = places
    toolbox = BuiltinToolbox(project, also=[added])
    read = await run(toolbox, "read_file", {"path": str(added / "notes.txt")})
    assert not read.is_error and "from the added folder" in read.text
    wrote = await run(toolbox, "write_file", {"path": str(added / "new.txt"), "content": "x\n"})
    assert not wrote.is_error, wrote.text
    assert (added / "new.txt").read_text() == "x\n"
    listed = await run(toolbox, "list_dir", {"path": str(added)})
    assert "notes.txt" in listed.text
    for path in (beside / "secret.txt", added / "link.txt", added / ".." / "beside"):
        refused = await run(toolbox, "read_file", {"path": str(path)})
        assert refused.is_error and "outside the project root" in refused.text, path
    alone = await run(BuiltinToolbox(project), "read_file", {"path": str(added / "notes.txt")})
    assert alone.is_error and "outside the project root" in alone.text


def test_command_rules_count_an_added_folder_as_the_projects(
    places: tuple[Path, Path, Path],
) -> None:
    project, added, beside = places
    inside = ["cat", str(added / "notes.txt")]
    assert (
        uncovered(inside, project, project, shell=False) == f"`{inside[1]}` is outside the project"
    )
    assert uncovered(inside, project, project, shell=False, also=[added]) is None
    for outside in (beside / "secret.txt", added / "link.txt"):
        why = uncovered(["cat", str(outside)], project, project, shell=False, also=[added])
        assert why == f"`{outside}` is outside the project"
    call = {"command": f"cat {added / 'notes.txt'}"}
    assert command_limit(call, project, project, [added]) is None


@pytest.mark.real  # the command runs
async def test_an_allow_rule_covers_a_command_reading_an_added_folder(
    places: tuple[Path, Path, Path],
) -> None:
    project, added, _ = places
    builtin = BuiltinToolbox(project, also=[added])
    asked: list[str] = []

    async def approver(request: object) -> object:
        asked.append(str(request))
        raise AssertionError("an allowed call is not asked about")

    approvals = ApprovingToolbox(
        builtin,
        policy=Policy(allow=("execute_command(cat:*)",)),
        store=PermissionStore(project / "permissions.json", project=project),
        approver=approver,  # type: ignore[arg-type]
        root=project,
        project=project,
        also=[added],
    )
    spec = next(s for s in approvals.specs() if s.name == "execute_command")
    outcome = await approvals.call(spec, {"command": f"cat {added / 'notes.txt'}"})
    assert asked == []
    assert outcome.decided_by == "policy"
    assert "from the added folder" in outcome.text
