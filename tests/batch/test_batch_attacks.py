"""`paicli batch` against hostile task files, folders and results paths: each attack as a
test (the task lines' own checks are in `test_tasks`)."""

from __future__ import annotations

import json
import os
import socket
import uuid
from pathlib import Path

import pytest

from paicli.batch import workspace as workspace_module
from paicli.batch.tasks import Task, read_tasks
from paicli.batch.workspace import WorkspaceError, diff, prepare, remove
from tests.batch.task_llm import TaskLlm
from tests.batch.test_batch_runs import batch, git, repository, write_tasks

pytestmark = pytest.mark.real

NOT_OURS = "is not a result line of paicli batch: name the results file of an earlier run"


def test_a_repository_configured_to_run_a_program_on_git_commands_does_not_run_it(
    tmp_path: Path,
) -> None:
    # core.fsmonitor names a program git runs on each index refresh (`worktree add`,
    # `add -A`): a repository from elsewhere, or a task's command writing its config.
    repo = tmp_path / "repo"
    repository(repo)
    marker = tmp_path / f"ran-{uuid.uuid4().hex}"
    program = tmp_path / "monitor.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\n")
    program.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(program))
    task = Task(line=1, id="t", prompt="p", folder=str(repo), git=True)
    scratch = tmp_path / "scratch"
    workspace = prepare(task, scratch)
    (workspace.folder / "new.txt").write_text("new\n")
    changes = diff(workspace)
    remove(task, scratch)
    assert "+new" in changes
    assert not marker.exists()


@pytest.mark.parametrize("ref", ["main..v1", "v1@{-1}", "HEAD~999"])
def test_a_ref_that_is_a_range_or_names_no_commit_fails_its_task_cleanly(
    tmp_path: Path, ref: str
) -> None:
    repository(tmp_path / "repo")
    task = Task(line=1, id="t", prompt="p", folder=str(tmp_path / "repo"), git=True, ref=ref)
    with pytest.raises(WorkspaceError, match="no commit"):
        prepare(task, tmp_path / "scratch")
    remove(task, tmp_path / "scratch")
    assert git(tmp_path / "repo", "worktree", "list").count("\n") == 1


def test_option_like_repos_and_refs_never_reach_git_as_options(tmp_path: Path) -> None:
    write_tasks(
        tmp_path / "tasks.jsonl",
        {"id": "a", "prompt": "p", "repo": "--upload-pack=touch pwned"},
        {"id": "b", "prompt": "p", "repo": ".", "ref": "--upload-pack=touch pwned"},
        {"id": "c", "prompt": "p", "repo": ".", "ref": "-c core.sshCommand=x"},
        {"id": "d", "prompt": "p", "cwd": "-C/etc"},
    )
    tasks, problems = read_tasks(tmp_path / "tasks.jsonl")
    # A relative repo is a folder of the tasks file's folder: absolute, never an option.
    assert [(t.id, t.folder) for t in tasks] == [
        ("a", str(tmp_path / "--upload-pack=touch pwned")),
        ("d", str(tmp_path / "-C" / "etc")),
    ]
    assert len(problems) == 2 and all("'ref' must be" in p for p in problems)


@pytest.mark.parametrize("kind", ["dangling link", "link to a file", "fifo"])
async def test_a_results_path_that_is_a_link_or_a_fifo_is_refused(
    tmp_path: Path, kind: str
) -> None:
    target = tmp_path / "elsewhere" / "victim"
    target.parent.mkdir()
    out = tmp_path / "out.jsonl"
    if kind == "fifo":
        os.mkfifo(out)
    else:
        if kind == "link to a file":
            target.write_text(json.dumps({"task": "a", "status": "done"}) + "\n")
        out.symlink_to(target)
    write_tasks(tmp_path / "tasks.jsonl", {"id": "a", "prompt": "p"})
    async with TaskLlm(lambda prompt, n: {"text": "answer"}) as llm:
        fresh = await batch(tmp_path, llm, "tasks.jsonl", "--out", "out.jsonl")
        resumed = await batch(tmp_path, llm, "tasks.jsonl", "--out", "out.jsonl", "--resume-batch")
    for run in (fresh, resumed):
        assert run.code == 2, run.stderr
        assert "out.jsonl" in run.stderr and "Traceback" not in run.stderr
    assert not target.exists() or target.read_text().count("\n") == 1


@pytest.mark.parametrize(
    ("out", "said"),
    [
        ("tasks.jsonl", f"tasks.jsonl: line 1 {NOT_OURS}"),
        ("notes.jsonl", f"notes.jsonl: line 2 {NOT_OURS}"),
        ("", "--out needs a file name"),
    ],
)
async def test_resuming_into_a_file_that_is_not_a_results_file_is_refused(
    tmp_path: Path, out: str, said: str
) -> None:
    """`--out tasks.jsonl --resume-batch` (a slip of the hand) appended the results to the
    tasks file; a file with other lines is not ours to append to either."""
    write_tasks(tmp_path / "tasks.jsonl", {"id": "a", "prompt": "p"})
    result = json.dumps({"task": "x", "status": "done"})
    write_tasks(tmp_path / "notes.jsonl", result, "# my notes", '{"task": "cut by a ki')
    before = {name: (tmp_path / name).read_bytes() for name in ("tasks.jsonl", "notes.jsonl")}
    async with TaskLlm(lambda prompt, n: {"text": "answer"}) as llm:
        run = await batch(tmp_path, llm, "tasks.jsonl", "--out", out, "--resume-batch")
    assert run.code == 2
    assert run.stderr.splitlines() == [f"paicli batch: {said}"]
    assert llm.requests == []
    assert {name: (tmp_path / name).read_bytes() for name in before} == before


def test_a_plain_folder_s_fifos_and_sockets_are_left_out_of_its_copy(tmp_path: Path) -> None:
    """A project folder with a named pipe or a live socket (a dev server's, an editor's)
    failed every task run in it: shutil refuses to copy them."""
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "kept.txt").write_text("kept\n")
    os.mkfifo(folder / "pipe")
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(folder / "sock"))
        task = Task(line=1, id="t", prompt="p", folder=str(folder))
        workspace = prepare(task, tmp_path / "scratch")
    assert sorted(os.listdir(workspace.folder)) == ["kept.txt"]
    (workspace.folder / "kept.txt").write_text("changed\n")
    assert "+changed" in diff(workspace)
    remove(task, tmp_path / "scratch")


def test_a_folder_holding_the_scratch_folder_is_copied_without_it(tmp_path: Path) -> None:
    """TMPDIR inside the project (some CI setups): the copy copied itself, ever deeper,
    until its path was too long, and the task failed."""
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "kept.txt").write_text("kept\n")
    scratch = folder / ".tmp" / "paicli-batch-x"
    task = Task(line=1, id="t", prompt="p", folder=str(folder))
    workspace = prepare(task, scratch)
    copied = sorted(str(p.relative_to(workspace.folder)) for p in workspace.folder.rglob("*"))
    assert copied == [".tmp", "src", "src/kept.txt"]
    assert diff(workspace) == ""
    remove(task, scratch)


@pytest.mark.parametrize(("limit", "value"), [("MAX_COPY_ENTRIES", 50), ("MAX_COPY_BYTES", 4096)])
def test_a_folder_too_big_to_copy_fails_its_task_before_filling_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: str, value: int
) -> None:
    """A task's `cwd` of `/` or a home folder was copied whole, once per task. Past the
    limits (small here) the task fails in one line, and its partial copy is removed."""
    monkeypatch.setattr(workspace_module, limit, value)
    folder = tmp_path / "big"
    for n in range(30):
        (folder / f"d{n}").mkdir(parents=True)
        (folder / f"d{n}" / "f.txt").write_text("x" * 200)
    task = Task(line=1, id="t", prompt="p", folder=str(folder))
    with pytest.raises(WorkspaceError) as raised:
        prepare(task, tmp_path / "scratch")
    assert str(raised.value).startswith(f"{folder}: too big to copy for a task (over ")
    remove(task, tmp_path / "scratch")
    assert os.listdir(tmp_path / "scratch") == []
    monkeypatch.undo()
    assert prepare(task, tmp_path / "scratch").folder.is_dir()  # under the real limits


@pytest.mark.parametrize(
    ("kind", "said"), [("file", "not a folder"), ("missing", "no such folder")]
)
def test_a_folder_that_is_a_file_or_missing_fails_its_task_saying_which(
    tmp_path: Path, kind: str, said: str
) -> None:
    folder = tmp_path / kind
    if kind == "file":
        folder.write_text("a file\n")
    for repo in (False, True):
        task = Task(line=1, id="t", prompt="p", folder=str(folder), git=repo)
        with pytest.raises(WorkspaceError) as raised:
            prepare(task, tmp_path / "scratch")
        assert str(raised.value) == f"{folder}: {said}"


async def test_a_tasks_file_without_tasks_says_so(tmp_path: Path) -> None:
    """An empty file (the wrong one, or a generator that made none) ran nothing, unsaid."""
    (tmp_path / "tasks.jsonl").write_text("\n  \n")
    async with TaskLlm(lambda prompt, n: {"text": "answer"}) as llm:
        run = await batch(tmp_path, llm, "tasks.jsonl", "--out", "out.jsonl")
    said = "paicli batch: tasks.jsonl: no tasks (a task is a JSON object on a line of its own)"
    assert (run.code, run.stdout, run.stderr.splitlines()) == (0, "", [said])
    assert not (tmp_path / "out.jsonl").exists()
