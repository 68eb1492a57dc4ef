"""The tasks file read and checked (`paicli.batch.tasks`): in memory, on files in tmp_path.
A task file may be written from data nobody reviewed: every attack here is one line's
problem, named by its line number, and never a file name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from paicli.batch.tasks import MAX_PROMPT, Task, TaskFileError, read_tasks


def read(tmp_path: Path, *lines: object) -> tuple[list[Task], list[str]]:
    path = tmp_path / "tasks.jsonl"
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("".join(f"{line}\n" for line in text))
    return read_tasks(path)


def test_a_full_task_line_is_read_with_its_folder_made_absolute(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    line = {
        "id": "fix-1",
        "prompt": "fix it",
        "cwd": "proj",
        "model": "m",
        "permission_mode": "acceptEdits",
        "allow": ["read_file"],
        "deny": ["execute_command(rm:*)"],
        "mcpServers": {"s": {"command": "x"}},
        "max_turns": 3,
    }
    tasks, problems = read(tmp_path, line)
    assert problems == []
    task = tasks[0]
    assert (task.id, task.line, task.folder) == ("fix-1", 1, str(tmp_path / "proj"))
    assert task.permission_mode == "accept-edits" and task.max_turns == 3
    assert Task.from_wire(json.loads(json.dumps(task.to_wire()))) == task


def test_a_prompt_with_an_unpaired_surrogate_is_a_task(tmp_path: Path) -> None:
    """JSON can spell one (`\\udcff`): the conversation replaces it (`whole_text`); the
    prompt's size check raised on it ("'utf-8' codec can't encode...")."""
    tasks, problems = read(tmp_path, '{"prompt": "odd \\udcff"}')
    assert (problems, [task.prompt for task in tasks]) == ([], ["odd \udcff"])


def test_a_task_without_an_id_is_named_by_its_line(tmp_path: Path) -> None:
    tasks, _ = read(tmp_path, "", {"prompt": "a"})
    assert tasks[0].id == "line-2"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("[1, 2]", "a task is a JSON object"),
        ("{oops", "not JSON"),
        ("[" * 100_000, "not JSON (nested too deeply)"),
        ('{"prompt": "x", "mcpServers": {"s": ' + "[" * 100_000 + "}}", "not JSON"),
        ({"prompt": ""}, "'prompt' must be a non-empty string"),
        ({"prompt": "x", "cwd": "../.."}, "leaves the tasks file's folder"),
        ({"prompt": "x", "cwd": "a/../../b"}, "leaves the tasks file's folder"),
        ({"prompt": "x", "id": "../../etc/passwd"}, "'id' must be"),
        ({"prompt": "x", "id": ".hidden"}, "'id' must be"),
        ({"prompt": "x", "id": "a\nb"}, "'id' must be"),
        ({"prompt": "x", "id": 7}, "'id' must be"),
        ({"prompt": "x", "repo": ".", "ref": "--upload-pack=evil"}, "'ref' must be"),
        ({"prompt": "x", "ref": "main"}, "'ref' must be"),
        ({"prompt": "x", "cwd": ".", "repo": "."}, "not both"),
        ({"prompt": "x", "permission_mode": "godmode"}, "unknown permission mode"),
        ({"prompt": "x", "allow": "read_file"}, "'allow' must be a list"),
        ({"prompt": "x", "deny": ["execute_command()"]}, "'deny' rule"),
        ({"prompt": "x", "mcpServers": []}, "'mcpServers' must be an object"),
        ({"prompt": "x", "model": "m\x1b[2J"}, "'model' must be a printable string"),
        ({"prompt": "x", "max_turns": 0}, "'max_turns' must be"),
        ({"prompt": "x", "shell": "rm -rf /"}, "unknown field 'shell'"),
        ({"prompt": "x" * (MAX_PROMPT + 1)}, "'prompt' is longer than 1024 KiB"),
    ],
)
def test_a_bad_line_is_one_problem_naming_it_and_the_rest_are_read(
    tmp_path: Path, line: object, problem: str
) -> None:
    tasks, problems = read(tmp_path, {"prompt": "first"}, line, {"prompt": "third"})
    assert [task.line for task in tasks] == [1, 3]
    assert len(problems) == 1
    assert problems[0].startswith("tasks.jsonl:2: ")
    assert problem in problems[0]


def test_a_link_out_of_the_tasks_folder_is_refused_like_dot_dot(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "tasks" / "out").symlink_to(tmp_path / "elsewhere")
    path = tmp_path / "tasks" / "t.jsonl"
    path.write_text(json.dumps({"prompt": "x", "cwd": "out"}) + "\n")
    tasks, problems = read_tasks(path)
    assert tasks == []
    assert problems == ["t.jsonl:1: 'cwd' 'out' leaves the tasks file's folder"]


def test_a_folder_that_is_a_loop_of_links_is_its_line_s_problem(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    tasks, problems = read(tmp_path, {"prompt": "x", "cwd": "loop"}, {"prompt": "after"})
    assert [task.prompt for task in tasks] == ["after"]
    assert len(problems) == 1
    assert problems[0].startswith("tasks.jsonl:1: 'cwd' 'loop' cannot be followed")


def test_an_id_used_twice_is_a_problem_of_the_second_line(tmp_path: Path) -> None:
    tasks, problems = read(tmp_path, {"id": "a", "prompt": "x"}, {"id": "a", "prompt": "y"})
    assert [task.prompt for task in tasks] == ["x"]
    assert problems == ["tasks.jsonl:2: id 'a' is line 1's too"]


def test_a_line_over_the_limit_is_skipped_whole(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    with path.open("w") as file:
        file.write('{"prompt": "' + "x" * (4 * MAX_PROMPT) + '"}\n')
        file.write('{"prompt": "after"}\n')
    tasks, problems = read_tasks(path)
    assert [task.prompt for task in tasks] == ["after"]
    assert [task.line for task in tasks] == [2]
    assert problems == ["tasks.jsonl:1: the line is longer than 2 MiB"]


def test_a_tasks_file_that_is_not_a_file_stops_the_batch(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match=r"cannot read: No such file"):
        read_tasks(tmp_path / "missing.jsonl")
    with pytest.raises(TaskFileError, match="not a regular file"):
        read_tasks(tmp_path)
    os.mkfifo(tmp_path / "fifo.jsonl")  # nobody writes it: an open that blocked would hang
    with pytest.raises(TaskFileError, match="not a regular file"):
        read_tasks(tmp_path / "fifo.jsonl")
