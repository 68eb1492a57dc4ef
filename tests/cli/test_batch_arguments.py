"""How `paicli batch`'s command line is read (no process: the parser only)."""

from __future__ import annotations

import pytest

from paicli.cli import build_parser


@pytest.mark.parametrize(
    ("size", "said"),
    [
        ("inf", "'inf' is not a size like 4G"),
        ("1e400G", "'1e400G' is not a size like 4G"),  # a float, then infinite
        ("nan", "'nan' is not a size like 4G"),
        ("1e30", "'1e30' is more than any address space"),
        ("32M", "must be at least 64M"),
    ],
)
def test_a_task_memory_that_is_no_size_is_one_line(
    size: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["batch", "tasks.jsonl", "--task-memory", size])
    assert exited.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("paicli batch: error: argument --task-memory: ") and said in last


def test_a_task_memory_in_bytes_or_with_its_unit() -> None:
    for size, value in (("4G", 4 * 1024**3), ("512MiB", 512 * 1024**2), ("1.5g", 3 * 1024**3 // 2)):
        options = build_parser().parse_args(["batch", "t.jsonl", "--task-memory", size])
        assert options.task_memory == value
