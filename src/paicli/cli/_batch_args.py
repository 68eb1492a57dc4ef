"""`paicli batch`'s arguments."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

__all__ = ["batch_command", "memory_size", "positive_float"]

# The largest address-space limit the system takes (a C long); a size past it is a typo.
MAX_MEMORY = 2**63 - 1


def batch_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    positive_int: Callable[[str], int],
) -> None:
    """`paicli batch TASKS.jsonl`: many runs, on this machine or a Ray cluster."""
    batch = commands.add_parser(
        "batch",
        help="run each task of a JSON-lines file as its own paicli -p run, in its own copy "
        "of its folder; results as JSON lines (model flags go before `batch`)",
    )
    batch.add_argument("tasks", metavar="TASKS.jsonl", help="one task per line (see README)")
    batch.add_argument(
        "--workers", type=positive_int, help="tasks run at once (default: the CPU count, at most 8)"
    )
    batch.add_argument("--out", metavar="RESULTS.jsonl", help="results file (default: stdout)")
    batch.add_argument(
        "--resume-batch",
        action="store_true",
        help="carry on RESULTS.jsonl: skip the tasks that have a result there",
    )
    batch.add_argument(
        "--task-timeout",
        type=positive_float,
        default=3600.0,
        metavar="S",
        help="fail a task not finished after S seconds, its processes killed (default 3600)",
    )
    batch.add_argument(
        "--task-memory",
        type=memory_size,
        metavar="SIZE",
        help="each worker's address-space limit (e.g. 4G); a task over it fails alone",
    )
    batch.add_argument(
        "--ray",
        nargs="?",
        const="auto",
        metavar="ADDRESS",
        help="run on a Ray cluster (auto: the one `ray start` made here; needs paicli-cli[ray])",
    )


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def memory_size(text: str) -> int:
    """`4G`, `512M`, `100000K` or bytes."""
    units = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
    plain = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = units.get(plain[-1:], 1)
    try:
        number = float(plain[:-1] if scale > 1 else plain)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like 4G or 512M")
    value = int(number * scale)
    if value < 64 * 1024**2:
        raise argparse.ArgumentTypeError("must be at least 64M (a worker needs that to start)")
    if value > MAX_MEMORY:
        raise argparse.ArgumentTypeError(f"{text!r} is more than any address space (8E)")
    return value
