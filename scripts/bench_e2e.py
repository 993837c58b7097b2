#!/usr/bin/env python3
"""End-to-end throughput on a local network: traces per minute from submission to on-chain
verdict, with the offline decomposer and computer auditors, and the time split by stage.

    .venv/bin/python scripts/bench_e2e.py --traces 20 --json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from trustnode.models.enums import Tier
from trustnode.node.cluster import AuditorSpec, ClusterConfig, LocalCluster


def arithmetic_trace(rng: random.Random, i: int) -> dict[str, Any]:
    """A small word problem solved in checkable steps, long enough (about 400 characters of
    reasoning) that the privacy share lets the node cut it into segments."""
    a, b, c = rng.randint(2, 40), rng.randint(2, 40), rng.randint(2, 9)
    r = (a + b) * c
    return {
        "problem": f"Order {i}: a shop sells {a} pens on Monday and {b} pens on Tuesday at {c} dollars each. What is the revenue?",
        "steps": [
            f"The shop sold {a} pens on Monday and {b} pens on Tuesday, so {a} + {b} = {a + b} pens in all.",
            f"Each pen costs {c} dollars, so the revenue is pens times price: {a + b} × {c} = {r} dollars.",
            f"Check Monday on its own: {a} pens at {c} dollars each make {a} × {c} = {a * c} dollars.",
            f"Check Tuesday on its own: {b} pens at {c} dollars each make {b} × {c} = {b * c} dollars.",
            f"The two days together make {a * c} + {b * c} = {r} dollars, the same as before.",
        ],
        "output": f"{r} dollars",
        "domain": "math",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", type=int, default=20)
    ap.add_argument("--auditors", type=int, default=3, help="computer auditors")
    ap.add_argument(
        "--llm-auditors",
        type=int,
        default=1,
        help="LLM auditors (fake endpoint) for non-arithmetic segments such as the problem statement",
    )
    ap.add_argument(
        "--provider-threads",
        type=int,
        default=ClusterConfig.model_fields["provider_threads"].default,
        help="provider worker threads (`api serve --threads`)",
    )
    ap.add_argument("--json", action="store_true", help="print JSON only")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    console = Console(stderr=True)
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="trustnode-bench-e2e-"))
    cfg = ClusterConfig(
        workdir=work,
        auditors=[
            AuditorSpec(name=f"computer-{i}", tier=Tier.COMPUTER, account=2 + i) for i in range(args.auditors)
        ]
        + [
            AuditorSpec(name=f"llm-{i}", tier=Tier.LLM, account=2 + args.auditors + i)
            for i in range(args.llm_auditors)
        ],
        seats_per_tier=(1, 1, 1),
        batch_size=4,
        batch_wait_s=0.5,
        provider_threads=args.provider_threads,
    )
    with LocalCluster(cfg, log=lambda m: console.print(f"[dim]{m}[/]")) as cluster:
        started = time.monotonic()
        ids = [cluster.submit(arithmetic_trace(rng, i)) for i in range(args.traces)]
        done_at: dict[str, float] = {}
        with Progress(
            TextColumn("e2e"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
        ) as bar:
            task = bar.add_task("traces", total=len(ids))

            def update(tid: str, view: dict[str, Any]) -> None:
                if view.get("status") in ("done", "failed") and tid not in done_at:
                    done_at[tid] = time.monotonic()
                    bar.update(task, completed=len(done_at))

            views = cluster.wait(ids, timeout_s=600, on_update=update)
        elapsed = time.monotonic() - started
    failed = [t for t, v in views.items() if v["status"] != "done"]
    for t in failed[:3]:
        console.print(f"[red]{t} failed:[/] {views[t].get('error')}")
    stages: dict[str, list[float]] = {}
    for v in views.values():
        for stage, secs in v.get("stage_times", {}).items():
            stages.setdefault(stage, []).append(secs)
    latencies = sorted(done_at[t] - started for t in ids if t in done_at)
    result = {
        "traces": args.traces,
        "auditors": {"computer": args.auditors, "llm": args.llm_auditors},
        "provider_threads": args.provider_threads,
        "failed": len(failed),
        "elapsed_s": round(elapsed, 2),
        "traces_per_min": round(60 * (args.traces - len(failed)) / elapsed, 2),
        "latency_median_s": round(statistics.median(latencies), 2) if latencies else None,
        "stage_mean_s": {k: round(statistics.mean(v), 3) for k, v in sorted(stages.items())},
        "verdicts": {v["outcome"]["verdict"]: 0 for v in views.values() if v.get("outcome")},
    }
    for v in views.values():
        if v.get("outcome"):
            result["verdicts"][v["outcome"]["verdict"]] += 1
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        console.print(result)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
