"""Headless runs, many times over: does `paicli -p --output-format stream-json` ever crash,
and does any run import in two threads at once?

    .venv/bin/python bench/headless_stress.py [--runs N] [--server]

Each run is a fresh process answering the scripted model on 127.0.0.1, its imports watched
(tests/import_watch.py): Python 3.11's import locks can fail imports made by two threads at
once (gh-91351), rarely, so besides crashes (an exit code other than 0, a traceback, a
missing `result`) the script counts the runs in which a module was loaded while another
thread loaded one: the cause, seen whether or not it struck. `--server` configures one
stdio server, started while the model client loads. Set PYTHONPATH to stress another
checkout's source.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.import_watch import WatchedRun, watched_paicli  # noqa: E402
from tests.llm_server import ScriptedLlm  # noqa: E402

SERVER = ROOT / "tests" / "server_programs" / "fault_server.py"


def crashed(run: WatchedRun) -> str | None:
    """Why `run` counts as a crash, or None."""
    if run.returncode != 0:
        return f"exit {run.returncode}: {run.stderr.strip()[-300:]}"
    if "Traceback" in run.stderr:
        return run.stderr.strip()[-300:]
    last = run.stdout.strip().splitlines()[-1:] or ["{}"]
    if json.loads(last[0]).get("type") != "result":
        return "no result event"
    return None


async def stress(runs: int, server: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        (project / ".paicli").mkdir(parents=True)
        args = ["-p", "hi", "--output-format", "stream-json"]
        if server:
            entry = {"command": sys.executable, "args": [str(SERVER)]}
            config = {"mcpServers": {"fault": entry}}
            (project / ".paicli" / "mcp.json").write_text(json.dumps(config))
            args.append("--trust-project")
        crashes: list[str] = []
        clashing_runs = 0
        clashes: collections.Counter[str] = collections.Counter()
        async with ScriptedLlm([{"text": "ok"}] * runs) as llm:
            env = {
                **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},
                "PATH": os.environ.get("PATH", ""),
                "HOME": str(Path(tmp) / "home"),
                "PAICLI_HOME": str(Path(tmp) / "home" / ".paicli"),
                "PAICLI_API_KEY": "sk-bench-0000",
                "PAICLI_BASE_URL": llm.base_url,
                "PAICLI_MODEL": "scripted",
            }
            for _ in range(runs):
                run = await watched_paicli(
                    args, cwd=project, environ=env, report=Path(tmp) / "imports.jsonl"
                )
                if (why := crashed(run)) is not None:
                    crashes.append(why)
                if run.clashes:
                    clashing_runs += 1
                    clashes.update(f"{c['thread']}: {c['module']}" for c in run.clashes)
    return {
        "runs": runs,
        "server": server,
        "crashes": len(crashes),
        "runs_with_clashes": clashing_runs,
        "first_crashes": crashes[:3],
        "clashes": dict(clashes.most_common(5)),
        "load": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--server", action="store_true", help="one stdio server configured")
    options = parser.parse_args()
    figures = asyncio.run(stress(options.runs, options.server))
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
