"""Running the hooks of one event and reading their answers (Claude Code's contract).

Every matching handler of an event runs at once. Each gets the event as JSON on stdin
(`session_id`, `transcript_path`, `cwd`, `permission_mode`, `hook_event_name` and the
event's own fields) and the environment paicli's commands get (no model keys), plus
`CLAUDE_PROJECT_DIR` (which the shell expands in a command line; put in for
`${CLAUDE_PROJECT_DIR}` in an `args` hook's words, which no shell reads). Its answer:
exit 0 (stdout that starts with `{` is JSON, anything else plain text), exit 2 (a block; the
reason is stderr unless the JSON gives one), any other code, a timeout, a start that failed
or JSON that does not parse: a failure, said in one line (`report`), that decides nothing.
Every run is a record in the audit log (`"event": "hook"`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from paicli.audit.log import AuditLog
from paicli.config_files import ConfigFileError, parse_json
from paicli.escape import one_line
from paicli.hooks.process import HookRun, run_hook
from paicli.hooks.settings import HookHandler, HookSet
from paicli.mcp import Sandbox
from paicli.plugins.sandboxed import reaching
from paicli.tools.builtin.command import command_environment
from paicli.tools.builtin.sandboxing import CommandSandbox

__all__ = ["HookAnswer", "HookEngine"]

log = logging.getLogger("paicli.hooks")

# Claude Code caps a hook's strings at 10,000 characters; so do we (what reaches the model).
MAX_TEXT = 10_000
# paicli's permission modes in Claude Code's words (`permission_mode` on stdin).
MODE_NAMES = {
    "default": "default",
    "accept-edits": "acceptEdits",
    "plan": "plan",
    "yolo": "bypassPermissions",
}


@dataclass(frozen=True)
class HookAnswer:
    """One handler's answer: `blocked` (exit 2), its JSON object (None: none, or a failure),
    its plain text (exit 0 without JSON), and `reason` (the block's, from JSON or stderr)."""

    handler: HookHandler
    blocked: bool = False
    output: Mapping[str, object] | None = None
    text: str = ""
    reason: str = ""

    def specific(self, event: str) -> Mapping[str, object]:
        """`hookSpecificOutput`, when it is this event's."""
        found = (self.output or {}).get("hookSpecificOutput")
        if isinstance(found, dict) and found.get("hookEventName") == event:
            return found
        return {}

    def field(self, name: str) -> str:
        value = (self.output or {}).get(name)
        return value[:MAX_TEXT] if isinstance(value, str) else ""


class HookEngine:
    """The run's hooks and what running one needs."""

    def __init__(
        self,
        hooks: HookSet,
        *,
        root: Path,
        project: Path,
        session_id: str,
        audit: AuditLog | None,
        sandbox: CommandSandbox | None,
        environ: Mapping[str, str],
        report: Callable[[str], None] | None = None,
    ) -> None:
        self.hooks = hooks
        self._root = root
        self._project = project
        self.session_id = session_id
        self._audit = audit
        self._sandbox = sandbox
        self._environ = environ
        self._mode: Callable[[], str] = lambda: "default"
        self._report = report or log.warning

    def __bool__(self) -> bool:
        return bool(self.hooks.handlers)

    def follow_mode(self, mode: Callable[[], str]) -> None:
        """Where the permission mode is read (`permission_mode` on stdin): set once the
        approving wrapper exists."""
        self._mode = mode

    async def fire(
        self,
        event: str,
        fields: Mapping[str, object],
        names: Sequence[str] = (),
        arguments: Mapping[str, object] | None = None,
    ) -> list[HookAnswer]:
        """Run `event`'s handlers that match `names` (and, for a tool call, whose `if`
        covers its `arguments`), at once; their answers, failures left out (each said in
        one line)."""
        call = (arguments, self._root) if arguments is not None else None
        handlers = self.hooks.for_event(event, names, call)
        if not handlers:
            return []
        payload = {
            "session_id": self.session_id,
            "transcript_path": "",
            "cwd": str(self._root),
            "permission_mode": MODE_NAMES.get(self._mode(), "default"),
            "hook_event_name": event,
            **fields,
        }
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8", "replace")
        sandbox = await self._contained()
        runs = await asyncio.gather(*(self._one(h, data, sandbox) for h in handlers))
        answers = []
        for handler, run in zip(handlers, runs, strict=True):
            answer = self._read(handler, run)
            self._record(handler, run, answer, fields)
            if answer is not None:
                answers.append(answer)
                if message := answer.field("systemMessage"):
                    self._report(f"hook {self._name(handler)}: {one_line(message, 300)}")
        return answers

    async def _contained(self) -> Sandbox | str | None:
        """The command sandbox's profile when it holds here; None when there is none (off,
        or none works here and commands are merely asked about); a reason when the user
        requires one that cannot be had."""
        if self._sandbox is None or self._sandbox.off:
            return None
        try:
            mechanism = await asyncio.to_thread(self._sandbox.mechanism)
        except Exception as exc:  # a probe that broke: no hook runs uncontained on a guess
            return f"the sandbox could not be checked ({type(exc).__name__}: {exc})"
        if mechanism is not None:
            return self._sandbox.profile
        if self._sandbox.settings.mode == "required":
            return "the sandbox is required and none works here"
        return None

    async def _one(
        self, handler: HookHandler, data: bytes, sandbox: Sandbox | str | None
    ) -> HookRun:
        if isinstance(sandbox, str):
            return HookRun(None, "", "", failed=f"not run: {sandbox}")
        place = str(self._project)
        env = command_environment(self._environ)
        env["CLAUDE_PROJECT_DIR"] = env["PAICLI_PROJECT_DIR"] = place
        if handler.plugin is not None:  # its scripts are in its folder, under ~/.paicli
            env["CLAUDE_PLUGIN_ROOT"] = env["PAICLI_PLUGIN_ROOT"] = str(handler.plugin)
            sandbox = None if sandbox is None else reaching(sandbox, handler.plugin)
        if handler.args is not None:
            words = (handler.command, *handler.args)
            argv = [word.replace("${CLAUDE_PROJECT_DIR}", place) for word in words]
        else:
            # The shell expands `${CLAUDE_PROJECT_DIR}` from the environment itself: put in as
            # text, a folder named `x$(cmd)` (as a clone of a hostile URL is) would run `cmd`.
            shell = shutil.which("bash", path=env.get("PATH")) or "/bin/sh"
            argv = [shell, "-c", handler.command]
        try:
            return await run_hook(
                argv, stdin=data, cwd=self._root, env=env, timeout=handler.timeout, sandbox=sandbox
            )
        except Exception as exc:  # one broken hook costs its answer, not the turn or the start
            return HookRun(None, "", "", failed=f"{type(exc).__name__}: {exc}")

    def _read(self, handler: HookHandler, run: HookRun) -> HookAnswer | None:
        """The handler's answer, or None (and one line said) when it failed."""
        name = self._name(handler)
        if run.failed is not None:
            self._report(f"hook {name} failed: {run.failed}")
            return None
        if run.timed_out:
            self._report(f"hook {name} timed out after {handler.timeout:g} s and was stopped")
            return None
        output, bad = _json(run)
        if bad is not None:
            self._report(f"hook {name} {bad}")
        if run.exit_code == 2:
            reason = output.get("reason") if output else None
            text = reason if isinstance(reason, str) and reason else run.stderr.strip()
            return HookAnswer(handler, True, output, reason=text[:MAX_TEXT] or "blocked by a hook")
        if run.exit_code != 0 and output is None:
            first = run.stderr.strip().splitlines()[0] if run.stderr.strip() else "no message"
            self._report(f"hook {name} failed (exit {run.exit_code}): {one_line(first, 200)}")
            return None
        if output is None and bad is not None:
            return None
        plain = "" if output is not None else run.stdout.strip()[:MAX_TEXT]
        reason = output.get("reason") if output else None
        return HookAnswer(
            handler, False, output, plain, reason[:MAX_TEXT] if isinstance(reason, str) else ""
        )

    @staticmethod
    def _name(handler: HookHandler) -> str:
        shown = " ".join([handler.command, *(handler.args or ())])
        return f"{handler.event} {one_line(repr(shown), 80)}"

    def _record(
        self,
        handler: HookHandler,
        run: HookRun,
        answer: HookAnswer | None,
        fields: Mapping[str, object],
    ) -> None:
        if self._audit is None:
            return
        if answer is None:
            outcome = "timeout" if run.timed_out else "failed"
        else:
            outcome = "blocked" if answer.blocked else "ok"
        self._audit.write(
            {
                "time": self._audit.clock().isoformat(timespec="milliseconds"),
                "session": self.session_id,
                "event": "hook",
                "hook_event": handler.event,
                "tool": fields.get("tool_name"),
                "command": handler.command,
                "args": list(handler.args) if handler.args is not None else None,
                "scope": handler.scope,
                "source": str(handler.source),
                "exit_code": run.exit_code,
                "outcome": outcome,
                "duration_ms": run.duration_ms,
                "error": run.failed,
            }
        )


def _json(run: HookRun) -> tuple[dict[str, object] | None, str | None]:
    """The JSON object on stdout, and what is wrong with it (None: nothing, or no JSON)."""
    text = run.stdout.strip()
    if not text.startswith("{"):
        return None, None
    if run.cut:
        return None, "wrote more than its output may hold; its answer is ignored"
    try:
        value = parse_json(text, "its answer")  # (bounded nesting, no key twice)
    except ConfigFileError:
        return None, "answered with JSON that does not parse; its answer is ignored"
    if not isinstance(value, dict):
        return None, "answered with JSON that is not an object; its answer is ignored"
    return value, None
