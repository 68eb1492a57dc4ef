"""Example MCP server: the time, and a sleep that reports progress and can be cancelled.

`sleep` runs in a background thread (see `_mcp_stdio`), sends `notifications/progress` about
once a second when the request carries a progress token, and stops at once on
`notifications/cancelled`, logging `cancelled request <id>` to stderr. Stdlib only; run it by
hand with `python3 timer.py`.
"""

from __future__ import annotations

import time
from datetime import datetime

# Run as a script, this file's folder is on sys.path, so the shared helper imports directly.
from _mcp_stdio import Call, Json, Server, Tool

MAX_SLEEP = 600  # ten minutes: long enough to demonstrate cancellation, short of a hang
PROGRESS_INTERVAL = 1.0  # seconds between progress notifications
MAX_COUNTDOWN = 100


def now(arguments: Json, call: Call) -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def sleep(arguments: Json, call: Call) -> str:
    seconds = float(arguments["seconds"])
    start = time.monotonic()
    deadline = start + seconds
    reported = 0.0
    while (left := deadline - time.monotonic()) > 0:
        # Waiting on the event, not time.sleep, so a cancellation ends the wait at once.
        if call.cancelled.wait(min(PROGRESS_INTERVAL, left)):
            return "cancelled"
        elapsed = round(min(time.monotonic() - start, seconds), 2)
        if elapsed > reported:  # progress must increase; rounding could repeat a value
            reported = elapsed
            call.progress(elapsed, seconds, f"slept {elapsed:.1f} of {seconds:g} s")
    return f"Slept {seconds:g} seconds."


def countdown(arguments: Json, call: Call) -> str:
    return "\n".join(str(i) for i in range(arguments["n"], 0, -1))


def main() -> None:
    server = Server(
        "paicli-example-timer",
        "0.1.0",
        capabilities={},
        instructions="Tells the time; `sleep` shows progress and cancellation.",
    )
    seconds: Json = {"type": "number", "minimum": 0, "maximum": MAX_SLEEP}
    count: Json = {"type": "integer", "minimum": 1, "maximum": MAX_COUNTDOWN}
    server.add_tools(
        Tool(
            "now",
            "The current local date and time, ISO 8601 with UTC offset.",
            {"type": "object", "properties": {}, "required": []},
            now,
            read_only=True,
        ),
        Tool(
            "sleep",
            f"Wait `seconds` (0-{MAX_SLEEP}), reporting progress every second.",
            {"type": "object", "properties": {"seconds": seconds}, "required": ["seconds"]},
            sleep,
            background=True,
        ),
        Tool(
            "countdown",
            f"Count down from n (1-{MAX_COUNTDOWN}) to 1, one number per line.",
            {"type": "object", "properties": {"n": count}, "required": ["n"]},
            countdown,
            read_only=True,
        ),
    )
    try:
        server.serve()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
