#!/usr/bin/env python3
"""Privacy figure (issue 16): the share of a trace's thinking one auditor can decrypt.

    .venv/bin/python scripts/bench_privacy.py [--json] [--share 0.25] [--eval-dir ../shared/eval]

For every segment of every trace (the four bundled samples, and every shared ProcessBench
trace after offline decomposition), an auditor holding that one seat: `before` is what the
node sealed to it before the privacy rule (the seat, the goal, every parent and child),
`after` is what `node.privacy.plan_release` gives under the share. Traces the node refuses
(reasoning too short to cut within the share, `hdag.spans.privacy_problem`) have no seats and
are counted apart. `over_by_seat` counts
seats whose own text already exceeds the share (context is then withheld entirely; only a
finer decomposition lowers those), and `context_excess_max` is the most any context added
beyond max(share, the seat's own share): 0 means the rule holds everywhere.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from trustnode.hdag.offline import decompose_offline_report
from trustnode.hdag.spans import privacy_problem
from trustnode.models.hdag import HDAG
from trustnode.models.trace import TraceInput
from trustnode.node.privacy import MAX_DECRYPT_SHARE, covered, single_seat_shares, thinking_spans
from trustnode.node.samples import load_samples


def _traces(eval_dir: Path) -> list[tuple[str, TraceInput]]:
    out = [(s.name, s.trace) for s in load_samples()]
    for path in sorted((eval_dir / "processbench").glob("*.json")):
        for row in json.loads(path.read_text()):
            out.append((str(row["id"]), TraceInput(problem=row["problem"], steps=row["steps"])))
    return out


def _figures(values: list[float]) -> dict[str, float]:
    return {"max": max(values), "mean": statistics.mean(values)}


def measure(traces: list[tuple[str, TraceInput]], share: float) -> dict[str, Any]:
    before: list[float] = []
    after: list[float] = []
    over_by_seat = 0
    excess = 0.0
    refused = 0
    for i, (_, trace) in enumerate(traces, 1):
        hdag: HDAG = decompose_offline_report(trace, max_share=share)[0]
        if privacy_problem(hdag.document, hdag.nodes, share) is not None:
            refused += 1  # the node refuses it (too short to cut within the share): no seat exists
            continue
        b, a = single_seat_shares(hdag, share=share)
        spans = thinking_spans(hdag)
        total = covered(spans, range(len(spans))) or 1
        for j, got in enumerate(a):
            own = covered(spans, [j]) / total
            over_by_seat += own > share
            excess = max(excess, got - max(share, own))
        before += b
        after += a
        if i % 200 == 0:
            print(f"  {i}/{len(traces)} traces", file=sys.stderr)
    return {
        "share": share,
        "traces": len(traces),
        "refused_too_short": refused,
        "seats": len(before),
        "before": _figures(before),
        "after": _figures(after),
        "over_by_seat": over_by_seat,
        "context_excess_max": excess,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--share", type=float, default=MAX_DECRYPT_SHARE)
    ap.add_argument(
        "--eval-dir", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "eval"
    )
    args = ap.parse_args()
    started = time.monotonic()
    result = measure(_traces(args.eval_dir), args.share)
    result["seconds"] = round(time.monotonic() - started, 1)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{result['traces']} traces ({result['refused_too_short']} refused as too short for the share), "
        f"{result['seats']} single seats, share {args.share:.0%}"
    )
    for k in ("before", "after"):
        print(f"  {k:<6} max {result[k]['max']:.1%}  mean {result[k]['mean']:.1%}")
    print(f"  seats whose own text exceeds the share: {result['over_by_seat']}")
    print(f"  context beyond max(share, own seat): {result['context_excess_max']:.2%}")


if __name__ == "__main__":
    main()
