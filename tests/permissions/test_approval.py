"""Who lets a tool call run: policy, the session, flags or the user, asked one call at a time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from paicli.home import PaicliHome
from paicli.permissions.approval import (
    Answer,
    ApprovalRequest,
    Approver,
    ApprovingToolbox,
    Choice,
    PermissionStore,
    Policy,
)
from paicli.tools.base import ToolOutcome, ToolSpec
from paicli.user_config import UserConfig, load_user_config

READ = ToolSpec("read_file", "Read a file", {"type": "object"}, "read")
WRITE = ToolSpec("write_file", "Write a file", {"type": "object"}, "write")
RUN = ToolSpec("execute_command", "Run a command", {"type": "object"}, "execute")
MCP_READ_TRUSTED = ToolSpec(
    "mcp__fs__read_text",
    "Read",
    {"type": "object"},
    "mcp",
    server="fs",
    tool="read_text",
    read_only_hint=True,
    trusted_server=True,
)
MCP_READ_UNTRUSTED = ToolSpec(
    "mcp__web__fetch",
    "Fetch",
    {"type": "object"},
    "mcp",
    server="web",
    tool="fetch",
    read_only_hint=True,
)


class RecordingToolbox:
    """A real toolbox that records what it ran; refuses the tools named in `refuse`.
    `all_arrived` is set once `arrivals` calls have reached the approving wrapper, which
    prechecks every call before it asks about it."""

    def __init__(self, *, refuse: tuple[str, ...] = (), arrivals: int = 0) -> None:
        self.calls: list[tuple[str, Mapping[str, object]]] = []
        self._refuse = refuse
        self._arrivals = arrivals
        self.arrived = 0
        self.all_arrived = asyncio.Event()

    def specs(self) -> list[ToolSpec]:
        return [READ, WRITE, RUN, MCP_READ_TRUSTED, MCP_READ_UNTRUSTED]

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        self.arrived += 1
        if self.arrived == self._arrivals:
            self.all_arrived.set()
        if spec.name in self._refuse:
            return ToolOutcome(
                "Refused: the path is outside the project.",
                is_error=True,
                decision="refused",
                decided_by="refusal",
            )
        return None

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        return None  # protected paths: tests/tools/test_protected.py, on the real toolbox

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        self.calls.append((spec.name, arguments))
        # exit_code stands for any fact only the inner toolbox knows: it must pass through.
        return ToolOutcome(f"ran {spec.name}", exit_code=len(self.calls))


class ScriptedApprover:
    """Answers from a script, recording every request and how many were open at once.
    With `until`, each prompt stays open until that event is set."""

    def __init__(self, *answers: Answer, until: asyncio.Event | None = None) -> None:
        self._until = until
        self.requests: list[ApprovalRequest] = []
        self.shown: list[str] = []
        self._answers = list(answers)
        self.open = 0
        self.most_open = 0

    async def __call__(self, request: ApprovalRequest) -> Answer:
        self.requests.append(request)
        self.shown.append(request.display())
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        try:
            if self._until is not None:
                await self._until.wait()
            assert self._answers, "asked more often than scripted"
            return self._answers.pop(0)
        finally:
            self.open -= 1


def wrapper(
    inner: RecordingToolbox,
    tmp_path: Path,
    approver: Approver | None,
    *,
    policy: Policy | None = None,
    flag_allow: tuple[str, ...] = (),
    yes: bool = False,
) -> ApprovingToolbox:
    return ApprovingToolbox(
        inner,
        policy=policy or Policy(),
        store=PermissionStore(tmp_path / "permissions.json"),
        approver=approver,
        flag_allow=flag_allow,
        yes=yes,
    )


async def test_read_tools_run_without_asking_decided_by_policy(tmp_path: Path) -> None:
    inner, approver = RecordingToolbox(), ScriptedApprover()
    outcome = await wrapper(inner, tmp_path, approver).call(READ, {"path": "a"})
    assert (outcome.text, outcome.decision, outcome.decided_by) == (
        "ran read_file",
        "allowed",
        "policy",
    )
    assert outcome.exit_code == 1
    assert approver.requests == []


async def test_a_write_asks_and_allow_once_asks_again_next_time(tmp_path: Path) -> None:
    inner = RecordingToolbox()
    approver = ScriptedApprover(Answer(Choice.ALLOW_ONCE), Answer(Choice.ALLOW_ONCE))
    tools = wrapper(inner, tmp_path, approver)
    first = await tools.call(WRITE, {"path": "a"})
    second = await tools.call(WRITE, {"path": "b"})
    assert (first.decision, first.decided_by) == ("allowed", "user")
    assert (second.decision, second.decided_by) == ("allowed", "user")
    assert len(approver.requests) == 2
    assert [c[1] for c in inner.calls] == [{"path": "a"}, {"path": "b"}]


async def test_a_deny_pattern_wins_even_over_read_tools(tmp_path: Path) -> None:
    inner, approver = RecordingToolbox(), ScriptedApprover()
    policy = Policy(allow=("read_*",), deny=("read_*",))
    outcome = await wrapper(inner, tmp_path, approver, policy=policy).call(READ, {"path": "a"})
    assert (outcome.decision, outcome.decided_by, outcome.is_error) == ("denied", "policy", True)
    assert "rules deny this call of read_file" in outcome.text
    assert inner.calls == [] and approver.requests == []


async def test_an_allow_pattern_from_config_runs_without_asking(tmp_path: Path) -> None:
    inner, approver = RecordingToolbox(), ScriptedApprover()
    policy = Policy(allow=("execute_*",))
    outcome = await wrapper(inner, tmp_path, approver, policy=policy).call(RUN, {"command": "ls"})
    assert (outcome.decision, outcome.decided_by) == ("allowed", "policy")
    assert approver.requests == []


async def test_allow_for_the_session_runs_later_calls_decided_by_session(tmp_path: Path) -> None:
    inner = RecordingToolbox()
    approver = ScriptedApprover(Answer(Choice.ALLOW_SESSION), Answer(Choice.DENY))
    tools = wrapper(inner, tmp_path, approver)
    first = await tools.call(WRITE, {"path": "a"})
    second = await tools.call(WRITE, {"path": "b"})
    other = await tools.call(RUN, {"command": "ls"})
    assert [first.decided_by, second.decided_by, other.decided_by] == ["user", "session", "user"]
    assert other.decision == "denied"
    assert len(approver.requests) == 2
    assert not (tmp_path / "permissions.json").exists()


async def test_allow_always_is_saved_and_honoured_by_a_new_wrapper(tmp_path: Path) -> None:
    approver = ScriptedApprover(Answer(Choice.ALLOW_ALWAYS))
    first = await wrapper(RecordingToolbox(), tmp_path, approver).call(WRITE, {"path": "a"})
    assert first.decided_by == "user"
    saved = json.loads((tmp_path / "permissions.json").read_text())
    assert saved["allow"] == ["write_file"]

    later = ScriptedApprover()
    outcome = await wrapper(RecordingToolbox(), tmp_path, later).call(WRITE, {"path": "b"})
    assert (outcome.decision, outcome.decided_by) == ("allowed", "policy")
    assert later.requests == []


async def test_the_users_no_is_told_to_the_model_and_nothing_runs(tmp_path: Path) -> None:
    inner = RecordingToolbox()
    outcome = await wrapper(inner, tmp_path, ScriptedApprover(Answer(Choice.DENY))).call(
        RUN, {"command": "rm -rf build"}
    )
    assert outcome == ToolOutcome(
        "The user denied this tool call.",
        is_error=True,
        decision="denied",
        decided_by="user",
        waited_ms=outcome.waited_ms,
    )
    assert inner.calls == []


async def test_a_denial_with_a_message_passes_the_message_to_the_model(tmp_path: Path) -> None:
    answer = Answer(Choice.DENY_WITH_MESSAGE, "use the build/ folder instead")
    outcome = await wrapper(RecordingToolbox(), tmp_path, ScriptedApprover(answer)).call(
        WRITE, {"path": "a"}
    )
    assert (outcome.decision, outcome.decided_by) == ("denied", "user")
    assert outcome.text.endswith("said: use the build/ folder instead")


async def test_non_interactive_mode_denies_with_a_hint_for_the_flags(tmp_path: Path) -> None:
    inner = RecordingToolbox()
    outcome = await wrapper(inner, tmp_path, None).call(RUN, {"command": "ls"})
    assert (outcome.decision, outcome.decided_by, outcome.is_error) == ("denied", "flag", True)
    assert "paicli -p does not ask" in outcome.text
    assert "--allow execute_command" in outcome.text and "--yes" in outcome.text
    assert inner.calls == []


async def test_non_interactive_allow_flag_patterns_run_decided_by_flag(tmp_path: Path) -> None:
    tools = wrapper(RecordingToolbox(), tmp_path, None, flag_allow=("write_*",))
    allowed = await tools.call(WRITE, {"path": "a"})
    denied = await tools.call(RUN, {"command": "ls"})
    assert (allowed.decision, allowed.decided_by) == ("allowed", "flag")
    assert (denied.decision, denied.decided_by) == ("denied", "flag")


async def test_yes_runs_everything_except_what_policy_denies(tmp_path: Path) -> None:
    tools = wrapper(
        RecordingToolbox(), tmp_path, None, yes=True, policy=Policy(deny=("execute_command",))
    )
    allowed = await tools.call(WRITE, {"path": "a"})
    denied = await tools.call(RUN, {"command": "ls"})
    assert (allowed.decision, allowed.decided_by) == ("allowed", "flag")
    assert (denied.decision, denied.decided_by) == ("denied", "policy")


async def test_a_trusted_servers_read_only_hint_runs_without_asking(tmp_path: Path) -> None:
    approver = ScriptedApprover()
    outcome = await wrapper(RecordingToolbox(), tmp_path, approver).call(MCP_READ_TRUSTED, {})
    assert (outcome.decision, outcome.decided_by) == ("allowed", "policy")
    assert approver.requests == []


async def test_an_untrusted_servers_read_only_hint_still_asks(tmp_path: Path) -> None:
    approver = ScriptedApprover(Answer(Choice.ALLOW_ONCE))
    outcome = await wrapper(RecordingToolbox(), tmp_path, approver).call(
        MCP_READ_UNTRUSTED, {"url": "https://example.com"}
    )
    assert outcome.decided_by == "user"
    assert len(approver.requests) == 1
    assert "Server: web (tool fetch)" in approver.shown[0]


async def test_a_precheck_refusal_never_reaches_the_approver(tmp_path: Path) -> None:
    inner, approver = RecordingToolbox(refuse=("write_file",)), ScriptedApprover()
    outcome = await wrapper(inner, tmp_path, approver).call(WRITE, {"path": "/etc/passwd"})
    assert (outcome.decision, outcome.decided_by) == ("refused", "refusal")
    assert approver.requests == [] and inner.calls == []


async def test_parallel_calls_ask_one_at_a_time_and_a_session_allow_covers_the_rest(
    tmp_path: Path,
) -> None:
    inner = RecordingToolbox(arrivals=3)
    # The first prompt stays open until every call has reached the wrapper.
    approver = ScriptedApprover(Answer(Choice.ALLOW_SESSION), until=inner.all_arrived)
    tools = wrapper(inner, tmp_path, approver)
    async with asyncio.timeout(5):
        outcomes = await asyncio.gather(
            *(tools.call(WRITE, {"path": name}) for name in ("a", "b", "c"))
        )
    assert len(approver.requests) == 1
    assert approver.most_open == 1
    assert sorted(o.decided_by or "" for o in outcomes) == ["session", "session", "user"]
    assert sorted(str(c[1]["path"]) for c in inner.calls) == ["a", "b", "c"]


class GatheringToolbox(RecordingToolbox):
    """Each call waits until `expected` calls are running at once."""

    def __init__(self, expected: int) -> None:
        super().__init__(arrivals=expected)
        self._expected = expected
        self._all_running = asyncio.Event()

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        self.calls.append((spec.name, arguments))
        if len(self.calls) == self._expected:
            self._all_running.set()
        await self._all_running.wait()
        return ToolOutcome(f"ran {spec.name}")


async def test_questions_are_serialised_but_approved_calls_run_in_parallel(
    tmp_path: Path,
) -> None:
    # Three questions, each prompt held open until all three calls have reached the wrapper:
    # they must still come one at a time. Each approved call then waits inside the toolbox
    # until all three are running, so the gather only ends if the calls overlap (an
    # approved call does not hold up the next question).
    inner = GatheringToolbox(expected=3)
    approver = ScriptedApprover(*[Answer(Choice.ALLOW_ONCE)] * 3, until=inner.all_arrived)
    tools = wrapper(inner, tmp_path, approver)
    async with asyncio.timeout(5):
        outcomes = await asyncio.gather(
            *(tools.call(WRITE, {"path": name}) for name in ("a", "b", "c"))
        )
    assert len(approver.requests) == 3
    assert approver.most_open == 1
    assert [(o.decision, o.decided_by) for o in outcomes] == [("allowed", "user")] * 3
    assert sorted(str(c[1]["path"]) for c in inner.calls) == ["a", "b", "c"]


async def test_prompts_for_different_tools_never_overlap(tmp_path: Path) -> None:
    inner = RecordingToolbox(arrivals=3)
    approver = ScriptedApprover(*[Answer(Choice.ALLOW_ONCE)] * 3, until=inner.all_arrived)
    tools = wrapper(inner, tmp_path, approver)
    async with asyncio.timeout(5):
        await asyncio.gather(
            tools.call(WRITE, {"path": "a"}),
            tools.call(RUN, {"command": "ls"}),
            tools.call(MCP_READ_UNTRUSTED, {"url": "u"}),
        )
    assert len(approver.requests) == 3
    assert approver.most_open == 1


async def test_a_failing_approver_denies_the_call(tmp_path: Path) -> None:
    async def broken(request: ApprovalRequest) -> Answer:
        raise EOFError("stdin closed")

    inner = RecordingToolbox()
    outcome = await wrapper(inner, tmp_path, broken).call(WRITE, {"path": "a"})
    assert (outcome.decision, outcome.decided_by) == ("denied", "user")
    assert "EOFError: stdin closed" in outcome.text
    assert inner.calls == []


async def test_a_cancelled_prompt_cancels_the_call_and_frees_the_prompt(tmp_path: Path) -> None:
    asked = asyncio.Event()
    answers: list[Answer] = []

    async def first_waits_forever(request: ApprovalRequest) -> Answer:
        if answers:
            return answers.pop()
        asked.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    inner = RecordingToolbox()
    tools = wrapper(inner, tmp_path, first_waits_forever)
    async with asyncio.timeout(5):
        task = asyncio.create_task(tools.call(WRITE, {"path": "a"}))
        await asked.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert inner.calls == []

    answers.append(Answer(Choice.ALLOW_ONCE))
    async with asyncio.timeout(5):
        outcome = await tools.call(WRITE, {"path": "b"})
    assert outcome.decided_by == "user"
    assert inner.calls == [("write_file", {"path": "b"})]


async def test_an_always_allow_that_cannot_be_saved_still_runs_and_says_so(
    tmp_path: Path,
) -> None:
    (tmp_path / "permissions.json").mkdir()  # unreadable as a file
    approver = ScriptedApprover(Answer(Choice.ALLOW_ALWAYS))
    tools = wrapper(RecordingToolbox(), tmp_path, approver)
    first = await tools.call(WRITE, {"path": "a"})
    second = await tools.call(WRITE, {"path": "b"})
    assert (first.decision, first.decided_by) == ("allowed", "user")
    assert "not saved" in str(first.approval_warning)
    assert second.decided_by == "policy"
    assert len(approver.requests) == 1


async def test_the_call_runs_exactly_the_arguments_that_were_shown(tmp_path: Path) -> None:
    arguments: dict[str, object] = {"path": "notes.txt", "content": {"lines": ["one", "two"]}}

    async def meddles(request: ApprovalRequest) -> Answer:
        shown.append(request.display())
        # Neither the approver's copy nor the caller's dict changes what runs.
        request.arguments["content"]["lines"].append("three")  # type: ignore[index]
        arguments["path"] = "/etc/passwd"
        return Answer(Choice.ALLOW_ONCE)

    shown: list[str] = []
    inner = RecordingToolbox()
    await wrapper(inner, tmp_path, meddles).call(WRITE, arguments)
    shown_json = shown[0].split("Arguments:\n", 1)[1]
    ran = inner.calls[0][1]
    assert json.dumps(ran, indent=2, ensure_ascii=False) == shown_json
    assert ran == {"path": "notes.txt", "content": {"lines": ["one", "two"]}}


async def test_hostile_arguments_are_shown_escaped(tmp_path: Path) -> None:
    hostile: dict[str, object] = {
        "command": "ls\x1b[2J\rAllow? y",
        "note\u202e": "\u202etxt.exe",
        "hidden": "a\u200bb\u2066c\u2069",
        "csi": "\x9b31m",
        "fake": "\n\nAllow this call? [y/N] y\n",
    }
    approver = ScriptedApprover(Answer(Choice.ALLOW_ONCE))
    inner = RecordingToolbox()
    await wrapper(inner, tmp_path, approver).call(RUN, hostile)
    shown = approver.shown[0]
    assert all(char == "\n" or char.isprintable() for char in shown)
    for visible in ("\\u001b[2J", "\\r", "\\u202e", "\\u200b", "\\u2066", "\\u009b", "\\n"):
        assert visible in shown
    assert not any(line.lstrip().startswith("Allow") for line in shown.splitlines())
    arguments_text = shown.split("Arguments:\n", 1)[1]
    assert json.loads(arguments_text) == hostile == inner.calls[0][1]


def test_display_names_the_tool_and_escapes_the_server_name() -> None:
    spec = ToolSpec("mcp__x__t", "", {}, "mcp", server="evil\x1b]0;x\x07", tool="t\u202e")
    shown = ApprovalRequest(spec, {}).display()
    assert shown.splitlines()[:2] == [
        "Tool: mcp__x__t",
        "Server: evil\\x1b]0;x\\x07 (tool t\\u202e)",
    ]


def test_denied_tools_stay_listed_so_the_model_learns_why(tmp_path: Path) -> None:
    tools = wrapper(RecordingToolbox(), tmp_path, None, policy=Policy(deny=("*",)))
    assert [s.name for s in tools.specs()] == [s.name for s in RecordingToolbox().specs()]


def test_policy_reads_the_permissions_section(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[permissions]\nallow = ["mcp__fs__read_*", "execute_command"]\ndeny = ["mcp__web__*"]\n'
    )
    policy, problems = Policy.from_config(load_user_config(PaicliHome(tmp_path)))
    assert problems == []
    assert policy == Policy(allow=("mcp__fs__read_*", "execute_command"), deny=("mcp__web__*",))
    assert policy.allows("mcp__fs__read_text") and not policy.allows("mcp__fs__write")
    assert policy.denies("mcp__web__fetch")


def test_policy_problems_name_the_file_and_key_and_keep_the_rest(tmp_path: Path) -> None:
    source = tmp_path / "config.toml"
    config = UserConfig(
        values={"permissions": {"allow": ["ok", 3], "deny": "x", "ask": []}}, source=source
    )
    policy, problems = Policy.from_config(config)
    assert policy == Policy(allow=("ok",))
    assert problems == [
        f"{source}: permissions.allow[1] must be a string; ignored",
        f"{source}: permissions.deny must be a list of rules; ignored",
        f"{source}: permissions.ask is not a known setting; ignored",
    ]


def test_a_permissions_value_that_is_not_a_table_is_reported() -> None:
    config = UserConfig(values={"permissions": ["x"]}, source=Path("/h/config.toml"))
    assert Policy.from_config(config) == (
        Policy(),
        ["/h/config.toml: permissions must be a table; ignored"],
    )


def test_a_broken_permission_store_reads_as_empty_and_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "permissions.json"
    path.write_text('{"allow": ["write_file",')
    store = PermissionStore(path)
    assert store.patterns == ()
    assert len(store.problems) == 1 and str(path) in store.problems[0]
    problem = store.add("execute_command")
    assert problem is not None and "not saved" in problem
    assert store.allows("execute_command")  # still applies to this process
    assert path.read_text() == '{"allow": ["write_file",'


def test_saving_keeps_answers_another_process_saved_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "permissions.json"
    first, second = PermissionStore(path), PermissionStore(path)
    assert first.add("write_file") is None
    assert second.add("execute_command") is None
    assert PermissionStore(path).patterns == ("write_file", "execute_command")
    assert [p.name for p in tmp_path.iterdir()] == ["permissions.json"]  # no temporary left


@pytest.mark.parametrize("pattern", ["mcp__My.Server__*", "MCP__my_server__DROP_*", "*drop*"])
async def test_deny_patterns_match_any_case_and_the_unsanitised_server_name(
    tmp_path: Path, pattern: str
) -> None:
    drop = ToolSpec(
        "mcp__my_server__drop_table",
        "Drop",
        {"type": "object"},
        "mcp",
        server="my.server",
        tool="drop_table",
    )
    inner, approver = RecordingToolbox(), ScriptedApprover()
    policy = Policy(deny=(pattern,))
    outcome = await wrapper(inner, tmp_path, approver, policy=policy).call(drop, {})
    assert (outcome.decision, outcome.decided_by) == ("denied", "policy")
    assert inner.calls == [] and approver.requests == []
