"""An edit approved hunk by hunk (issue 27): the hunks are the diff's, and the file written
holds the approved ones only; the model is told which were rejected. On real files, with the
built-in tools under the approving wrapper (the approver answers as the prompt would)."""

from __future__ import annotations

from pathlib import Path

from paicli.permissions.approval import ApprovingToolbox
from paicli.permissions.hunks import hunks, merge
from paicli.permissions.policy import PermissionStore, Policy
from paicli.permissions.request import Answer, ApprovalRequest, Choice
from paicli.tools.builtin.toolbox import BuiltinToolbox

BEFORE = "".join(f"line {n}\n" for n in range(1, 31))
AFTER = BEFORE.replace("line 2\n", "LINE 2\n").replace("line 20\n", "LINE 20\n")
AFTER = AFTER.replace("line 29\n", "")


def test_the_hunks_are_the_diffs_and_merge_applies_the_chosen() -> None:
    parts = hunks(BEFORE, AFTER)
    assert [hunk.lines[0] for hunk in parts] == [
        "@@ -1,5 +1,5 @@",
        "@@ -17,7 +17,7 @@",
        "@@ -26,5 +26,4 @@",
    ]
    assert merge(BEFORE, AFTER, {0, 1, 2}) == AFTER
    assert merge(BEFORE, AFTER, ()) == BEFORE
    only = merge(BEFORE, AFTER, {0, 2})
    assert "LINE 2\n" in only and "line 20\n" in only and "line 29\n" not in only


def approving(tmp_path: Path, answer: Answer, asked: list[ApprovalRequest]) -> ApprovingToolbox:
    async def approver(request: ApprovalRequest) -> Answer:
        asked.append(request)
        return answer

    builtin = BuiltinToolbox(tmp_path)
    return ApprovingToolbox(
        builtin,
        policy=Policy(),
        store=PermissionStore(tmp_path / "permissions.json"),
        approver=approver,
        root=tmp_path,
        previewer=builtin.preview,
    )


async def test_the_file_holds_only_the_approved_hunks_and_the_model_is_told(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text(BEFORE)
    asked: list[ApprovalRequest] = []
    toolbox = approving(tmp_path, Answer(Choice.ALLOW_ONCE, hunks=frozenset({0, 2})), asked)
    spec = next(s for s in toolbox.specs() if s.name == "write_file")
    outcome = await toolbox.call(spec, {"path": "notes.txt", "content": AFTER})
    assert not outcome.is_error, outcome.text
    assert (tmp_path / "notes.txt").read_text() == merge(BEFORE, AFTER, {0, 2})
    assert outcome.text.startswith(
        "The user applied 2 of the 3 hunks of this edit and rejected hunk 2;"
    )
    assert outcome.decided_by == "user"
    assert asked[0].preview is not None


async def test_an_edit_file_call_too_and_no_hunk_at_all_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(
        BEFORE.replace("line 2\n", "x\n").replace("line 20\n", "x\n")
    )
    edit = {"path": "notes.txt", "old_string": "x\n", "new_string": "y\n", "replace_all": True}
    toolbox = approving(tmp_path, Answer(Choice.ALLOW_ONCE, hunks=frozenset({1})), [])
    spec = next(s for s in toolbox.specs() if s.name == "edit_file")
    outcome = await toolbox.call(spec, edit)
    assert not outcome.is_error, outcome.text
    text = (tmp_path / "notes.txt").read_text()
    assert text.count("y\n") == 1 and text.index("x\n") < text.index("y\n")
    before = (tmp_path / "notes.txt").read_text()
    toolbox = approving(tmp_path, Answer(Choice.ALLOW_ONCE, hunks=frozenset()), [])
    outcome = await toolbox.call(spec, {**edit, "old_string": "line 1\n", "new_string": "z\n"})
    assert outcome.is_error and "rejected every hunk" in outcome.text
    assert (tmp_path / "notes.txt").read_text() == before


async def test_a_file_changed_while_the_user_was_asked_is_not_written(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text(BEFORE)
    builtin = BuiltinToolbox(tmp_path)

    async def approver(request: ApprovalRequest) -> Answer:
        notes.write_text(BEFORE + "written meanwhile\n")  # another editor saves the file
        return Answer(Choice.ALLOW_ONCE, hunks=frozenset({0}))

    toolbox = ApprovingToolbox(
        builtin,
        policy=Policy(),
        store=PermissionStore(tmp_path / "permissions.json"),
        approver=approver,
        root=tmp_path,
        previewer=builtin.preview,
    )
    spec = next(s for s in toolbox.specs() if s.name == "write_file")
    outcome = await toolbox.call(spec, {"path": "notes.txt", "content": AFTER})
    assert outcome.is_error and "changed after this edit was approved" in outcome.text
    assert notes.read_text() == BEFORE + "written meanwhile\n"
