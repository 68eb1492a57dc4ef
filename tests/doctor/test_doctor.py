"""`paicli mcp doctor` as a user runs it, against servers broken one way each
(`tests/server_programs/broken/`): every finding, the exit status, the JSON, and nothing left
running."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import zygote_process
from tests.conftest import SERVER_PROGRAMS
from tests.http_servers import run_http_server
from tests.in_process import Run, run_paicli
from tests.processes import alive, processes_with, until

# Real processes, sockets or terminals are the point here (not the in-memory tier).
pytestmark = pytest.mark.real

BROKEN = SERVER_PROGRAMS / "broken"
# Long enough that a server on a loaded machine is always started well before it passes
# (a start takes well under a second): what the doctor saw by then does not depend on luck.
SILENCE = "5"


def paicli(*args: str, cwd: Path | None = None, home: Path | None = None) -> Run:
    """`paicli mcp doctor ARGS`, in this process (tests/in_process.py)."""
    env = {**os.environ}
    if home is not None:
        env["PAICLI_HOME"] = str(home)
    return run_paicli(["mcp", "doctor", *args], cwd=cwd or Path.cwd(), environ=env)


def doctor_json(*args: str, cwd: Path | None = None, home: Path | None = None) -> tuple[int, Any]:
    done = paicli("--json", *args, cwd=cwd, home=home)
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def findings(report: Any, server: int = 0) -> dict[str, dict[str, Any]]:
    return {finding["code"]: finding for finding in report["servers"][server]["findings"]}


def config_home(tmp_path: Path, servers: dict[str, Any]) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return home, project


def examine(script: str, *args: str, timeout: str = SILENCE) -> tuple[int, dict[str, Any]]:
    """Doctor one broken server; afterwards no process runs its script. The server gets one
    more argument, which no script reads, naming this call: other pytest workers may run the
    same script at the same time, and only this call's processes are looked for."""
    path = str(BROKEN / script)
    marker = f"--examined-by={uuid.uuid4().hex}"
    code, report = doctor_json(
        "--timeout", timeout, "--slow", "30", "--", sys.executable, path, *args, marker
    )
    assert processes_with(marker) == []
    return code, findings(report)


# The servers the doctor can only find out about by waiting out the silence: examined all at
# once, once per run, in the background from the module's first test on (the first pytest
# worker to get here does it; the others read its results), and each test reads its own report.
SILENT = (
    "buffered.py",
    "no_newline.py",
    "latin1.py",
    "wrong_id.py",
    "not_jsonrpc.py",
    "pretty_json.py",
    "windows_path.py",
)
Reports = dict[str, tuple[int, dict[str, Any]]]


def start_examining(script: str) -> subprocess.Popen[str] | zygote_process.ZygotePopen:
    """`examine` begun: the doctor started on one broken server, finished by `finish`."""
    command = [sys.executable, "-m", "paicli.cli", "mcp", "doctor", "--json"]
    options = ["--timeout", SILENCE, "--slow", "30", "--", sys.executable, str(BROKEN / script)]
    return zygote_process.Popen(
        [*command, *options],
        env={**os.environ},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(
    script: str, doctor: subprocess.Popen[str] | zygote_process.ZygotePopen
) -> tuple[int, dict[str, Any]]:
    try:
        stdout, stderr = doctor.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        doctor.kill()
        doctor.communicate()
        raise
    assert stdout, stderr
    assert processes_with(str(BROKEN / script)) == []
    assert doctor.returncode is not None
    return doctor.returncode, findings(json.loads(stdout))


class SilentExamination:
    """The reports on SILENT, made once per run: by a thread of the first worker to start
    them (holding a lock file the other workers wait on), written to a file they all read."""

    def __init__(self, shared: Path) -> None:
        self._results = shared / "doctor-silence.json"
        self._lock = open(shared / "doctor-silence.lock", "w")  # noqa: SIM115 (closed in close)
        self._started = False
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    def start(self) -> None:
        """Start the doctors now unless another worker has (or they are done)."""
        if self._started:
            return
        self._started = True
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another worker is examining them: `reports` waits for its results
        if self._results.exists():
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            return
        # Started here, in a test marked real; only the waiting is left to the thread.
        doctors = {script: start_examining(script) for script in SILENT}
        self._thread = threading.Thread(target=self._finish_all, args=(doctors,))
        self._thread.start()

    def _finish_all(self, doctors: dict[str, subprocess.Popen[str]]) -> None:
        try:
            reports = {script: finish(script, doctor) for script, doctor in doctors.items()}
            self._results.write_text(json.dumps(reports))
        except BaseException as exc:  # re-raised by `reports`, in the test that reads them
            self._failure = exc
        finally:
            fcntl.flock(self._lock, fcntl.LOCK_UN)

    def reports(self) -> Reports:
        if self._thread is not None:
            self._thread.join()
        if self._failure is not None:
            raise self._failure
        fcntl.flock(self._lock, fcntl.LOCK_EX)  # until any other worker's are written
        try:
            if not self._results.exists():  # nobody started them
                doctors = {script: start_examining(script) for script in SILENT}
                reports = {script: finish(script, doctor) for script, doctor in doctors.items()}
                self._results.write_text(json.dumps(reports))
            results = json.loads(self._results.read_text())
        finally:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
        return {script: (code, found) for script, (code, found) in results.items()}

    def close(self) -> None:
        if self._thread is not None:
            self._thread.join()
        self._lock.close()


@pytest.fixture(scope="session")
def silent_examination(
    tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> Iterator[SilentExamination]:
    base = tmp_path_factory.getbasetemp()
    # This run's folder, common to its workers (under pytest-xdist each has one inside it).
    examination = SilentExamination(base if worker_id == "master" else base.parent)
    yield examination
    examination.close()


@pytest.fixture(scope="module", autouse=True)
def _examine_silence_early(
    request: pytest.FixtureRequest, silent_examination: SilentExamination
) -> None:
    """Start on SILENT with the module's first test when the run has a test that reads their
    reports: waiting out the silence then costs the other tests nothing."""
    if any(
        getattr(item, "module", None) is request.module
        and "silent" in getattr(item, "fixturenames", ())
        for item in request.session.items
    ):
        silent_examination.start()


@pytest.fixture
def silent(silent_examination: SilentExamination) -> Reports:
    return silent_examination.reports()


def test_a_healthy_server_passes_with_its_protocol_and_exit_status_0() -> None:
    code, found = examine("healthy.py")
    assert code == 0
    assert {f["severity"] for f in found.values()} == {"info"}
    assert "protocol 2025-11-25 (initialize handshake)" in found["protocol"]["message"]
    assert found["tools"]["message"] == "1 tool"


def test_the_text_report_has_one_line_per_finding() -> None:
    done = paicli("--", sys.executable, str(BROKEN / "healthy.py"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "✓ healthy (stdio): healthy"
    assert any(line.startswith("  · broken-example 1.0: protocol 2025-11-25") for line in lines)


def test_a_command_not_on_path() -> None:
    code, report = doctor_json("--", "no-such-mcp-server-anywhere")
    found = findings(report)
    assert code == 1
    assert "not on PATH" in found["not-found"]["message"]
    assert found["not-found"]["fix"] == "install it, or give its full path"


@pytest.fixture
def copies(tmp_path: Path) -> Path:
    """The healthy server copied into a folder of its own, to be broken there."""
    for name in ("healthy.py", "broken_base.py"):
        shutil.copy(BROKEN / name, tmp_path / name)
    return tmp_path


def test_a_relative_command_says_which_folder_it_was_resolved_against(copies: Path) -> None:
    code, report = doctor_json("--", "./healthy.py", cwd=copies)
    assert code == 0
    message = findings(report)["relative-command"]["message"]
    assert f"resolved against {copies} (the folder paicli runs in)" in message


def test_a_relative_script_argument_missing_from_the_folder(copies: Path) -> None:
    code, report = doctor_json("--", sys.executable, "server.py", cwd=copies)
    found = findings(report)
    assert code == 1
    assert f"there is no {copies / 'server.py'}" in found["relative-argument"]["message"]
    assert "exited" in found  # python3 could not open it


def test_a_script_without_the_execute_bit(copies: Path) -> None:
    (copies / "healthy.py").chmod(0o644)
    code, report = doctor_json("--", "./healthy.py", cwd=copies)
    assert code == 1
    assert findings(report)["not-executable"]["fix"] == f"run: chmod +x {copies / 'healthy.py'}"


def test_a_script_without_a_shebang(copies: Path) -> None:
    path = copies / "healthy.py"
    path.write_text(path.read_text().split("\n", 1)[1])
    code, report = doctor_json("--", "./healthy.py", cwd=copies)
    assert code == 1
    assert "without a '#!' first line" in findings(report)["no-shebang"]["message"]


def test_a_shebang_with_windows_line_ends(copies: Path) -> None:
    path = copies / "healthy.py"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    code, report = doctor_json("--", "./healthy.py", cwd=copies)
    assert code == 1
    assert "carriage return" in findings(report)["crlf-shebang"]["message"]


def test_a_server_that_exits_at_startup_shows_its_exit_code_and_stderr() -> None:
    code, found = examine("exits_early.py")
    assert code == 1
    assert "exit code 3" in found["exited"]["message"]
    assert found["exited"]["excerpt"][-1] == "ModuleNotFoundError: No module named 'weather_api'"


def test_logs_on_stdout_are_a_problem_even_when_the_server_works() -> None:
    code, found = examine("stdout_logs.py")
    assert code == 1
    assert "protocol" in found and "no-answer" not in found
    assert found["stdout-logs"]["severity"] == "warning"
    assert "'Starting broken-example server on stdio...'" in found["stdout-logs"]["message"]
    assert found["stdout-logs"]["fix"].endswith("write logs to stderr")


def test_tool_problems_each_get_a_finding() -> None:
    code, found = examine("bad_tools.py")
    assert code == 1
    assert "'echo'" in found["tool-duplicate"]["message"]
    assert "'get weather!' → 'mcp__bad_tools__get_weather_'" in found["tool-name"]["message"]
    assert "'bad_schema'" in found["tool-schema"]["message"]
    assert "'undocumented'" in found["tool-description-missing"]["message"]
    assert "'chatty'" in found["tool-description-long"]["message"]


def test_a_slow_start() -> None:
    path = str(BROKEN / "slow_start.py")
    code, report = doctor_json("--slow", "0.5", "--", sys.executable, path, "1.0")
    assert code == 1
    assert "over 0.5 s" in findings(report)["slow-start"]["message"]


def test_a_child_left_running_is_reported_and_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "helper.pid"
    code, found = examine("leaves_child.py", str(pid_file))
    helper = int(pid_file.read_text())
    assert code == 1
    assert f"{helper} (python" in found["children-left"]["message"]
    # SIGKILL is delivered on the kernel's time, not by the time the doctor exits.
    asyncio.run(until(lambda: not alive(helper), timeout=10))


def test_hostile_output_is_escaped_in_the_report(tmp_path: Path) -> None:
    script = tmp_path / "hostile.py"
    script.write_text(
        "import sys\n"
        "print('\\x1b[2J\\x1b]0;owned\\x07 log', flush=True)\n"
        "sys.stderr.write('\\x1b[31mred\\n')\n"
        "sys.exit(1)\n"
    )
    done = paicli("--", sys.executable, str(script))
    assert done.returncode == 1
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "\\x1b[31mred" in done.stdout


def test_configured_servers_by_name_and_all_of_them(tmp_path: Path) -> None:
    servers = {
        "good": {"command": sys.executable, "args": [str(BROKEN / "healthy.py")]},
        "dies": {"command": sys.executable, "args": [str(BROKEN / "exits_early.py")]},
    }
    home, project = config_home(tmp_path, servers)
    code, report = doctor_json("good", "--slow", "30", cwd=project, home=home)
    assert code == 0
    assert [server["name"] for server in report["servers"]] == ["good"]
    code, report = doctor_json(cwd=project, home=home)
    assert code == 1
    assert {s["name"]: s["healthy"] for s in report["servers"]} == {"good": True, "dies": False}
    missing = paicli("nobody", cwd=project, home=home)
    assert missing.returncode == 2
    assert "no server named 'nobody'" in missing.stderr


def test_an_unapproved_project_server_is_not_started(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".paicli").mkdir(parents=True)
    started = tmp_path / "started"
    server = {"command": sys.executable, "args": ["-c", f"open({str(started)!r}, 'w')"]}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"repo": server}}))
    code, report = doctor_json(cwd=project, home=home)
    assert code == 1
    assert "pass --trust-project" in findings(report)["not-approved"]["message"]
    assert not started.exists()


def test_an_http_server_that_is_not_listening(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    servers = {"remote": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}
    home, project = config_home(tmp_path, servers)
    code, report = doctor_json("--timeout", "5", cwd=project, home=home)
    assert code == 1
    assert report["servers"][0]["transport"] == "http"
    assert "check the URL" in findings(report)["unreachable"]["fix"]


def test_usage_errors_exit_2() -> None:
    assert paicli("--").returncode == 2
    assert paicli("--bogus").returncode == 2
    assert paicli("good", "--", "cmd").returncode == 2


def test_lsp_framing_is_named() -> None:
    code, found = examine("content_length.py")
    assert code == 1
    assert "framing of LSP" in found["content-length-framing"]["message"]


def test_a_request_left_unanswered_costs_every_start() -> None:
    code, found = examine("ignores_unknown.py")
    assert code == 1
    assert "protocol" in found
    assert "'server/discover'" in found["unanswered"]["message"]


@pytest.mark.parametrize(("mode", "era"), [("normal", "initialize handshake"), ("modern", "2026")])
async def test_an_http_server_reports_its_protocol(tmp_path: Path, mode: str, era: str) -> None:
    async with run_http_server("http_fault_server.py", "--mode", mode) as url:
        home, project = config_home(tmp_path, {"remote": {"type": "http", "url": url}})
        code, report = await asyncio.to_thread(doctor_json, "--slow", "30", cwd=project, home=home)
    assert code == 0, report
    assert era in findings(report)["protocol"]["message"]


async def test_an_http_server_that_never_answers(tmp_path: Path) -> None:
    async with run_http_server("http_fault_server.py", "--mode", "never_answers") as url:
        home, project = config_home(tmp_path, {"remote": {"type": "http", "url": url}})
        code, report = await asyncio.to_thread(
            doctor_json, "--timeout", "1", cwd=project, home=home
        )
    assert code == 1
    assert "within 1 s" in findings(report)["no-answer"]["message"]


def test_a_server_that_outlives_its_input() -> None:
    code, found = examine("ignores_eof.py")
    assert code == 1
    assert "stopped with SIGTERM" in found["ignores-eof"]["message"]


def test_a_server_that_dies_at_end_of_input() -> None:
    code, found = examine("crashes_at_eof.py")
    assert code == 1
    assert "exited with status 1 when its stdin closed" in found["eof-error"]["message"]
    assert "JSONDecodeError" in found["eof-error"]["excerpt"][-1]


@pytest.mark.parametrize("tool", ["minimal_tool.py", "minimal_tool.sh"])
def test_a_minimal_dialect_tool_is_healthy_and_its_dialect_named(tool: str) -> None:
    interpreter = sys.executable if tool.endswith(".py") else "sh"
    code, report = doctor_json("--slow", "30", "--", interpreter, str(SERVER_PROGRAMS / tool))
    found = findings(report)
    assert code == 0, report
    assert "the minimal JSON-RPC dialect" in found["protocol"]["message"]
    assert found["tools"]["message"] in ("6 tools", "1 tool")


def test_a_server_runs_under_its_configured_limits(tmp_path: Path) -> None:
    hungry = ["-c", "x = bytearray(300 * 1024 * 1024)"]
    server = {"command": sys.executable, "args": hungry, "limits": {"memory": "64M"}}
    home, project = config_home(tmp_path, {"big": server})
    code, report = doctor_json(cwd=project, home=home)
    found = findings(report)
    assert code == 1
    assert found["exited"]["excerpt"][-1] == "MemoryError"
    assert "memory limit (64M)" in found["limits"]["message"]


async def test_stopping_the_doctor_mid_run_leaves_no_server_behind(tmp_path: Path) -> None:
    # A copy of its own, so no other doctor's run of the same script is taken for this one's.
    for name in ("buffered.py", "broken_base.py"):
        shutil.copy(BROKEN / name, tmp_path / name)
    path = str(tmp_path / "buffered.py")
    doctor = await zygote_process.create_subprocess_exec(
        sys.executable,
        "-m",
        "paicli.cli",
        "mcp",
        "doctor",
        "--timeout",
        "60",
        "--",
        sys.executable,
        path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    # The doctor's own command line names the script too: wait for the server's.
    await until(lambda: [p for p in processes_with(path) if p != doctor.pid] != [], timeout=30)
    doctor.send_signal(signal.SIGTERM)
    async with asyncio.timeout(30):
        _, stderr = await doctor.communicate()
    assert doctor.returncode == 130
    assert b"servers shut down" in stderr
    assert processes_with(path) == []


# -- what only waiting out the silence tells apart ----------------------------------------
# (the module's last tests: the examination started with its first test is done by then)


def test_silence_is_told_apart_as_buffered_output(
    silent: Reports,
) -> None:
    code, found = silent["buffered.py"]
    assert code == 1
    assert "no-answer" in found
    assert "python -u" in found["stdout-silent"]["fix"]
    # Python flushed the buffer on exit, when the doctor stopped it: that is the proof.
    assert "came out only when it was stopped" in found["stdout-silent"]["message"]
    assert "no-newline" not in found


def test_an_answer_without_a_newline_is_told_apart(
    silent: Reports,
) -> None:
    code, found = silent["no_newline.py"]
    assert code == 1
    assert "no-answer" in found and "stdout-silent" not in found
    assert "without a newline" in found["no-newline"]["message"]


def test_output_that_is_not_utf8(silent: Reports) -> None:
    code, found = silent["latin1.py"]
    assert code == 1
    # Its answer cannot be read, so the handshake fails at once (no waiting for a timeout).
    failed = found["protocol-error"]["message"]
    assert (
        "answer to the handshake (initialize) could not be read (str is not valid UTF-8" in failed
    )
    assert "\\xe9" in found["invalid-utf8"]["message"]


def test_answers_with_the_wrong_id(silent: Reports) -> None:
    code, found = silent["wrong_id.py"]
    assert code == 1
    assert "no-answer" in found
    assert "'1'" in found["wrong-id"]["message"]
    assert "(requests sent: 1" in found["wrong-id"]["message"]


def test_json_that_is_not_json_rpc(silent: Reports) -> None:
    code, found = silent["not_jsonrpc.py"]
    assert code == 1
    assert '"jsonrpc": "2.0"' in found["not-jsonrpc"]["message"]


def test_pretty_printed_json_is_told_apart_from_logs(
    silent: Reports,
) -> None:
    code, found = silent["pretty_json.py"]
    assert code == 1
    assert "no-answer" in found and "stdout-logs" not in found
    assert "json.dumps(message)" in found["multiline-json"]["fix"]


def test_json_written_by_hand_with_a_windows_path(
    silent: Reports,
) -> None:
    code, found = silent["windows_path.py"]
    assert code == 1
    assert "stdout-logs" not in found
    assert "must be doubled" in found["invalid-json"]["fix"]


def test_a_server_that_exits_on_the_discovery_probe_is_named_with_the_legacy_setting(
    tmp_path: Path,
) -> None:
    # A marker of this test's own: other tests run the fault server at the same time.
    marker = f"probe-exit-{tmp_path.name}"
    fault = str(SERVER_PROGRAMS / "fault_server.py")
    command = (
        "--",
        sys.executable,
        fault,
        "--mode",
        "initialize_first",
        "--initial-stderr",
        marker,
    )
    code, report = doctor_json("--timeout", SILENCE, "--slow", "30", *command)
    assert code == 1  # a warning: it works, but every first start costs a second spawn
    found = findings(report)
    assert "exited" not in found  # it works, started with initialize first
    assert found["exits-on-probe"]["severity"] == "warning"
    assert (
        "exited with exit code 1 on the 2026 discovery probe" in found["exits-on-probe"]["message"]
    )
    assert '"protocol": "legacy"' in found["exits-on-probe"]["fix"]
    assert "keep running until its stdin closes" not in json.dumps(report)
    assert "initialize handshake" in found["protocol"]["message"]
    assert processes_with(marker) == []
