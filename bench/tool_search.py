"""Tool search: how often the right tool is in the top 1 and top 5, and what a search costs.

    .venv/bin/python bench/tool_search.py

On the 114 tool definitions of the MCP reference servers (tests/tools/data/) with the queries
written for them: the tuned set (52 queries, looked at while choosing the synonyms) and the
held-out set (25 queries, written afterwards).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.tools.search_data import HELD_OUT, TUNED, evaluate, reference_specs

from paicli.tools.search.index import ToolIndex
from paicli.tools.search.offer import definition_tokens


def main() -> None:
    specs = reference_specs()
    started = time.perf_counter()
    index = ToolIndex(specs)
    built = time.perf_counter() - started
    print(f"{len(specs)} tools, {definition_tokens(specs):,} tokens of definitions")
    print(f"index built in {built * 1000:.1f} ms")
    for name, queries in (("tuned", TUNED), ("held-out", HELD_OUT)):
        started = time.perf_counter()
        score = evaluate(index, queries)
        each = (time.perf_counter() - started) / score.queries
        print(
            f"{name:>9}: top-1 {score.top1}/{score.queries} ({score.top1 / score.queries:.0%}), "
            f"top-5 {score.top5}/{score.queries} ({score.top5 / score.queries:.0%}), "
            f"{each * 1000:.2f} ms a search; missed: {list(score.misses)}"
        )


if __name__ == "__main__":
    main()
