"""Tables, ratios and pass/miss targets for a benchmark run (see run.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Result = dict[str, Any]
OURS, SDK, BARE, RAW = "paicli", "mcp-sdk", "bare", "raw-http"
TRACED, METERED = "paicli-trace", "paicli-metrics"


def table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    if not rows:
        print(f"\n{title}\n  (no clients measured)")
        return
    widths = [max(len(h), *(len(r[i]) for r in rows if i < len(r))) for i, h in enumerate(headers)]
    print(f"\n{title}")
    print(
        "  "
        + "  ".join(
            h.rjust(w) if i else h.ljust(w)
            for i, (h, w) in enumerate(zip(headers, widths, strict=True))
        )
    )
    for row in rows:
        if len(row) < len(headers):  # an error row: the message spans the remaining columns
            print(f"  {row[0].ljust(widths[0])}  {row[1]}")
        else:
            cells = (
                c.rjust(w) if i else c.ljust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
            print("  " + "  ".join(cells))


def rows_for(section: dict[str, Result], cells: Callable[[Result], list[str]]) -> list[list[str]]:
    rows = []
    for client, result in section.items():
        if "error" in result:
            rows.append([client, f"ERROR {result['error'][:150]}"])
        else:
            rows.append([client, *cells(result)])
    return rows


def ratio(section: dict[str, Result], key: str, num: str, den: str) -> float | None:
    a, b = section.get(num, {}).get(key), section.get(den, {}).get(key)
    return a / b if isinstance(a, int | float) and isinstance(b, int | float) and b else None


def print_tables(results: Result) -> None:
    imports, seq, conc, big = results["import"], results["seq"], results["conc"], results["big"]
    table(
        "1. Import time of the client module (fresh interpreter)",
        ["client", "median ms", "min ms", "max ms"],
        rows_for(
            imports,
            lambda r: [
                f"{r['median_ms']:.1f}",
                f"{min(r['runs_ms']):.1f}",
                f"{max(r['runs_ms']):.1f}",
            ],
        ),
    )
    calls = next((r["calls"] for r in seq.values() if "calls" in r), "?")
    table(
        f"2. Sequential echo calls ({calls} calls after warm-up)",
        ["client", "p50 us", "p99 us", "mean us", "calls/s", "connect ms"],
        rows_for(
            seq,
            lambda r: [
                f"{r['p50_us']:.0f}",
                f"{r['p99_us']:.0f}",
                f"{r['mean_us']:.0f}",
                f"{r['calls_per_s']:,.0f}",
                f"{r['connect_ms']:.0f}",
            ],
        ),
    )
    first = next((r for r in conc.values() if "calls" in r), {"calls": "?", "inflight": "?"})
    table(
        f"3. Throughput, {first['inflight']} calls in flight ({first['calls']} calls)",
        ["client", "calls/s", "x mcp-sdk"],
        rows_for(conc, lambda r: [f"{r['calls_per_s']:,.0f}", _fmt(ratio_to(conc, r, SDK))]),
    )
    table(
        "4. One big result (time: median of warm calls; RSS: peak rise in the first 10 MB call)",
        ["client", "10MB first s", "10MB s", "2MB s", "t10/t2", "peak RSS +MB", "/payload"],
        rows_for(
            big,
            lambda r: [
                f"{r['first_s']:.3f}",
                f"{r['big_s']:.3f}",
                f"{r['small_s']:.3f}",
                f"{r['linearity']:.1f}",
                f"{r['rss_delta_mb']:.1f}",
                f"{r['rss_delta_ratio']:.2f}x",
            ],
        ),
    )


def print_http_tables(results: Result) -> None:
    seq, conc = results.get("http_seq", {}), results.get("http_conc", {})
    calls = next((r["calls"] for r in seq.values() if "calls" in r), "?")
    table(
        f"5. HTTP: sequential echo calls ({calls} calls after warm-up; Streamable HTTP, "
        "JSON bodies, keep-alive)",
        [
            "client",
            "p50 us",
            "p99 us",
            "mean us",
            "calls/s",
            "x mcp-sdk",
            "x bare",
            "cpu us",
            "connect ms",
        ],
        rows_for(
            seq,
            lambda r: [
                f"{r['p50_us']:.0f}",
                f"{r['p99_us']:.0f}",
                f"{r['mean_us']:.0f}",
                f"{r['calls_per_s']:,.0f}",
                _fmt(ratio_to(seq, r, SDK)),
                _fmt(ratio_to(seq, r, BARE)),
                _cpu(r),
                f"{r['connect_ms']:.0f}",
            ],
        ),
    )
    first = next((r for r in conc.values() if "calls" in r), {"calls": "?", "inflight": "?"})
    table(
        f"6. HTTP: throughput, {first['inflight']} calls in flight ({first['calls']} calls)",
        ["client", "calls/s", "x mcp-sdk", "x bare", "cpu us"],
        rows_for(
            conc,
            lambda r: [
                f"{r['calls_per_s']:,.0f}",
                _fmt(ratio_to(conc, r, SDK)),
                _fmt(ratio_to(conc, r, BARE)),
                _cpu(r),
            ],
        ),
    )
    print(
        "  (bare: httpx.AsyncClient posting JSON-RPC; raw-http: raw asyncio sockets, no HTTP "
        "library - the ceiling; cpu us: the client process's CPU time a call, which a loaded "
        "machine disturbs less than calls/s)"
    )


def _cpu(result: Result) -> str:
    cpu = result.get("cpu_us")
    return "n/a" if cpu is None else f"{cpu:.0f}"


def ratio_to(section: dict[str, Result], result: Result, other: str) -> float | None:
    base = section.get(other, {}).get("calls_per_s")
    return result["calls_per_s"] / base if isinstance(base, int | float) and base else None


def _fmt(value: float | None, suffix: str = "x") -> str:
    return "n/a" if value is None else f"{value:.2f}{suffix}"


def print_failed_rounds(results: Result) -> None:
    for measurement in ("seq", "conc", "big", "http_seq", "http_conc"):
        for client, result in results.get(measurement, {}).items():
            failed = [r["error"] for r in result.get("rounds", []) if "error" in r]
            if failed and "error" not in result:
                print(f"  note: {measurement}/{client}: {len(failed)} round(s) failed: {failed[0]}")


def print_report(results: Result) -> tuple[Result, Result]:
    """Print every table, then the ratios and targets; return (ratios, targets) for the JSON."""
    print(
        f"\nmode {results['meta']['mode']}: call measurements are medians over "
        f"{results['meta']['config']['rounds']} rounds, one fresh worker + server each"
    )
    print_tables(results)
    print_http_tables(results)
    print_failed_rounds(results)
    imports, seq, conc, big = results["import"], results["seq"], results["conc"], results["big"]
    http_seq, http_conc = results.get("http_seq", {}), results.get("http_conc", {})
    ours_import = imports.get(OURS, {}).get("median_ms")
    ratios: Result = {
        "import_sdk_over_ours": ratio(imports, "median_ms", SDK, OURS),
        "seq_ours_over_sdk": ratio(seq, "calls_per_s", OURS, SDK),
        "conc_ours_over_sdk": ratio(conc, "calls_per_s", OURS, SDK),
        "big_time_ours_over_bare": ratio(big, "big_s", OURS, BARE),
        "big_time_ours_over_sdk": ratio(big, "big_s", OURS, SDK),
        "big_first_ours_over_bare": ratio(big, "first_s", OURS, BARE),
        "peak_rss_ours_over_payload": big.get(OURS, {}).get("rss_delta_ratio"),
        "linearity_ours": big.get(OURS, {}).get("linearity"),
        "http_seq_ours_over_sdk": ratio(http_seq, "calls_per_s", OURS, SDK),
        "http_conc_ours_over_sdk": ratio(http_conc, "calls_per_s", OURS, SDK),
        "http_seq_ours_over_bare": ratio(http_seq, "calls_per_s", OURS, BARE),
        "http_conc_ours_over_bare": ratio(http_conc, "calls_per_s", OURS, BARE),
        "http_seq_raw_over_ours": ratio(http_seq, "calls_per_s", RAW, OURS),
        "http_conc_raw_over_ours": ratio(http_conc, "calls_per_s", RAW, OURS),
        "http_seq_cpu_ours_over_raw": ratio(http_seq, "cpu_us", OURS, RAW),
        "http_conc_cpu_ours_over_raw": ratio(http_conc, "cpu_us", OURS, RAW),
        "seq_traced_over_ours": ratio(seq, "calls_per_s", TRACED, OURS),
        "seq_metered_over_ours": ratio(seq, "calls_per_s", METERED, OURS),
    }
    checks: dict[str, Check] = {
        "import paicli.mcp < 100 ms": (ours_import, 100.0, False),
        "sequential >= 2x mcp-sdk": (ratios["seq_ours_over_sdk"], 2.0, True),
        "64 in flight >= 15x mcp-sdk": (ratios["conc_ours_over_sdk"], 15.0, True),
        "10 MB time < 1.5x bare": (ratios["big_time_ours_over_bare"], 1.5, False),
        "10 MB peak RSS < 3x payload": (ratios["peak_rss_ours_over_payload"], 3.0, False),
        "HTTP sequential >= 4x mcp-sdk": (ratios["http_seq_ours_over_sdk"], 4.0, True),
        "HTTP 64 in flight >= 10x mcp-sdk": (ratios["http_conc_ours_over_sdk"], 10.0, True),
        "HTTP sequential raw-http < 1.5x": (ratios["http_seq_raw_over_ours"], 1.5, False),
        "tracing keeps >= 0.9x sequential": (ratios["seq_traced_over_ours"], 0.9, True),
    }
    print("\nRatios (paicli vs others)")
    labels = {
        "import_sdk_over_ours": "import time, mcp-sdk / paicli",
        "seq_ours_over_sdk": "sequential calls/s, paicli / mcp-sdk",
        "conc_ours_over_sdk": "64-in-flight calls/s, paicli / mcp-sdk",
        "big_time_ours_over_bare": "10 MB time (warm), paicli / bare",
        "big_first_ours_over_bare": "10 MB time (first call), paicli / bare",
        "big_time_ours_over_sdk": "10 MB time (warm), paicli / mcp-sdk",
        "peak_rss_ours_over_payload": "10 MB peak RSS increase, paicli / payload",
        "linearity_ours": "paicli time(10 MB) / time(2 MB) (linear = 5)",
        "http_seq_ours_over_sdk": "HTTP sequential calls/s, paicli / mcp-sdk",
        "http_conc_ours_over_sdk": "HTTP 64-in-flight calls/s, paicli / mcp-sdk",
        "http_seq_ours_over_bare": "HTTP sequential calls/s, paicli / bare httpx",
        "http_conc_ours_over_bare": "HTTP 64-in-flight calls/s, paicli / bare httpx",
        "http_seq_raw_over_ours": "HTTP sequential calls/s, raw-http / paicli",
        "http_conc_raw_over_ours": "HTTP 64-in-flight calls/s, raw-http / paicli",
        "http_seq_cpu_ours_over_raw": "HTTP sequential client CPU a call, paicli / raw",
        "http_conc_cpu_ours_over_raw": "HTTP 64-in-flight client CPU a call, paicli / raw",
        "seq_traced_over_ours": "sequential calls/s, tracing on / off",
        "seq_metered_over_ours": "sequential calls/s, metrics on / off",
    }
    for key, label in labels.items():
        print(f"  {label:<48} {_fmt(ratios[key], '')}")
    return ratios, print_targets(checks)


Check = tuple[float | None, float, bool]  # (measured value, threshold, higher is better)


def print_targets(checks: dict[str, Check], width: int = 33) -> Result:
    """Print PASS/MISS per target (a lower-is-better value passes below its threshold)."""
    print("\nTargets")
    targets: Result = {}
    for name, (value, threshold, higher) in checks.items():
        if value is None:
            verdict = "n/a"
        else:
            verdict = "PASS" if (value >= threshold if higher else value < threshold) else "MISS"
        targets[name] = {"value": value, "threshold": threshold, "verdict": verdict}
        unit = " ms" if "ms" in name else "x"
        shown = "n/a" if value is None else f"{value:.2f}{unit}"
        print(f"  {verdict:<4}  {name:<{width}} measured {shown}")
    return targets
