#!/usr/bin/env python3
"""Speed of the computer auditor on the public evaluation data (read in place).

Figures: segments audited per second and claims checked per second on BIG-Bench Mistake
and the GSM8K references (each step audited with the previous steps as context, as the
harness does), and the median time of one segment audit. Wall-clock on this machine;
nothing here asserts a target. Prints one line per figure, or JSON with --json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from trustnode.audit.computer import ComputerAuditor
from trustnode.audit.evaluation.datasets import EvalFormat, load
from trustnode.audit.evaluation.modes import step_tasks

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"
SETS = {
    "bbm": (EVAL / "big-bench-mistake" / "multistep_arithmetic.jsonl", EvalFormat.BBM),
    "gsm8k": (EVAL / "gsm8k" / "test.jsonl", EvalFormat.GSM8K),
    "processbench-math": (EVAL / "processbench" / "math.json", EvalFormat.PROCESSBENCH),
}


def bench(name: str, limit: int | None) -> dict[str, Any]:
    path, fmt = SETS[name]
    items = load(path, fmt).items[:limit]
    auditor = ComputerAuditor()
    tasks = [t for item in items for t in step_tasks(item)]
    per: list[float] = []
    claims = 0
    t0 = time.perf_counter()
    for task in tasks:
        s = time.perf_counter()
        res = auditor.audit(task)
        per.append(time.perf_counter() - s)
        n = res.evidence.details.get("claims_checked", 0)
        claims += n if isinstance(n, int) else 0
    total = time.perf_counter() - t0
    return {
        "set": name,
        "traces": len(items),
        "segments": len(tasks),
        "claims": claims,
        "seconds": round(total, 3),
        "segments_per_s": round(len(tasks) / total, 1),
        "claims_per_s": round(claims / total, 1),
        "median_segment_ms": round(1000 * statistics.median(per), 3),
        "p99_segment_ms": round(1000 * sorted(per)[int(0.99 * (len(per) - 1))], 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--limit", type=int, default=None, help="traces per set")
    ap.add_argument("--sets", nargs="*", default=list(SETS), choices=list(SETS))
    args = ap.parse_args()
    results = [bench(name, args.limit) for name in args.sets if SETS[name][0].is_file()]
    if args.json:
        print(json.dumps({"computer_auditor": results}, indent=2))
        return
    for r in results:
        print(
            f"{r['set']}: {r['segments']} segments ({r['traces']} traces), {r['claims']} claims in "
            f"{r['seconds']} s: {r['segments_per_s']} segments/s, {r['claims_per_s']} claims/s, "
            f"median {r['median_segment_ms']} ms, p99 {r['p99_segment_ms']} ms per segment"
        )


if __name__ == "__main__":
    main()
