#!/usr/bin/env python3
"""Benchmark HDAG decomposition.

Offline: traces per second and mean completeness of the offline decomposer over every
ProcessBench MATH trace (target >= 200 traces/s on the 2-core dev machine), plus GSM8K.
LLM: calls and tokens per trace of the five-step and single-call modes against the fake
OpenAI-compatible server (its token counts are its own estimate, ceil(chars / 4)), and
the disk cache's effect on a second identical run.

    .venv/bin/python scripts/bench_decompose.py [--json] [--llm-traces 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from trustnode.config import LLMSettings
from trustnode.hdag import decompose
from trustnode.hdag.fake_responder import respond
from trustnode.llm.client import LLMClient
from trustnode.llm.fake_server import FakeOpenAIServer
from trustnode.models.trace import TraceInput

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "processbench"
TARGET = 200.0


def load(subset: str) -> list[TraceInput]:
    records = json.loads((EVAL / f"{subset}.json").read_text(encoding="utf-8"))
    return [TraceInput(problem=r["problem"], steps=r["steps"]) for r in records]


def bench_offline(traces: list[TraceInput], repeat: int) -> dict[str, Any]:
    best = float("inf")
    comps: list[float] = []
    nodes: list[int] = []
    edges: list[int] = []
    for _ in range(repeat):
        comps.clear()
        nodes.clear()
        edges.clear()
        t0 = time.perf_counter()
        for tr in traces:
            h, report = decompose(tr, mode="offline")
            if not report.ok:
                raise SystemExit(f"offline HDAG failed validation: {report.failed}")
            comps.append(report.completeness)
            nodes.append(len(h.nodes))
            edges.append(len(h.edges))
        best = min(best, time.perf_counter() - t0)
    return {
        "traces": len(traces),
        "seconds": round(best, 3),
        "traces_per_s": round(len(traces) / best, 1),
        "mean_completeness": round(statistics.fmean(comps), 4),
        "min_completeness": round(min(comps), 4),
        "mean_nodes": round(statistics.fmean(nodes), 2),
        "mean_edges": round(statistics.fmean(edges), 2),
    }


def bench_llm(traces: list[TraceInput]) -> dict[str, Any]:
    out: dict[str, Any] = {"token_counting": "fake server estimate, ceil(chars/4)", "traces": len(traces)}
    with FakeOpenAIServer(responder=respond, lifetime_s=1800) as srv, tempfile.TemporaryDirectory() as cache:
        settings = LLMSettings(base_url=srv.base_url, model="fake-model", concurrency=2)
        for mode in ("llm-five-step", "llm-single"):
            runs: list[dict[str, float]] = []
            mode_cache = Path(cache) / mode
            for _ in range(2):  # the second run answers from the disk cache
                with LLMClient(settings, cache_dir=mode_cache) as client:
                    t0 = time.perf_counter()
                    for i, tr in enumerate(traces):
                        _, report = decompose(tr, mode=mode, client=client, trace_id=f"{mode}-{i}")  # type: ignore[arg-type]
                        if not report.ok:
                            raise SystemExit(f"{mode} HDAG failed validation: {report.failed}")
                    secs = time.perf_counter() - t0
                    u = client.usage()
                n = len(traces)
                runs.append(
                    {
                        "calls_per_trace": round(u.calls / n, 2),
                        "prompt_tokens_per_trace": round(u.prompt_tokens / n, 1),
                        "completion_tokens_per_trace": round(u.completion_tokens / n, 1),
                        "cache_hits_per_trace": round(u.cache_hits / n, 2),
                        "seconds": round(secs, 3),
                    }
                )
            out[mode] = {"first_run": runs[0], "second_run_cached": runs[1]}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--repeat", type=int, default=3, help="offline timing: best of N passes")
    ap.add_argument("--llm-traces", type=int, default=20, help="MATH traces for the fake-server runs")
    args = ap.parse_args(argv)
    if not EVAL.is_dir():
        print(f"evaluation data not found at {EVAL}", file=sys.stderr)
        return 1
    math_traces = load("math")
    result: dict[str, Any] = {
        "offline": {
            "processbench_math": bench_offline(math_traces, args.repeat),
            "processbench_gsm8k": bench_offline(load("gsm8k"), args.repeat),
            "target_traces_per_s": TARGET,
        },
        "llm_fake_server": bench_llm(math_traces[: args.llm_traces]),
    }
    m = result["offline"]["processbench_math"]
    result["offline"]["meets_target"] = m["traces_per_s"] >= TARGET
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"offline, ProcessBench MATH: {m['traces_per_s']} traces/s over {m['traces']} traces "
        f"(target {TARGET:g}), mean completeness {m['mean_completeness']}, "
        f"{m['mean_nodes']} nodes / {m['mean_edges']} edges per HDAG"
    )
    g = result["offline"]["processbench_gsm8k"]
    print(
        f"offline, ProcessBench GSM8K: {g['traces_per_s']} traces/s, mean completeness {g['mean_completeness']}"
    )
    for mode in ("llm-five-step", "llm-single"):
        r = result["llm_fake_server"][mode]
        a, b = r["first_run"], r["second_run_cached"]
        print(
            f"{mode}: {a['calls_per_trace']} calls, {a['prompt_tokens_per_trace']} prompt + "
            f"{a['completion_tokens_per_trace']} completion tokens per trace; cached rerun: "
            f"{b['calls_per_trace']} calls, {b['cache_hits_per_trace']} cache hits per trace"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
