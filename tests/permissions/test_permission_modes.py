"""Permission modes, rules with arguments, answers per project, and diffs for file edits."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from paicli.home import PaicliHome
from paicli.permissions.approval import (
    Answer,
    ApprovalRequest,
    ApprovingToolbox,
    Choice,
    Mode,
    PermissionStore,
    Policy,
    project_settings,
)
from paicli.permissions.policy import permission_policy
from paicli.run_settings import configured_mode
from paicli.tools.builtin.toolbox import BuiltinToolbox
from paicli.tools.combined import CombinedToolbox
from paicli.ui.approval_prompt import question, request_text
from paicli.user_config import UserConfig

from .test_approval import MCP_READ_UNTRUSTED, READ, RUN, WRITE, RecordingToolbox, ScriptedApprover

EDIT = type(WRITE)("edit_file", "Edit a file", {"type": "object"}, "write")


def approving(
    inner: RecordingToolbox,
    tmp_path: Path,
    approver: ScriptedApprover | None,
    *,
    mode: Mode = Mode.DEFAULT,
    policy: Policy | None = None,
    store: PermissionStore | None = None,
    flag_deny: tuple[str, ...] = (),
) -> ApprovingToolbox:
    return ApprovingToolbox(
        inner,
        policy=policy or Policy(),
        store=store or PermissionStore(tmp_path / "permissions.json", project=tmp_path),
        approver=approver,
        mode=mode,
        root=tmp_path,
        flag_deny=flag_deny,
    )


# -- modes ----------------------------------------------------------------------------------


async def test_plan_mode_runs_read_tools_and_refuses_the_rest_telling_the_model_why(
    tmp_path: Path,
) -> None:
    inner, approver = RecordingToolbox(), ScriptedApprover()
    box = approving(inner, tmp_path, approver, mode=Mode.PLAN)
    assert (await box.call(READ, {"path": "a"})).decision == "allowed"
    for spec in (WRITE, RUN, MCP_READ_UNTRUSTED):
        outcome = await box.call(spec, {"command": "ls"})
        if spec is MCP_READ_UNTRUSTED:  # read-only by its own claim: asked about, not refused
            continue
        assert (outcome.decision, outcome.decided_by) == ("denied", "mode")
        assert "plan mode" in outcome.text and "present your plan" in outcome.text
    assert [name for name, _ in inner.calls] == ["read_file"]


async def test_accept_edits_runs_file_edits_but_still_asks_for_commands(tmp_path: Path) -> None:
    inner = RecordingToolbox()
    approver = ScriptedApprover(Answer(Choice.DENY))
    box = approving(inner, tmp_path, approver, mode=Mode.ACCEPT_EDITS)
    outcome = await box.call(WRITE, {"path": "a", "content": "x"})
    assert (outcome.decision, outcome.decided_by) == ("allowed", "mode")
    assert (await box.call(RUN, {"command": "ls"})).decided_by == "user"
    assert [r.spec.name for r in approver.requests] == ["execute_command"]


async def test_yolo_runs_everything_but_what_a_deny_rule_names(tmp_path: Path) -> None:
    inner = RecordingToolbox()
    box = approving(inner, tmp_path, None, mode=Mode.YOLO, flag_deny=("execute_command(rm:*)",))
    assert (await box.call(RUN, {"command": "make"})).decided_by == "mode"
    assert (await box.call(WRITE, {"path": "a", "content": ""})).decided_by == "mode"
    refused = await box.call(RUN, {"command": "make clean && rm -rf /"})
    assert (refused.decision, refused.decided_by) == ("denied", "flag")
    assert [name for name, _ in inner.calls] == ["execute_command", "write_file"]


def test_switching_cycles_the_modes_and_reaches_yolo_only_when_started_in_it(
    tmp_path: Path,
) -> None:
    box = approving(RecordingToolbox(), tmp_path, None)
    assert [box.switch() for _ in range(3)] == [Mode.ACCEPT_EDITS, Mode.PLAN, Mode.DEFAULT]
    with pytest.raises(ValueError, match="chosen when paicli starts"):
        box.switch(Mode.YOLO)
    yolo = approving(RecordingToolbox(), tmp_path, None, mode=Mode.YOLO)
    assert [yolo.switch() for _ in range(4)] == [
        Mode.DEFAULT,
        Mode.ACCEPT_EDITS,
        Mode.PLAN,
        Mode.YOLO,
    ]


@pytest.mark.parametrize(
    ("written", "mode"),
    [("plan", Mode.PLAN), ("acceptEdits", Mode.ACCEPT_EDITS), ("bypass", Mode.YOLO)],
)
def test_mode_names_include_claude_codes(written: str, mode: Mode) -> None:
    assert Mode.parse(written) is mode


def test_config_can_set_a_default_mode_but_never_yolo() -> None:
    source = Path("/h/config.toml")
    plan = UserConfig(values={"permissions": {"mode": "plan"}}, source=source)
    assert configured_mode(plan) == (Mode.PLAN, [])
    yolo = UserConfig(values={"permissions": {"mode": "yolo"}}, source=source)
    mode, problems = configured_mode(yolo)
    assert mode is Mode.DEFAULT and "yolo is never a default" in problems[0]


# -- rules and answers ----------------------------------------------------------------------


async def test_an_allow_rule_with_arguments_covers_only_matching_calls(tmp_path: Path) -> None:
    inner = RecordingToolbox()
    approver = ScriptedApprover(Answer(Choice.DENY), Answer(Choice.DENY))
    policy = Policy(allow=("execute_command(git diff:*)", "write_file(src/**)"))
    box = approving(inner, tmp_path, approver, policy=policy)
    assert (await box.call(RUN, {"command": "git diff --stat"})).decided_by == "policy"
    assert (await box.call(RUN, {"command": "git diff; rm -rf ~"})).decided_by == "user"
    assert (await box.call(WRITE, {"path": "src/a.py", "content": ""})).decided_by == "policy"
    assert (await box.call(WRITE, {"path": "setup.py", "content": ""})).decided_by == "user"


async def test_a_session_answer_about_a_command_covers_its_prefix_not_every_command(
    tmp_path: Path,
) -> None:
    inner = RecordingToolbox()
    approver = ScriptedApprover(Answer(Choice.ALLOW_SESSION), Answer(Choice.DENY))
    box = approving(inner, tmp_path, approver)
    await box.call(RUN, {"command": "git diff HEAD~1"})
    assert approver.requests[0].covers == "execute_command(git diff:*)"
    assert (await box.call(RUN, {"command": "git diff --cached"})).decided_by == "session"
    assert (await box.call(RUN, {"command": "git push --force"})).decided_by == "user"
    assert box.session_rules == ("execute_command(git diff:*)",)


async def test_a_session_prefix_never_covers_a_later_call_that_writes_and_the_question_says_why(
    tmp_path: Path,
) -> None:
    approver = ScriptedApprover(Answer(Choice.ALLOW_SESSION), Answer(Choice.DENY))
    box = approving(RecordingToolbox(), tmp_path, approver)
    await box.call(RUN, {"command": "git diff HEAD~1"})
    assert approver.requests[0].limit is None
    assert (await box.call(RUN, {"command": "git diff --output=README.md"})).decided_by == "user"
    asked = approver.requests[1]
    assert asked.limit == "`--output`: it names a file to write"
    assert "Note: no permission rule covers this call: `--output`" in asked.display()
    assert asked.covers is None  # a rule saved for it would never apply


async def test_a_compound_line_can_be_allowed_once_only(tmp_path: Path) -> None:
    inner = RecordingToolbox()
    approver = ScriptedApprover(Answer(Choice.ALLOW_ALWAYS), Answer(Choice.DENY))
    box = approving(inner, tmp_path, approver)
    ran = await box.call(RUN, {"command": "make && make install"})
    assert ran.decided_by == "user" and "allowed this once only" in (ran.approval_warning or "")
    assert approver.requests[0].covers is None
    text, choices = question(approver.requests[0])
    assert set(choices) == {"y", "n", "m"} and "[s]" not in text
    assert (await box.call(RUN, {"command": "make && make install"})).decided_by == "user"
    assert not (tmp_path / "permissions.json").exists()


async def test_always_in_this_project_is_saved_for_this_project_only(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    path = tmp_path / "permissions.json"
    approver = ScriptedApprover(Answer(Choice.ALLOW_PROJECT))
    box = approving(RecordingToolbox(), here, approver, store=PermissionStore(path, here))
    await box.call(RUN, {"command": "npm test"})
    again = approving(RecordingToolbox(), here, None, store=PermissionStore(path, here))
    assert (await again.call(RUN, {"command": "npm test -- --watch"})).decided_by == "policy"
    assert (await again.call(RUN, {"command": "npm publish"})).decision == "denied"
    elsewhere = approving(RecordingToolbox(), there, None, store=PermissionStore(path, there))
    assert (await elsewhere.call(RUN, {"command": "npm test"})).decision == "denied"
    saved = json.loads(path.read_text())
    assert saved["allow"] == []
    assert saved["projects"][str(here.resolve())]["allow"] == ["execute_command(npm test:*)"]
    assert oct(path.stat().st_mode & 0o777) == "0o600"


async def test_always_everywhere_saves_the_command_prefix(tmp_path: Path) -> None:
    path = tmp_path / "permissions.json"
    approver = ScriptedApprover(Answer(Choice.ALLOW_ALWAYS))
    box = approving(RecordingToolbox(), tmp_path, approver, store=PermissionStore(path))
    await box.call(RUN, {"argv": ["cargo", "build", "--release"]})
    assert json.loads(path.read_text())["allow"] == ["execute_command(cargo build:*)"]


# -- a project's settings -------------------------------------------------------------------


def write_settings(root: Path, permissions: object) -> None:
    (root / ".paicli").mkdir(exist_ok=True)
    (root / ".paicli" / "settings.json").write_text(json.dumps({"permissions": permissions}))


def test_a_projects_deny_rules_apply_and_its_allow_rules_wait_for_the_user(
    tmp_path: Path,
) -> None:
    write_settings(tmp_path, {"allow": ["execute_command(*)"], "deny": ["write_file(.env)"]})
    store = PermissionStore(tmp_path / "permissions.json", project=tmp_path)
    empty = UserConfig(values={}, source=None)
    asked: list[tuple[str, ...]] = []

    def refuse(settings: object) -> bool:
        asked.append(settings.policy.allow)  # type: ignore[attr-defined]
        return False

    policy, problems = permission_policy(
        empty, project_settings(tmp_path), store, trust=False, ask=refuse
    )
    assert asked == [("execute_command(*)",)]
    assert policy.deny == ("write_file(.env)",) and policy.allow == ()
    assert "1 allow rule(s) are not applied until you accept them" in problems[0]
    policy, _ = permission_policy(
        empty, project_settings(tmp_path), store, trust=False, ask=lambda s: True
    )
    assert policy.allow == ("execute_command(*)",)
    # Accepted once: not asked again while the rules stay the same...
    policy, _ = permission_policy(empty, project_settings(tmp_path), store, trust=False, ask=None)
    assert policy.allow == ("execute_command(*)",)
    # ...and asked again when the repository changes them.
    write_settings(tmp_path, {"allow": ["execute_command(*)", "mcp__evil"]})
    policy, problems = permission_policy(
        empty, project_settings(tmp_path), store, trust=False, ask=None
    )
    assert policy.allow == () and "2 allow rule(s)" in problems[0]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "settings.json: invalid JSON at line 1, column 2"),
        ('{"permissions": {}, "permissions": {"allow": ["x"]}}', "duplicate key 'permissions'"),
        ('{"permissions": {"allow": ["x("], "mode": "yolo"}}', "expected TOOL or TOOL"),
        ('{"permissions": {"mode": "yolo"}}', "permissions.mode is the user's choice only"),
        ("[]", "expected a JSON object"),
    ],
)
def test_a_broken_project_settings_file_is_one_line_naming_it(
    tmp_path: Path, content: str, problem: str
) -> None:
    (tmp_path / ".paicli").mkdir()
    (tmp_path / ".paicli" / "settings.json").write_text(content)
    settings = project_settings(tmp_path)
    assert settings.policy == Policy()
    assert any(problem in line for line in settings.problems), settings.problems
    assert all("\n" not in line for line in settings.problems)


# -- file edits shown as diffs --------------------------------------------------------------


def test_a_project_settings_fifo_or_link_out_is_refused_without_hanging(tmp_path: Path) -> None:
    (tmp_path / ".paicli").mkdir()
    os.mkfifo(tmp_path / ".paicli" / "settings.json")
    [problem] = project_settings(tmp_path).problems
    assert "a FIFO" in problem
    (tmp_path / ".paicli" / "settings.json").unlink()
    secret = tmp_path.parent / f"{tmp_path.name}-outside.json"
    secret.write_text('{"permissions": {"allow": ["execute_command"]}}')
    (tmp_path / ".paicli" / "settings.json").symlink_to(secret)
    settings = project_settings(tmp_path)
    assert settings.policy == Policy() and "out of the project" in settings.problems[0]


def real_box(
    root: Path, approver: ScriptedApprover, home: Path
) -> tuple[ApprovingToolbox, BuiltinToolbox]:
    builtin = BuiltinToolbox(root, home=PaicliHome(home))
    box = ApprovingToolbox(
        CombinedToolbox(builtin),
        policy=Policy(),
        store=PermissionStore(home / "permissions.json"),
        approver=approver,
        root=root,
        previewer=builtin.preview,
    )
    box.specs()  # as the agent does before each request
    return box, builtin


def spec(builtin: BuiltinToolbox, name: str) -> object:
    return next(s for s in builtin.specs() if s.name == name)


async def test_an_edit_is_shown_as_a_diff_and_exactly_that_is_written(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.py").write_text("one\ntwo\nthree\n")
    approver = ScriptedApprover(Answer(Choice.ALLOW_ONCE))
    box, builtin = real_box(root, approver, tmp_path / "home")
    arguments = {"path": "a.py", "old_string": "two", "new_string": "TWO\x1b[2J"}
    outcome = await box.call(spec(builtin, "edit_file"), arguments)  # type: ignore[arg-type]
    assert outcome.decision == "allowed" and not outcome.is_error
    request: ApprovalRequest = approver.requests[0]
    assert request.headline() == "Edit a.py"
    assert request.diff() == ["@@ -1,3 +1,3 @@", " one", "-two", "+TWO\\x1b[2J", " three"]
    shown = approver.shown[0]
    assert "\x1b" not in shown and "Arguments:" not in shown
    assert (root / "a.py").read_text() == "one\nTWO\x1b[2J\nthree\n"
    styles = {span.style for span in request_text(request).spans}
    assert {"green", "red", "cyan"} <= styles


async def test_an_edit_is_not_made_when_the_file_changed_after_it_was_shown(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    target = root / "a.py"
    target.write_text("x = 1\ny = 2\n")

    class ChangesTheFileMeanwhile(ScriptedApprover):
        async def __call__(self, request: ApprovalRequest) -> Answer:
            target.write_text("x = 1\ny = 2\nimport evil\n")  # still contains old_string
            return await super().__call__(request)

    approver = ChangesTheFileMeanwhile(Answer(Choice.ALLOW_ONCE))
    box, builtin = real_box(root, approver, tmp_path / "home")
    arguments = {"path": "a.py", "old_string": "y = 2", "new_string": "y = 3"}
    outcome = await box.call(spec(builtin, "edit_file"), arguments)  # type: ignore[arg-type]
    assert outcome.is_error and "changed after this edit was approved" in outcome.text
    assert target.read_text() == "x = 1\ny = 2\nimport evil\n"


async def test_a_new_file_is_shown_whole_and_an_overwrite_as_a_diff(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "old.txt").write_text("a\nb\n")
    approver = ScriptedApprover(Answer(Choice.ALLOW_ONCE), Answer(Choice.ALLOW_ONCE))
    box, builtin = real_box(root, approver, tmp_path / "home")
    write = spec(builtin, "write_file")
    await box.call(write, {"path": "new/b.txt", "content": "x\ny\n"})  # type: ignore[arg-type]
    await box.call(write, {"path": "old.txt", "content": "a\nc\n"})  # type: ignore[arg-type]
    created, replaced = approver.requests
    assert created.headline() == "Create new/b.txt (2 lines)"
    assert created.diff() == ["+x", "+y"]
    assert replaced.headline() == "Overwrite old.txt"
    assert replaced.diff() == ["@@ -1,2 +1,2 @@", " a", "-b", "+c"]
    assert (root / "new" / "b.txt").read_text() == "x\ny\n"


async def test_a_huge_preview_is_cut_on_screen_but_written_whole(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    approver = ScriptedApprover(Answer(Choice.ALLOW_ONCE))
    box, builtin = real_box(root, approver, tmp_path / "home")
    content = "".join(f"line {i}\n" for i in range(5000))
    await box.call(spec(builtin, "write_file"), {"path": "big.txt", "content": content})  # type: ignore[arg-type]
    diff = approver.requests[0].diff()
    assert len(diff) == 401 and diff[-1] == "… 4600 more lines"
    assert (root / "big.txt").read_text() == content


def test_a_store_written_by_an_older_paicli_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "permissions.json"
    path.write_text(json.dumps({"allow": ["read_file"]}))
    store = PermissionStore(path, project=tmp_path)
    assert store.allows("read_file") and store.problems == []
    assert store.add("execute_command(ls:*)", project=True) is None
    saved = json.loads(path.read_text())
    assert saved["allow"] == ["read_file"]
    assert os.path.realpath(tmp_path) in saved["projects"]
