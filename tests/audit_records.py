"""The audit log's records as tests read them: each JSON line of every file in a folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def audit_records(folder: Path, *, sessions: bool = False) -> list[dict[str, Any]]:
    """The records in `folder`'s `*.jsonl` files, in file order: the tool calls (and tool
    changes), and the session start and end records too when `sessions`."""
    records = [
        json.loads(line)
        for path in sorted(folder.glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    if sessions:
        return records
    return [r for r in records if not str(r.get("event", "")).startswith("session_")]
