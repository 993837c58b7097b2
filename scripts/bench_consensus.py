#!/usr/bin/env python3
"""Speed of the consensus library: exact W distribution, bounds, tuner and simulations.

Prints one line per figure (or JSON with --json). Figures are wall-clock medians of a few
runs on this machine; nothing here asserts a target.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from trustnode.consensus.probability import failure_report
from trustnode.consensus.sim_beta import BetaSweepConfig, beta_sweep
from trustnode.consensus.sim_corruption import CorruptionConfig, corruption_sweep, synthetic_traces
from trustnode.consensus.simulation import EconomyConfig, simulate_economy
from trustnode.consensus.trace import ConsensusParams, TraceShape
from trustnode.consensus.tuner import TuneRequest, tune


def _time(fn: Callable[[], Any], repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    cons = ConsensusParams()
    big = TraceShape(computer=400, llm=400, human=200)
    p, w = cons.segment_arrays(big)
    figures: dict[str, float] = {
        "exact_failure_1000_segments_s": _time(lambda: cons.failure_probability(big), args.repeats),
        "failure_report_with_bounds_1000_segments_s": _time(lambda: failure_report(p, w, 9000), args.repeats),
        "false_accept_1_flawed_14_segments_s": _time(
            lambda: cons.false_accept_probability(TraceShape(), 1), args.repeats
        ),
        "tune_default_s": _time(lambda: tune(TuneRequest()), 1),
    }
    sessions = 200
    t_econ = _time(lambda: simulate_economy(EconomyConfig(sessions=sessions)), args.repeats)
    figures["economy_sessions_per_s"] = sessions / t_econ
    figures["beta_sweep_101_betas_200k_trials_s"] = _time(lambda: beta_sweep(BetaSweepConfig()), 1)
    traces = synthetic_traces(400, TraceShape())
    figures["corruption_sweep_400_traces_5_rates_10_repeats_s"] = _time(
        lambda: corruption_sweep(traces, "synthetic", CorruptionConfig()), 1
    )
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for k, v in figures.items():
            print(f"{k:55s} {v:10.4f}")


if __name__ == "__main__":
    main()
