"""execute_command: one shell command or argv list, run in the project root, bounded in time
and output, leaving no process behind.

The command runs in a new process group under `_reaper.py` (on Linux), which reaps every
descendant and ends the group's leftovers when the command exits. On timeout or cancellation
the group gets SIGTERM, then SIGKILL; our own child is always waited for. stdin is /dev/null;
stdout and stderr are merged and kept head and tail when there is too much. The command gets
the user's environment minus paicli's own model keys (`command_environment`): an approved `env`
must not hand them to the model. Given a `Sandbox` (`sandboxing.CommandSandbox` decides), the
whole of it, reaper included, runs inside the OS sandbox (`paicli.mcp.sandbox_command`), and
what the sandbox refused is appended to the output.
"""

from __future__ import annotations

import asyncio
import codecs
import math
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from paicli.llm.presets import PRESETS
from paicli.mcp import Sandbox, SandboxUnavailable
from paicli.tools.base import ToolOutcome
from paicli.tools.builtin.refusal import refusal_reason

if TYPE_CHECKING:
    from paicli.mcp import SandboxedCommand

__all__ = [
    "MAX_COMMAND_TIMEOUT",
    "CommandResult",
    "OutputCapture",
    "check_command",
    "command_environment",
    "execute_command",
    "outcome_for",
    "run_command",
    "start_contained",
    "stop_group",
]

# Ten minutes: long enough for a full build or test run, short enough that a hung command
# does not hold the turn for long.
MAX_COMMAND_TIMEOUT = 600
# Linux gives no program an argument longer than this (MAX_ARG_STRLEN), nor a command line
# to `sh -c`; a longer one is refused before any rule spends time reading it.
MAX_WORD_BYTES = 128 * 1024
MAX_ARGV_BYTES = 1024 * 1024

_REAPER = Path(__file__).with_name("_reaper.py")
# The reaper itself escalates to SIGKILL after its own grace (1 s) and gives up a second later;
# this leaves room for that before we SIGKILL the group ourselves.
TERM_GRACE = 3.0
# After SIGKILL the kernel ends the group at once; this only bounds waiting for the reap and
# for the pipe to close (a descendant that escaped the group may hold it open).
KILL_GRACE = 2.0
READ_CHUNK = 64 * 1024


# Variables holding a model key paicli reads: its own, and every known provider's.
MODEL_KEY_VARIABLES = frozenset(
    {"PAICLI_API_KEY", *(name for preset in PRESETS.values() for name in preset.key_env)}
)


def command_environment(
    environ: Mapping[str, str], secret_values: Iterable[str] = ()
) -> dict[str, str]:
    """The environment commands run with: `environ` without the model key variables, and
    without any variable holding one of `secret_values` (the key in use, whatever its name)."""
    drop = {value for value in secret_values if value}
    return {
        name: value
        for name, value in environ.items()
        if name not in MODEL_KEY_VARIABLES and value not in drop
    }


class OutputCapture:
    """Merged output, decoded as it arrives, keeping at most `limit` characters: the first
    half and the last half, with the number of characters dropped in between."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head: list[str] = []
        self._head_size = 0
        self._tail = ""
        self.total = 0

    def feed(self, data: bytes, *, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        self.total += len(text)
        if self._head_size < self._head_limit:
            room = self._head_limit - self._head_size
            self._head.append(text[:room])
            self._head_size += len(text[:room])
            text = text[room:]
        if text:
            # Trim only when the tail has doubled, so a stream of small chunks stays linear.
            self._tail += text
            if len(self._tail) > 2 * self._tail_limit:
                self._tail = self._tail[-self._tail_limit :]

    @property
    def omitted(self) -> int:
        return max(0, self.total - self._head_size - self._tail_limit)

    def text(self) -> str:
        head = "".join(self._head)
        tail = self._tail[-self._tail_limit :] if self._tail_limit else ""
        if not self.omitted:
            return head + tail
        return f"{head}\n[output truncated: {self.omitted} characters omitted]\n{tail}"


@dataclass(frozen=True)
class CommandResult:
    output: str
    exit_code: int | None
    timed_out: bool
    truncated: bool


def check_command(arguments: Mapping[str, object]) -> ToolOutcome | None:
    """Refuse, before anyone is asked: both or neither of `command` and `argv`, a NUL byte, a
    timeout that is not a number of seconds in range, and the short list of destructive
    commands."""
    command, argv = arguments.get("command"), arguments.get("argv")
    if (command is None) == (argv is None):
        return ToolOutcome.refused(
            "give exactly one of `command` (a shell command line) or `argv` (a list)"
        )
    words = [command] if isinstance(command, str) else argv if isinstance(argv, list) else []
    if any("\0" in str(word) for word in words):
        return ToolOutcome.refused("the command contains a NUL byte, which no program can be given")
    sizes = [len(str(word).encode("utf-8", "surrogatepass")) for word in words]
    if sizes and (max(sizes) > MAX_WORD_BYTES or sum(sizes) > MAX_ARGV_BYTES):
        return ToolOutcome.refused(
            f"the command is too long ({sum(sizes)} bytes; at most {MAX_WORD_BYTES} in one "
            f"word or command line, {MAX_ARGV_BYTES} in all)"
        )
    timeout = arguments.get("timeout")
    # JSON allows NaN here (Python's json module accepts it) and NaN passes the schema's
    # bounds, since every comparison with it is false; it would disable the timeout.
    if isinstance(timeout, float) and not (
        math.isfinite(timeout) and 0 < timeout <= MAX_COMMAND_TIMEOUT
    ):
        return ToolOutcome.refused(
            f"timeout must be a number of seconds above 0 and at most "
            f"{MAX_COMMAND_TIMEOUT}, not {timeout!r}"
        )
    reason = refusal_reason(
        command if isinstance(command, str) else None,
        [str(a) for a in argv] if isinstance(argv, list) else None,
    )
    return ToolOutcome.refused(reason, "refusal") if reason else None


async def execute_command(
    arguments: Mapping[str, object],
    *,
    cwd: Path,
    default_timeout: float,
    max_output_chars: int,
    env: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> ToolOutcome:
    """Run the checked `command` (through /bin/sh) or `argv` in `cwd`, in `sandbox` if given
    (it must be enforceable here: the caller checked)."""
    command, argv = arguments.get("command"), arguments.get("argv")
    if isinstance(command, str):
        full, shown = ["/bin/sh", "-c", command], command
    else:
        assert isinstance(argv, list)
        full = [str(a) for a in argv]
        shown = shlex.join(full)
    timeout_arg = arguments.get("timeout")
    timeout = (
        float(timeout_arg)
        if isinstance(timeout_arg, int | float) and not isinstance(timeout_arg, bool)
        else default_timeout
    )
    try:
        result = await run_command(
            full,
            cwd=cwd,
            timeout=timeout,
            max_output_chars=max_output_chars,
            env=env,
            sandbox=sandbox,
        )
    except SandboxUnavailable as exc:
        return ToolOutcome(text=f"the command was not run: {exc}", is_error=True)
    except OSError as exc:
        return ToolOutcome(
            text=f"could not start {full[0]!r}: {exc.strerror or exc}", is_error=True
        )
    return outcome_for(shown, result, timeout)


async def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    max_output_chars: int,
    env: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
) -> CommandResult:
    """Run `argv` in `cwd` with `env` (default: `command_environment(os.environ)`) until it
    exits or `timeout` passes, in `sandbox` if given; raises OSError when it cannot start,
    SandboxUnavailable when the sandbox cannot be set up. On cancellation the process group
    is ended before CancelledError propagates."""
    environment = dict(env) if env is not None else command_environment(os.environ)
    process, contained = await start_contained(
        argv, cwd=cwd, env=environment, sandbox=sandbox, stdin=subprocess.DEVNULL
    )
    try:
        result = await _collect(process, timeout, max_output_chars)
    finally:
        if contained is not None:
            await contained.aclose()
    if contained is None or result.exit_code is None:
        return result
    refused = "".join(f"\n[sandbox] {line}" for line in contained.refused)
    return replace(
        result, output=result.output + refused, exit_code=contained.exit_status(result.exit_code)
    )


async def start_contained(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    sandbox: Sandbox | None,
    stdin: int,
    stderr: int = subprocess.STDOUT,
) -> tuple[asyncio.subprocess.Process, SandboxedCommand | None]:
    """`argv` started as a command is (also a hook: `paicli.hooks`): under the reaper on
    Linux, in a session of its own, inside `sandbox` when given; stdout piped, `stdin` and
    `stderr` as asked. The caller closes the sandboxed command (`aclose`) once the process
    ended; if it cannot start (OSError, SandboxUnavailable), nothing is left to close."""
    full = list(argv)
    if sys.platform == "linux":
        full = [sys.executable, "-I", "-S", str(_REAPER), "--", *full]
    environment = dict(env)
    contained = None
    if sandbox is not None:
        from paicli.mcp import sandbox_command  # noqa: PLC0415 - loaded with the first command

        contained = await sandbox_command(full, sandbox, cwd=cwd, env=environment)
        full, environment = contained.argv, contained.env
    try:
        process = await asyncio.create_subprocess_exec(
            *full,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=cwd,
            env=environment,
            start_new_session=True,
            preexec_fn=contained.preexec if contained is not None else None,
            pass_fds=contained.pass_fds if contained is not None else (),
        )
    except BaseException:
        if contained is not None:
            await contained.aclose()
        raise
    return process, contained


async def _collect(
    process: asyncio.subprocess.Process, timeout: float, max_output_chars: int
) -> CommandResult:
    """The output and end of `process`, stopped at `timeout` (or when cancelled)."""
    capture = OutputCapture(max_output_chars)
    timed_out = False
    try:
        async with asyncio.timeout(timeout):
            assert process.stdout is not None
            while chunk := await process.stdout.read(READ_CHUNK):
                capture.feed(chunk)
            await process.wait()
    except TimeoutError:
        timed_out = True
        await _stop(process, capture)
    except BaseException:
        await _stop(process, capture)
        raise
    capture.feed(b"", final=True)
    return CommandResult(
        output=capture.text(),
        exit_code=process.returncode,
        timed_out=timed_out,
        truncated=capture.omitted > 0,
    )


async def stop_group(process: asyncio.subprocess.Process) -> bool:
    """SIGTERM the process group of `process` (started in a session of its own), wait; SIGKILL
    it, wait. Each step is bounded and runs even if this task is cancelled meanwhile; whether
    it was is returned, for the caller to raise once it is done too."""
    cancelled = False
    for sig, grace in ((signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, KILL_GRACE)):
        if process.returncode is not None:
            break
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            async with asyncio.timeout(grace):
                await process.wait()
        except TimeoutError:
            pass
        except asyncio.CancelledError:
            cancelled = True
    return cancelled


async def _stop(process: asyncio.subprocess.Process, capture: OutputCapture) -> None:
    """End the group (`stop_group`), then drain the pipe, bounded; a cancellation meanwhile
    is re-raised at the end."""
    cancelled = await stop_group(process)
    try:
        async with asyncio.timeout(KILL_GRACE):
            assert process.stdout is not None
            while chunk := await process.stdout.read(READ_CHUNK):
                capture.feed(chunk)
    except TimeoutError:
        pass
    except asyncio.CancelledError:
        cancelled = True
    if cancelled:
        raise asyncio.CancelledError


def outcome_for(shown: str, result: CommandResult, timeout: float) -> ToolOutcome:
    """The model's view of a finished command: its output, then how it ended."""
    body = result.output.rstrip("\n") or "(no output)"
    if result.timed_out:
        status = f"[timed out after {timeout:g} s; the command and its processes were killed]"
    else:
        status = f"[exit code {result.exit_code}]"
    return ToolOutcome(
        text=f"{body}\n{status}",
        is_error=result.timed_out or result.exit_code != 0,
        truncated=result.truncated,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
    )
