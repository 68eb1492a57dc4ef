"""The file and search tools on real files: happy paths, errors, caps, atomic writes."""

from __future__ import annotations

import asyncio
import os
import tracemalloc
from collections.abc import Mapping
from pathlib import Path

import pytest

from paicli.tools.base import ToolOutcome
from paicli.tools.builtin import files as _files
from paicli.tools.builtin.files import NotRegularFile, open_regular
from paicli.tools.builtin.toolbox import BuiltinToolbox
from paicli.tools.builtin.walk import SearchLimits
from paicli.tools.builtin.writes import MAX_WRITE_BYTES, replace_at


async def run(toolbox: BuiltinToolbox, name: str, arguments: Mapping[str, object]) -> ToolOutcome:
    spec = next(s for s in toolbox.specs() if s.name == name)
    early = toolbox.precheck(spec, arguments)
    return early if early is not None else await toolbox.call(spec, arguments)


@pytest.fixture
def toolbox(tmp_path: Path) -> BuiltinToolbox:
    return BuiltinToolbox(tmp_path)


def test_every_tool_has_a_closed_object_schema_and_the_right_kind(
    toolbox: BuiltinToolbox,
) -> None:
    kinds = {spec.name: spec.kind for spec in toolbox.specs()}
    assert kinds == {
        "read_file": "read",
        "write_file": "write",
        "edit_file": "write",
        "list_dir": "read",
        "glob": "read",
        "grep": "read",
        "execute_command": "execute",
    }
    for spec in toolbox.specs():
        assert spec.parameters["type"] == "object"
        assert spec.parameters["additionalProperties"] is False
        assert isinstance(spec.parameters["required"], list)
        assert spec.description


# -- read_file -------------------------------------------------------------------------------


async def test_read_file_numbers_the_lines(tmp_path: Path, toolbox: BuiltinToolbox) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    outcome = await run(toolbox, "read_file", {"path": "a.txt"})
    assert not outcome.is_error
    assert outcome.text == "     1\tone\n     2\ttwo\n     3\tthree"


async def test_read_file_pages_with_offset_and_limit(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    outcome = await run(toolbox, "read_file", {"path": "a.txt", "offset": 4, "limit": 2})
    assert outcome.text.splitlines()[:2] == ["     4\tline 4", "     5\tline 5"]
    assert "call read_file with offset=6" in outcome.text


async def test_read_file_caps_its_output_and_says_how_to_read_on(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{'x' * 90} {n}\n" for n in range(1000)))
    outcome = await run(
        BuiltinToolbox(tmp_path, max_output_chars=1000), "read_file", {"path": "big.txt"}
    )
    assert len(outcome.text) < 1200
    assert "of 1000" in outcome.text
    assert "call read_file with offset=" in outcome.text
    assert outcome.truncated


async def test_read_file_refuses_binary_files(tmp_path: Path, toolbox: BuiltinToolbox) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02")
    outcome = await run(toolbox, "read_file", {"path": "blob.bin"})
    assert outcome.is_error
    assert "blob.bin" in outcome.text and "binary" in outcome.text


async def test_read_file_reports_text_that_is_not_utf8(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "latin.txt").write_bytes("café".encode("latin-1"))
    outcome = await run(toolbox, "read_file", {"path": "latin.txt"})
    assert outcome.is_error
    assert "latin.txt is not UTF-8" in outcome.text


async def test_read_file_of_a_missing_file_names_the_path(toolbox: BuiltinToolbox) -> None:
    outcome = await run(toolbox, "read_file", {"path": "nope/missing.txt"})
    assert outcome.is_error
    assert "nope/missing.txt" in outcome.text
    assert "No such file" in outcome.text


async def test_read_file_of_a_directory_points_to_list_dir(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "d").mkdir()
    outcome = await run(toolbox, "read_file", {"path": "d"})
    assert outcome.is_error and "list_dir" in outcome.text


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "'path' is a required property"),
        ({"path": 3}, "is not of type 'string'"),
        ({"path": "a", "offset": "2"}, "is not of type 'integer'"),
        ({"path": "a", "colour": "red"}, "Additional properties"),
    ],
)
async def test_arguments_breaking_the_schema_are_refused_as_invalid(
    toolbox: BuiltinToolbox, arguments: dict[str, object], expected: str
) -> None:
    outcome = await run(toolbox, "read_file", arguments)
    assert outcome.is_error
    assert outcome.decided_by == "validation"
    assert expected in outcome.text


async def test_a_null_optional_argument_counts_as_left_out(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    outcome = await run(toolbox, "read_file", {"path": "a.txt", "offset": None, "limit": None})
    assert outcome.text == "     1\tone"


# -- write_file ------------------------------------------------------------------------------


async def test_write_file_creates_parent_directories(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    outcome = await run(toolbox, "write_file", {"path": "new/dir/f.txt", "content": "hi\n"})
    assert not outcome.is_error
    assert "Created new/dir/f.txt" in outcome.text
    assert (tmp_path / "new/dir/f.txt").read_text() == "hi\n"


async def test_write_file_replaces_content_and_keeps_the_mode(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    target = tmp_path / "run.sh"
    target.write_text("old")
    target.chmod(0o755)
    outcome = await run(toolbox, "write_file", {"path": "run.sh", "content": "new"})
    assert "Overwrote run.sh" in outcome.text
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o755
    assert os.listdir(tmp_path) == ["run.sh"]


async def test_write_file_refuses_content_over_five_megabytes(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    outcome = await run(
        toolbox, "write_file", {"path": "big.txt", "content": "x" * (MAX_WRITE_BYTES + 1)}
    )
    assert outcome.is_error
    assert "5 MB" in outcome.text
    assert not (tmp_path / "big.txt").exists()


async def test_write_file_accepts_exactly_five_megabytes(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    outcome = await run(
        toolbox, "write_file", {"path": "big.txt", "content": "x" * MAX_WRITE_BYTES}
    )
    assert not outcome.is_error
    assert (tmp_path / "big.txt").stat().st_size == MAX_WRITE_BYTES


async def test_a_failed_replace_leaves_the_target_and_no_temporary_file(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "keep.txt").write_text("kept")
    # write_file itself refuses a directory target; edit_file's atomic write is the same code.
    outcome = await run(toolbox, "write_file", {"path": "target", "content": "x"})
    assert outcome.is_error and "target" in outcome.text
    with pytest.raises(IsADirectoryError), toolbox.paths.open_dir(tmp_path) as folder:
        replace_at(folder, "target", b"x", keep=None)
    assert (tmp_path / "target" / "keep.txt").read_text() == "kept"
    assert sorted(os.listdir(tmp_path)) == ["target"]


async def test_content_that_cannot_be_written_leaves_the_old_file_intact(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "f.txt").write_text("old")
    outcome = await run(toolbox, "write_file", {"path": "f.txt", "content": "bad \udc80"})
    assert outcome.is_error and "f.txt" in outcome.text
    assert (tmp_path / "f.txt").read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]


# -- edit_file -------------------------------------------------------------------------------


async def test_edit_file_replaces_a_unique_string(tmp_path: Path, toolbox: BuiltinToolbox) -> None:
    (tmp_path / "f.py").write_bytes(b"a = 1\r\nb = 2\r\n")
    outcome = await run(
        toolbox, "edit_file", {"path": "f.py", "old_string": "b = 2", "new_string": "b = 3"}
    )
    assert outcome.text == "Replaced 1 occurrence in f.py"
    assert (tmp_path / "f.py").read_bytes() == b"a = 1\r\nb = 3\r\n"


async def test_edit_file_counts_ambiguous_matches(tmp_path: Path, toolbox: BuiltinToolbox) -> None:
    (tmp_path / "f.txt").write_text("x\nx\nx\n")
    outcome = await run(
        toolbox, "edit_file", {"path": "f.txt", "old_string": "x", "new_string": "y"}
    )
    assert outcome.is_error
    assert "occurs 3 times in f.txt" in outcome.text
    assert (tmp_path / "f.txt").read_text() == "x\nx\nx\n"


async def test_edit_file_replaces_all_when_asked(tmp_path: Path, toolbox: BuiltinToolbox) -> None:
    (tmp_path / "f.txt").write_text("x\nx\nx\n")
    outcome = await run(
        toolbox,
        "edit_file",
        {"path": "f.txt", "old_string": "x", "new_string": "y", "replace_all": True},
    )
    assert outcome.text == "Replaced 3 occurrences in f.txt"
    assert (tmp_path / "f.txt").read_text() == "y\ny\ny\n"


async def test_edit_file_reports_a_missing_string(tmp_path: Path, toolbox: BuiltinToolbox) -> None:
    (tmp_path / "f.txt").write_text("hello\n")
    outcome = await run(
        toolbox, "edit_file", {"path": "f.txt", "old_string": "bye", "new_string": "x"}
    )
    assert outcome.is_error and "not found in f.txt" in outcome.text


async def test_edit_file_rejects_identical_strings(tmp_path: Path, toolbox: BuiltinToolbox) -> None:
    (tmp_path / "f.txt").write_text("hello\n")
    outcome = await run(
        toolbox, "edit_file", {"path": "f.txt", "old_string": "hello", "new_string": "hello"}
    )
    assert outcome.is_error and "identical" in outcome.text


# -- list_dir --------------------------------------------------------------------------------


async def test_list_dir_sorts_and_marks_directories(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "b.txt").write_text("")
    (tmp_path / "a").mkdir()
    (tmp_path / "c.txt").write_text("")
    outcome = await run(toolbox, "list_dir", {})
    assert outcome.text == "a/\nb.txt\nc.txt"


async def test_list_dir_caps_long_listings(tmp_path: Path) -> None:
    for n in range(200):
        (tmp_path / f"file{n:03}.txt").write_text("")
    outcome = await run(BuiltinToolbox(tmp_path, max_output_chars=200), "list_dir", {"path": "."})
    assert outcome.text.startswith("file000.txt\n")
    assert "more entries not shown" in outcome.text
    assert outcome.truncated


async def test_list_dir_of_a_file_is_an_error(tmp_path: Path, toolbox: BuiltinToolbox) -> None:
    (tmp_path / "f.txt").write_text("")
    outcome = await run(toolbox, "list_dir", {"path": "f.txt"})
    assert outcome.is_error and "f.txt is not a directory" in outcome.text


# -- glob ------------------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in [
        "top.py",
        "src/pkg/mod.py",
        "src/pkg/data.json",
        "src/pkg/__pycache__/mod.cpython-311.pyc",
        ".git/hooks/x.py",
        "node_modules/lib/index.py",
        ".venv/lib/site.py",
        "docs/readme.md",
    ]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"print('{name}')\n")
    (tmp_path / "blob.bin").write_bytes(b"print\x00binary")
    return tmp_path


async def test_glob_finds_files_recursively_and_skips_noise(
    tree: Path, toolbox: BuiltinToolbox
) -> None:
    outcome = await run(toolbox, "glob", {"pattern": "**/*.py"})
    assert outcome.text == "src/pkg/mod.py\ntop.py"


async def test_glob_star_stays_in_one_directory(tree: Path, toolbox: BuiltinToolbox) -> None:
    outcome = await run(toolbox, "glob", {"pattern": "*.py"})
    assert outcome.text == "top.py"


async def test_glob_below_a_path_reports_paths_from_the_root(
    tree: Path, toolbox: BuiltinToolbox
) -> None:
    outcome = await run(toolbox, "glob", {"pattern": "*", "path": "src/pkg"})
    assert outcome.text == "src/pkg/data.json\nsrc/pkg/mod.py"


async def test_glob_without_matches_says_so(tree: Path, toolbox: BuiltinToolbox) -> None:
    outcome = await run(toolbox, "glob", {"pattern": "**/*.rs"})
    assert not outcome.is_error and "no paths match" in outcome.text


async def test_glob_rejects_patterns_climbing_out(tree: Path, toolbox: BuiltinToolbox) -> None:
    outcome = await run(toolbox, "glob", {"pattern": "../*"})
    assert outcome.is_error and "must be relative" in outcome.text


# -- grep ------------------------------------------------------------------------------------


async def test_grep_prints_file_line_and_text(tree: Path, toolbox: BuiltinToolbox) -> None:
    outcome = await run(toolbox, "grep", {"pattern": r"mod\.py"})
    assert outcome.text == "src/pkg/mod.py:1: print('src/pkg/mod.py')"


async def test_grep_filters_by_glob_and_ignores_case(tree: Path, toolbox: BuiltinToolbox) -> None:
    outcome = await run(
        toolbox, "grep", {"pattern": "PRINT", "glob": "*.md", "case_insensitive": True}
    )
    assert outcome.text == "docs/readme.md:1: print('docs/readme.md')"


async def test_grep_skips_binary_files_and_noise_directories(
    tree: Path, toolbox: BuiltinToolbox
) -> None:
    outcome = await run(toolbox, "grep", {"pattern": "print"})
    files = {line.split(":")[0] for line in outcome.text.splitlines()}
    assert files == {"top.py", "src/pkg/mod.py", "src/pkg/data.json", "docs/readme.md"}


async def test_grep_does_not_read_files_linked_from_outside(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("password=hunter2\n")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    outcome = await run(BuiltinToolbox(root), "grep", {"pattern": "password"})
    assert "hunter2" not in outcome.text


async def test_grep_names_a_bad_regex(tree: Path, toolbox: BuiltinToolbox) -> None:
    outcome = await run(toolbox, "grep", {"pattern": "("})
    assert outcome.is_error
    assert "invalid regular expression '('" in outcome.text
    assert "missing )" in outcome.text


async def test_grep_caps_many_matches(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("hit\n" * 5000)
    outcome = await run(BuiltinToolbox(tmp_path, max_output_chars=2000), "grep", {"pattern": "hit"})
    assert len(outcome.text) < 2200
    assert "not shown" in outcome.text


# -- search budgets: a search over a huge tree stops and says so ------------------------------


@pytest.fixture
def wide(tmp_path: Path) -> Path:
    """40 folders of 10 files, each with one line "needle"."""
    for d in range(40):
        folder = tmp_path / f"d{d:02}"
        folder.mkdir()
        for f in range(10):
            (folder / f"f{f}.txt").write_text("needle\n")
    return tmp_path


class StepClock:
    """A clock that moves one second each time it is read: no wall-clock time involved."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("tool", ["glob", "grep"])
async def test_a_search_stops_at_its_entry_budget_and_says_so(wide: Path, tool: str) -> None:
    toolbox = BuiltinToolbox(wide, search_limits=SearchLimits(entries=50))
    arguments = {"pattern": "**/*.txt"} if tool == "glob" else {"pattern": "needle"}
    outcome = await run(toolbox, tool, arguments)
    assert not outcome.is_error and outcome.truncated
    lines = outcome.text.splitlines()
    assert lines[-1] == (
        "[stopped after 50 files and folders (the budget of 50 entries); the results are "
        "partial; narrow the path or the pattern]"
    )
    assert 0 < len(lines) - 1 < 50  # what was found before the stop is kept


@pytest.mark.parametrize("tool", ["glob", "grep"])
async def test_a_search_stops_at_its_time_budget_and_says_so(wide: Path, tool: str) -> None:
    limits = SearchLimits(seconds=30, clock=StepClock())
    toolbox = BuiltinToolbox(wide, search_limits=limits)
    arguments = {"pattern": "**/*.txt"} if tool == "glob" else {"pattern": "needle"}
    outcome = await run(toolbox, tool, arguments)
    assert outcome.truncated
    assert "(the time budget of 30 s); the results are partial" in outcome.text
    assert len(outcome.text.splitlines()) < 40


async def test_a_search_with_nothing_found_before_the_budget_says_it_stopped(
    wide: Path,
) -> None:
    toolbox = BuiltinToolbox(wide, search_limits=SearchLimits(entries=5))
    outcome = await run(toolbox, "grep", {"pattern": "absent"})
    assert outcome.text.startswith("no matches for 'absent'\n[stopped after 5 files and folders")


async def test_a_search_within_its_budget_has_no_note(wide: Path) -> None:
    outcome = await run(BuiltinToolbox(wide), "glob", {"pattern": "**/*.txt"})
    assert len(outcome.text.splitlines()) == 400
    assert not outcome.truncated


# -- special files, sizes, line endings ------------------------------------------------------


async def test_read_file_refuses_a_named_pipe_instead_of_blocking(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    os.mkfifo(tmp_path / "pipe")
    async with asyncio.timeout(5):
        outcome = await run(toolbox, "read_file", {"path": "pipe"})
    assert outcome.is_error
    assert "\n" not in outcome.text
    assert "pipe" in outcome.text and "named pipe" in outcome.text


async def test_grep_and_glob_skip_a_named_pipe_in_the_tree(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "a.txt").write_text("needle\n")
    os.mkfifo(tmp_path / "pipe")
    async with asyncio.timeout(5):
        grepped = await run(toolbox, "grep", {"pattern": "needle"})
        globbed = await run(toolbox, "glob", {"pattern": "*"})
    assert grepped.text == "a.txt:1: needle"
    assert globbed.text == "a.txt"


async def test_grep_on_a_named_pipe_is_an_error_not_a_hang(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    os.mkfifo(tmp_path / "pipe")
    async with asyncio.timeout(5):
        outcome = await run(toolbox, "grep", {"pattern": "x", "path": "pipe"})
    assert outcome.is_error and "pipe is neither a regular file" in outcome.text


def test_open_regular_refuses_a_fifo_swapped_in_after_the_check(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotRegularFile, match="named pipe"):
        open_regular(BuiltinToolbox(tmp_path).paths, tmp_path / "pipe")


def test_read_file_streams_a_large_file_without_holding_it(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        for _ in range(12):
            f.write(b"0123456789abcdef\n" * 65536)  # 12 x 1 MiB
    toolbox = BuiltinToolbox(tmp_path)
    tracemalloc.start()
    try:
        outcome = _files.read_file(toolbox.paths, big, {"limit": 3}, 30_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.text.splitlines()[:3] == [
        "     1\t0123456789abcdef",
        "     2\t0123456789abcdef",
        "     3\t0123456789abcdef",
    ]
    assert f"of {12 * 65536}" in outcome.text
    assert peak < 4 * 1024 * 1024, peak


def test_read_file_of_a_huge_file_says_more_lines_follow_without_counting(
    tmp_path: Path,
) -> None:
    huge = tmp_path / "huge.log"
    huge.write_bytes(b"x\n" * (_files.COUNT_LINES_MAX_BYTES // 2 + 10))
    toolbox = BuiltinToolbox(tmp_path)
    outcome = _files.read_file(toolbox.paths, huge, {"offset": 2, "limit": 2}, 30_000)
    assert outcome.text == (
        "     2\tx\n     3\tx\n"
        "[showing lines 2-3; more lines follow; call read_file with offset=4 to read further]"
    )
    assert outcome.truncated


async def test_read_file_cuts_a_very_long_line_and_numbers_the_next(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "min.js").write_text("é" * 1_000_000 + "\nnext\n")
    outcome = await run(toolbox, "read_file", {"path": "min.js"})
    first, second = outcome.text.splitlines()[:2]
    assert first == "     1\t" + "é" * _files.MAX_LINE_CHARS + " [line cut]"
    assert second == "     2\tnext"


async def test_read_file_past_the_end_names_the_line_count(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo")
    outcome = await run(toolbox, "read_file", {"path": "a.txt", "offset": 5})
    assert outcome.is_error and "a.txt has 2 lines; offset 5 is past the end" in outcome.text


async def test_edit_file_refuses_a_file_over_the_write_limit(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "big.txt").write_bytes(b"x" * (MAX_WRITE_BYTES + 1))
    outcome = await run(
        toolbox, "edit_file", {"path": "big.txt", "old_string": "xx", "new_string": "y"}
    )
    assert outcome.is_error and "5 MB limit of edit_file" in outcome.text
    assert (tmp_path / "big.txt").stat().st_size == MAX_WRITE_BYTES + 1


async def test_edit_file_refuses_a_replace_all_that_would_grow_past_the_limit(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "f.txt").write_text("ab\n" * 1000)
    outcome = await run(
        toolbox,
        "edit_file",
        {"path": "f.txt", "old_string": "a", "new_string": "z" * 6000, "replace_all": True},
    )
    assert outcome.is_error and "nothing was changed" in outcome.text
    assert (tmp_path / "f.txt").read_text() == "ab\n" * 1000


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
async def test_a_read_only_file_is_not_replaced(
    tmp_path: Path, toolbox: BuiltinToolbox, tool: str
) -> None:
    target = tmp_path / "locked.txt"
    target.write_text("old\n")
    target.chmod(0o444)
    arguments: dict[str, object] = (
        {"path": "locked.txt", "content": "new\n"}
        if tool == "write_file"
        else {"path": "locked.txt", "old_string": "old", "new_string": "new"}
    )
    outcome = await run(toolbox, tool, arguments)
    assert outcome.is_error and "locked.txt is read-only" in outcome.text
    assert target.read_text() == "old\n"


async def test_line_numbers_count_only_newlines(tmp_path: Path, toolbox: BuiltinToolbox) -> None:
    (tmp_path / "odd.txt").write_text("a\fb\u2028c\r\nneedle\n")
    read = await run(toolbox, "read_file", {"path": "odd.txt"})
    grepped = await run(toolbox, "grep", {"pattern": "needle|c$"})
    assert read.text == "     1\ta\fb\u2028c\n     2\tneedle"
    assert grepped.text == "odd.txt:1: a\fb\u2028c\nodd.txt:2: needle"


async def test_edit_file_matches_multiline_text_in_a_crlf_file(
    tmp_path: Path, toolbox: BuiltinToolbox
) -> None:
    (tmp_path / "f.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    outcome = await run(
        toolbox,
        "edit_file",
        {"path": "f.txt", "old_string": "one\ntwo\n", "new_string": "1\n2\n"},
    )
    assert outcome.text == "Replaced 1 occurrence in f.txt"
    assert (tmp_path / "f.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


@pytest.mark.parametrize("tool", ["glob", "grep"])
async def test_a_bad_glob_is_an_error_outcome(
    tree: Path, toolbox: BuiltinToolbox, tool: str
) -> None:
    arguments = {"pattern": "[z-a]"} if tool == "glob" else {"pattern": "x", "glob": "[z-a]"}
    outcome = await run(toolbox, tool, arguments)
    assert outcome.is_error and "invalid glob pattern '[z-a]'" in outcome.text


async def test_a_posix_class_in_a_glob_raises_no_warning(
    tree: Path, toolbox: BuiltinToolbox
) -> None:
    # pytest turns warnings into errors here; re warns about a nested set in `[[`.
    outcome = await run(toolbox, "glob", {"pattern": "[[:alpha:]]*"})
    assert not outcome.is_error
