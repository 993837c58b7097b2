#!/usr/bin/env python3
"""Time every scanner that runs on trace text against adversarial inputs of growing size.

Each input is built to make a backtracking pattern rescan the rest of the text from every
position (an opening marker with no closer, a long run of spaces after "=", numbers
separated by commas ...). Linear code takes about twice as long for twice the text; a
quadratic one about four times. Scanners: the segmenter's protected regions and units
(`hdag.text`), the router and checker (`audit.claims`), the linker (`hdag.rules.quantities`),
and the anchor used by validation repair (`hdag.spans.anchor`). With `--reference` the
pattern `hdag/text.py` used before the fix is timed too (it may take seconds per input).

    .venv/bin/python scripts/bench_text.py [--json] [--sizes 10000 20000 40000] [--reference]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from typing import Any

from trustnode.audit.claims import extract_claims, has_decidable_claim
from trustnode.hdag.rules import quantities
from trustnode.hdag.spans import anchor
from trustnode.hdag.text import protected_regions, split_units

# hdag/text.py before the fix, kept here only to measure what the fix changed
REFERENCE = re.compile(
    r"```.*?```|\$\$.+?\$\$|\\\[.+?\\\]|\\begin\{([A-Za-z*]+)\}.*?\\end\{\1\}|\\\(.+?\\\)"
    r"|(?<![\\$])\$(?!\$)[^$\n]+?(?<!\\)\$",
    re.DOTALL,
)

INPUTS: dict[str, Callable[[int], str]] = {
    "unclosed \\[": lambda n: "\\[" * (n // 2),
    "unclosed \\(": lambda n: "\\(" * (n // 2),
    "unclosed $$": lambda n: "$$x" * (n // 3),
    "unclosed \\begin{a}": lambda n: "\\begin{a}" * (n // 9),
    "inline $ then text": lambda n: "$" + "x" * (n - 1),
    "= then spaces": lambda n: "= " + " " * (n - 3) + "x",
    "1,1,1,...": lambda n: "1," * (n // 2) + "x",
    "open brackets": lambda n: "(" * (n // 2) + "1 = 1",
    "\\frac{ unclosed": lambda n: "\\frac{" * (n // 6),
    "1 + 1 + ... = 2": lambda n: "1 + " * (n // 4) + "= 2",
    "let then spaces": lambda n: "let" + " " * (n - 4) + "!",
}

SCANNERS: dict[str, Callable[[str], object]] = {
    "text.protected_regions": protected_regions,
    "text.split_units": split_units,
    "claims.has_decidable_claim (router)": has_decidable_claim,
    "claims.extract_claims (checker)": extract_claims,
    "rules.quantities (linker)": quantities,
    "spans.anchor (repair)": lambda text: anchor(text, "x " * 2000 + "y"),
}


def _time(fn: Callable[[str], object], text: str) -> float:
    t0 = time.perf_counter()
    fn(text)
    return time.perf_counter() - t0


def run(sizes: list[int], reference: bool, budget_s: float) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    scanners = dict(SCANNERS)
    if reference:
        scanners["reference: old text.py pattern"] = lambda text: list(REFERENCE.finditer(text))
    for sname, fn in scanners.items():
        for iname, make in INPUTS.items():
            row: dict[str, Any] = {"scanner": sname, "input": iname, "seconds": {}}
            for n in sizes:
                s = _time(fn, make(n))
                row["seconds"][n] = round(s, 4)
                if s > budget_s:
                    break  # larger inputs would only take longer
            times = list(row["seconds"].values())
            row["growth_per_doubling"] = (
                round(times[-1] / times[-2], 2) if len(times) > 1 and times[-2] > 1e-4 else None
            )
            rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 20_000, 40_000, 80_000, 160_000])
    ap.add_argument("--reference", action="store_true", help="also time the pattern used before the fix")
    ap.add_argument("--budget", type=float, default=10.0, help="stop growing an input past this many seconds")
    args = ap.parse_args()
    rows = run(sorted(args.sizes), args.reference, args.budget)
    if args.json:
        print(json.dumps({"sizes": args.sizes, "rows": rows}, indent=2))
        return
    width = max(len(r["input"]) for r in rows)
    current = ""
    for r in rows:
        if r["scanner"] != current:
            current = r["scanner"]
            print(f"\n{current}  (seconds at {', '.join(f'{n:,}' for n in sorted(args.sizes))} characters)")
        cells = "  ".join(f"{r['seconds'][n]:8.4f}" for n in sorted(r["seconds"]))
        growth = r["growth_per_doubling"]
        print(f"  {r['input']:<{width}}  {cells}" + (f"   x{growth} per doubling" if growth else ""))


if __name__ == "__main__":
    main()
