"""`paicli batch` for real: the command runs in the test process (tests/in_process.py), its
workers are real processes, the model is the scripted server on 127.0.0.1, the folders and
repositories are real, and so are the MCP servers of the tasks that have them."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.batch.task_llm import TaskLlm, command, write_file
from tests.conftest import SERVER_PROGRAMS
from tests.in_process import Run, run_paicli_async
from tests.processes import processes_with, until

pytestmark = pytest.mark.real

API_KEY = "sk-test-BATCH-0123456789"


def environ(root: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(root / "home"),
        "PAICLI_HOME": str(root / "home" / ".paicli"),
        "PAICLI_API_KEY": API_KEY,
        "TMPDIR": str(root),  # the batch's scratch folder, and so its workers' command line
    }
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


async def batch(root: Path, llm: TaskLlm, *args: str) -> Run:
    """`paicli --base-url ... batch ARGS` in `root`."""
    flags = ["--base-url", llm.base_url, "--model", "scripted"]
    return await run_paicli_async([*flags, "batch", *args], cwd=root, environ=environ(root))


def write_tasks(path: Path, *lines: Mapping[str, Any] | str) -> None:
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("".join(f"{line}\n" for line in text))


def results(text: str) -> dict[str, dict[str, Any]]:
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return {line["task"]: line for line in lines}


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def repository(folder: Path) -> None:
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    (folder / "README").write_text("first\n")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "one")
    git(folder, "tag", "v1")
    (folder / "README").write_text("second\n")
    git(folder, "commit", "-q", "-am", "two")


def writes_its_name(prompt: str, results_so_far: int) -> dict[str, Any]:
    """Each task writes a file named after its prompt's first word, then answers."""
    if results_so_far == 0:
        name = prompt.split(maxsplit=1)[0]
        return write_file(f"{name}.txt", f"{prompt}\n")
    return {"text": f"wrote {prompt.split(maxsplit=1)[0]}"}


async def test_tasks_run_in_their_own_copies_and_bad_lines_fail_alone(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "kept.txt").write_text("as it was\n")
    repository(tmp_path / "repo")
    write_tasks(
        tmp_path / "tasks.jsonl",
        {"id": "copy", "prompt": "alpha task", "cwd": "plain", "allow": ["write_file"]},
        "{not json",
        {
            "id": "tagged",
            "prompt": "beta task",
            "repo": "repo",
            "ref": "v1",
            "allow": ["write_file"],
        },
        {"id": "empty", "prompt": "gamma task", "allow": ["write_file"]},
        {"id": "badref", "prompt": "delta task", "repo": "repo", "ref": "no-such-tag"},
        {"id": "gone", "prompt": "epsilon task", "cwd": "missing"},
        {"id": "../escape", "prompt": "zeta task"},
    )
    async with TaskLlm(writes_its_name) as llm:
        run = await batch(tmp_path, llm, "tasks.jsonl", "--workers", "2")
    assert run.code == 1, run.stderr
    assert "tasks.jsonl:2: not JSON" in run.stderr
    assert "tasks.jsonl:7: 'id' must be" in run.stderr
    found = results(run.stdout)
    assert set(found) == {"copy", "tagged", "empty", "badref", "gone"}
    copy = found["copy"]
    assert (copy["status"], copy["type"], copy["subtype"], copy["result"]) == (
        "done",
        "result",
        "success",
        "wrote alpha",
    )
    assert "+++ b/alpha.txt\n@@ -0,0 +1 @@\n+alpha task\n" in copy["diff"]
    assert "kept.txt" not in copy["diff"]
    assert copy["session_id"] and copy["num_turns"] == 2
    tagged = found["tagged"]
    assert tagged["status"] == "done"
    assert "+++ b/beta.txt" in tagged["diff"] and "README" not in tagged["diff"]
    assert "+++ b/gamma.txt" in found["empty"]["diff"]
    assert found["badref"]["status"] == "failed"
    assert "no commit 'no-such-tag'" in found["badref"]["errors"][0]
    assert found["gone"]["status"] == "failed" and "no such folder" in found["gone"]["errors"][0]
    # The originals are as they were; the worktrees and copies are gone.
    assert sorted(p.name for p in plain.iterdir()) == ["kept.txt"]
    assert (tmp_path / "repo" / "README").read_text() == "second\n"
    assert git(tmp_path / "repo", "status", "--porcelain") == ""
    assert len(git(tmp_path / "repo", "worktree", "list").splitlines()) == 1
    assert [name for name in os.listdir(tmp_path) if name.startswith("paicli-batch-")] == []
    # Each task was a run of its own, saved as a session.
    sessions = {found[name]["session_id"] for name in ("copy", "tagged", "empty")}
    saved = "".join(os.listdir(tmp_path / "home" / ".paicli" / "sessions"))
    assert all(session in saved for session in sessions), saved


async def test_resume_runs_only_the_tasks_without_a_result(tmp_path: Path) -> None:
    write_tasks(
        tmp_path / "tasks.jsonl",
        {"id": "a", "prompt": "one"},
        {"id": "b", "prompt": "two"},
        {"id": "c", "prompt": "three"},
    )
    earlier = {"task": "a", "status": "done", "type": "result", "result": "from before"}
    # An earlier run killed while writing left a cut line: it is no result.
    (tmp_path / "out.jsonl").write_text(json.dumps(earlier) + '\n{"task": "b", "sta')
    # The model quotes the key: no result line may.
    async with TaskLlm(lambda prompt, _: {"text": f"answer {prompt} {API_KEY}"}) as llm:
        refused = await batch(tmp_path, llm, "tasks.jsonl", "--out", "out.jsonl")
        assert refused.code == 2 and "--resume-batch" in refused.stderr
        resumed = await batch(
            tmp_path, llm, "tasks.jsonl", "--out", "out.jsonl", "--resume-batch", "--workers", "1"
        )
    assert resumed.code == 0, resumed.stderr
    assert llm.prompts() == ["two", "three"]
    assert "1 tasks already have results; skipped" in resumed.stderr
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert lines[0] == json.dumps(earlier)
    assert [json.loads(line)["task"] for line in lines[2:]] == ["b", "c"]
    assert json.loads(lines[-1])["result"].startswith("answer three ")
    assert API_KEY not in "".join(lines)


async def test_a_hung_task_times_out_alone_and_leaves_no_process(tmp_path: Path) -> None:
    marker = f"600.{os.getpid()}{abs(hash(str(tmp_path))) % 10**6}"

    def decide(prompt: str, results_so_far: int) -> dict[str, Any]:
        if prompt == "hang" and results_so_far == 0:
            return command(f"sleep {marker}")
        return {"text": f"fine {prompt}"}

    write_tasks(
        tmp_path / "tasks.jsonl",
        {"id": "stuck", "prompt": "hang", "allow": ["execute_command(sleep:*)"]},
        {"id": "after", "prompt": "next"},
    )
    async with TaskLlm(decide) as llm:
        run = await batch(tmp_path, llm, "tasks.jsonl", "--workers", "1", "--task-timeout", "4")
    found = results(run.stdout)
    assert found["stuck"]["status"] == "timeout", run.stderr
    assert "--task-timeout" in found["stuck"]["errors"][0]
    assert found["after"]["status"] == "done"
    await until(lambda: processes_with(marker) == [], timeout=10)
    await until(lambda: processes_with(f"{tmp_path}/paicli-batch-") == [], timeout=10)


async def test_a_worker_that_dies_fails_its_task_alone(tmp_path: Path) -> None:
    """The worker running `doomed` is killed (as the OOM killer would); the batch goes on."""

    def decide(prompt: str, _: int) -> dict[str, Any]:
        return {"hang": True} if prompt == "doomed" else {"text": f"fine {prompt}"}

    write_tasks(
        tmp_path / "tasks.jsonl", {"id": "doomed", "prompt": "doomed"}, {"id": "b", "prompt": "b"}
    )
    async with TaskLlm(decide) as llm:
        running = asyncio.ensure_future(batch(tmp_path, llm, "tasks.jsonl", "--workers", "1"))
        await asyncio.wait_for(llm.wait_for_requests(1), 60)
        workers = processes_with("paicli.cli.batch_worker")
        ours = [pid for pid in workers if str(tmp_path) in _cmdline(pid)]
        assert len(ours) == 1
        os.kill(ours[0], signal.SIGKILL)
        run = await asyncio.wait_for(running, 60)
    found = results(run.stdout)
    assert found["doomed"]["status"] == "crashed", run.stderr
    assert "killed by SIGKILL" in found["doomed"]["errors"][0]
    assert found["b"]["status"] == "done"
    assert run.code == 1


async def test_tasks_with_the_same_server_share_one_warm_server(tmp_path: Path) -> None:
    """One server process for three tasks; each task's roots are its own copy's."""
    servers = {
        "fault": {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "fault_server.py")]}
    }

    def decide(prompt: str, results_so_far: int) -> dict[str, Any]:
        if results_so_far == 0:
            arguments = json.dumps({"text": prompt})
            return {"tool_calls": [{"name": "mcp__fault__echo", "arguments": arguments}]}
        if results_so_far == 1:
            return {"tool_calls": [{"name": "mcp__fault__ask_roots", "arguments": "{}"}]}
        return {"text": "echoed"}

    write_tasks(
        tmp_path / "tasks.jsonl",
        *(
            {
                "id": f"t{n}",
                "prompt": f"p{n}",
                "mcpServers": servers,
                "allow": ["mcp__fault__echo", "mcp__fault__ask_roots"],
            }
            for n in range(3)
        ),
    )
    async with TaskLlm(decide) as llm:
        run = await batch(tmp_path, llm, "tasks.jsonl", "--workers", "1")
    assert run.code == 0, run.stderr
    found = results(run.stdout)
    assert [found[f"t{n}"]["warm_servers_opened"] for n in range(3)] == [1, 1, 1]
    last = {}  # each task's conversation as last sent: its tool results
    for body in llm.requests:
        last[body["messages"][1]["content"]] = [
            str(m["content"]) for m in body["messages"] if m["role"] == "tool"
        ]
    for n in range(3):
        echoed, roots = last[f"p{n}"]
        assert f"p{n}" in echoed
        assert f"/{n + 1}/work" in roots  # its own copy (line n + 1), not another task's
        assert all(f"/{other + 1}/work" not in roots for other in range(3) if other != n)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


async def test_a_batch_killed_mid_task_leaves_no_worker(tmp_path: Path) -> None:
    """`kill -9` of `paicli batch` itself: its workers die with it (no orphan runs on)."""
    write_tasks(tmp_path / "tasks.jsonl", {"id": "long", "prompt": "long"})
    async with TaskLlm(lambda *_: {"hang": True}) as llm:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "paicli.cli", "--base-url", llm.base_url, "--model", "scripted"),
            *("batch", "tasks.jsonl"),
            cwd=tmp_path,
            env=environ(tmp_path),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        await asyncio.wait_for(llm.wait_for_requests(1), 60)
        marker = f"{tmp_path}/paicli-batch-"
        assert len(processes_with(marker)) == 1
        process.kill()
        await process.wait()
        await until(lambda: processes_with(marker) == [], timeout=10)


async def test_a_batch_whose_reader_goes_away_stops_quietly(tmp_path: Path) -> None:
    """`paicli batch tasks.jsonl | head -1`: the first result it cannot write stops the
    batch as SIGPIPE would, its workers with it (it was an "internal error")."""
    write_tasks(tmp_path / "tasks.jsonl", {"id": "a", "prompt": "a"}, {"id": "b", "prompt": "b"})
    gone, stdout = os.pipe()
    os.close(gone)  # the reader is gone before the first result: that write fails
    async with TaskLlm(lambda prompt, _: {"text": f"answer {prompt}"}) as llm:
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                *("-m", "paicli.cli", "--base-url", llm.base_url, "--model", "scripted"),
                *("batch", "tasks.jsonl", "--workers", "1"),
                cwd=tmp_path,
                env=environ(tmp_path),
                stdout=stdout,
                stderr=asyncio.subprocess.PIPE,
            )
        finally:
            os.close(stdout)
        _, said = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 141, said
    assert "error" not in said.decode()
    await until(lambda: processes_with(f"{tmp_path}/paicli-batch-") == [], timeout=10)


async def test_a_task_s_broken_servers_are_said_in_its_result(tmp_path: Path) -> None:
    """A task whose `mcpServers` entry is wrong ran without it and reported `done` with no
    word of it (`-p` says so on stderr, which a batch's worker keeps to itself)."""
    servers = {"shape": {"command": ["x"]}, "gone": {"command": str(tmp_path / "missing")}}
    write_tasks(
        tmp_path / "tasks.jsonl",
        {"id": "broken", "prompt": "p", "mcpServers": servers},
        {"id": "plain", "prompt": "p"},
    )
    async with TaskLlm(lambda *_: {"text": "answered"}) as llm:
        run = await batch(tmp_path, llm, "tasks.jsonl", "--workers", "1")
    assert run.code == 0, run.stderr
    found = results(run.stdout)
    broken = found["broken"]
    assert broken["status"] == "done"
    statuses = {(s["name"], s["status"]) for s in broken["mcp_servers"]}
    assert statuses == {("shape", "failed"), ("gone", "failed")}
    assert len(broken["warnings"]) == 2
    shape = "MCP server 'shape' failed: mcpServers: server 'shape': 'command' must be a non-empty"
    assert any(line.startswith(shape) for line in broken["warnings"]), broken["warnings"]
    assert any(line.startswith("MCP server 'gone' failed: ") for line in broken["warnings"])
    assert str(tmp_path) not in json.dumps(broken["warnings"]).replace(
        str(tmp_path / "missing"), ""
    )
    assert (found["plain"]["mcp_servers"], found["plain"]["warnings"]) == ([], [])
