"""A server's stderr log file: each line starts with the time it arrived, once however the
line arrives in pieces, and a line an earlier run left unfinished is never stamped inside."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from pathlib import Path

from paicli.mcp._stderr import StderrLog, log_time


def clock() -> Callable[[], bytes]:
    """A clock that says T1, T2, ... one tick per stamp asked for."""
    ticks = itertools.count(1)
    return lambda: b"T%d " % next(ticks)


def test_each_line_starts_with_the_time_its_first_bytes_came(tmp_path: Path) -> None:
    path = tmp_path / "s.log"
    log = StderrLog(str(path), clock=clock())
    log.write(b"one\ntwo\nthr")  # T1: two lines and the start of a third
    log.write(b"ee\n")  # T2: the end of a line begun at T1
    log.write(b"")  # nothing written, no stamp
    log.write(b"\n\r\nfour")  # T3: an empty line, a carriage return kept as written
    log.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[:3] == [b"T1 one", b"T1 two", b"T1 three"]
    assert lines[3:] == [b"T3 ", b"T3 \r", b"T3 four"]


def test_a_line_an_earlier_run_left_unfinished_is_ended_first(tmp_path: Path) -> None:
    path = tmp_path / "s.log"
    path.write_bytes(b"----- paicli: s started -----\nhalf a li")
    log = StderrLog(str(path), clock=lambda: b"T ")
    log.write(b"new\n")
    log.close()
    assert path.read_bytes() == b"----- paicli: s started -----\nhalf a li\nT new\n"


def test_rotation_keeps_the_stamps_and_the_line_in_progress(tmp_path: Path) -> None:
    path = tmp_path / "s.log"
    log = StderrLog(str(path), max_bytes=20, clock=lambda: b"T ")
    log.write(b"0123456789012345678901")  # past the limit mid-line: rotated
    log.write(b"end\nnext\n")
    log.close()
    assert Path(str(path) + ".1").read_bytes() == b"T 0123456789012345678901"
    assert path.read_bytes() == b"end\nT next\n"


def test_the_real_time_is_a_dated_local_time_to_the_millisecond() -> None:
    assert re.fullmatch(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} ", log_time())


def test_a_filter_sees_whole_lines_even_when_they_arrive_in_pieces(tmp_path: Path) -> None:
    path = tmp_path / "server.log"
    log = StderrLog(str(path), clock=lambda: b"T ", line_filter=lambda s: s.replace("key", "***"))
    log.write(b"the k")
    log.write(b"ey is \xff here\nand k")
    log.write(b"ey at the end")
    log.close()
    assert path.read_bytes() == b"T the *** is \xff here\nT and *** at the end"
