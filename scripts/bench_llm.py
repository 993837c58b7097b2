"""How well does a real (small, local) model do as the LLM judge and the decomposer?

On ProcessBench gsm8k traces (read in place from the shared eval data) it measures:
- judge F1 (ProcessBench's: harmonic mean of exact first-error accuracy on erroneous
  traces and of accuracy on correct ones), each step judged in order with all earlier
  steps as context, stopping at the first FAIL (as `trustnode eval --auditor llm`);
- the share of judge requests whose first answer was not schema-valid (needed repair),
  and the share with no valid answer even after the bounded repair (JudgeError);
- seconds per judged segment;
- single-call decomposition: the share of the thinking the model's own segments cover
  (exact quotes, before validation fills gaps) and whether the repaired HDAG is valid.

Sample rule (no row numbers): the first N/2 erroneous and the first N/2 correct traces in
file order, alternately. By default the bundled SmolLM2-135M runs under `LocalLLMServer`; `--base-url`
points at any OpenAI-compatible endpoint instead. Nothing is cached: every answer is the
model's. Progress goes to stderr, per-trace rows to `--rows` (JSON lines) as they finish.
A run that is cut resumes with the same `--rows` file: traces already there are skipped,
and the figures cover every row in the file.

    python scripts/bench_llm.py --traces 50 --json > /tmp/bench_llm.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from trustnode.audit.evaluation.datasets import EvalItem, load_processbench
from trustnode.audit.evaluation.metrics import TraceRow, compute
from trustnode.audit.evaluation.modes import step_tasks
from trustnode.audit.llm_judge import JudgeError, LLMJudge
from trustnode.hdag.llm_pipeline import LLMDecomposer, model_completeness
from trustnode.hdag.validate import validate_hdag
from trustnode.llm.client import LLMClient
from trustnode.llm.errors import LLMError
from trustnode.llm.local_server import LocalLLMServer
from trustnode.llm.settings import LLMSettings
from trustnode.llm.usage import LLMUsage
from trustnode.models.trace import TraceInput

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "eval" / "processbench" / "gsm8k.json"


def sample(items: list[EvalItem], n: int) -> list[EvalItem]:
    """The first n/2 erroneous and the first n - n/2 correct traces in file order, taken
    alternately (erroneous first), so that a run cut short is still balanced."""
    wrong = [i for i in items if i.label >= 0][: n // 2]
    right = [i for i in items if i.label < 0][: n - n // 2]
    out: list[EvalItem] = []
    for k in range(max(len(wrong), len(right))):
        out += wrong[k : k + 1] + right[k : k + 1]
    return out


def judge_trace(judge: LLMJudge, item: EvalItem) -> tuple[TraceRow, list[float], int]:
    """(row, seconds per judged segment, segments without a verdict)."""
    seconds: list[float] = []
    errors = decided = 0
    for task in step_tasks(item):
        t0 = time.monotonic()
        try:
            res = judge.audit(task)
        except JudgeError as exc:
            seconds.append(time.monotonic() - t0)
            errors += 1
            print(f"  {item.id} step {task.segment_index}: no verdict ({exc.reason})", file=sys.stderr)
            continue
        seconds.append(time.monotonic() - t0)
        decided += res.decided
        if res.failed:
            row = TraceRow(
                id=item.id, label=item.label, predicted=task.segment_index, decided=True,
                segments=len(item.steps), decided_segments=decided,
            )  # fmt: skip
            return row, seconds, errors
    row = TraceRow(
        id=item.id, label=item.label, predicted=-1, decided=decided > 0,
        segments=len(item.steps), decided_segments=decided,
    )  # fmt: skip
    return row, seconds, errors


def decompose_trace(dec: LLMDecomposer, item: EvalItem) -> dict[str, Any]:
    trace = TraceInput(problem=item.problem, steps=item.steps)
    t0 = time.monotonic()
    try:
        draft = dec.draft(trace, "llm-single", trace_id=f"dec-{item.id}")
    except LLMError as exc:
        return {"id": item.id, "ok": False, "error": type(exc).__name__, "seconds": time.monotonic() - t0}
    raw = model_completeness(draft)
    hdag, report = validate_hdag(draft, repair=True, min_completeness=dec.min_completeness)
    return {
        "id": item.id,
        "ok": report.ok,
        "model_completeness": raw,
        "repaired_completeness": report.completeness,
        "nodes": len(hdag.nodes),
        "seconds": time.monotonic() - t0,
    }


def share(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def judge_figures(rows: list[TraceRow], secs: list[float], no_verdict: int, u: LLMUsage) -> dict[str, Any]:
    m = compute(rows)
    asked = u.requests - u.cache_hits
    return {
        "f1": m.f1,
        "accuracy_erroneous": m.accuracy_erroneous,
        "accuracy_correct": m.accuracy_correct,
        "confusion": m.confusion.model_dump(),
        "segments_judged": len(secs),
        "segments_without_verdict": no_verdict,
        "seconds_per_segment": round(statistics.fmean(secs), 2) if secs else None,
        "seconds_per_segment_median": round(statistics.median(secs), 2) if secs else None,
        "requests": asked,
        "share_needing_repair": share(u.repaired + u.failed, asked),
        "share_failed_after_repair": share(u.failed, asked),
        "share_rejected": share(u.rejected, asked),
        "usage": u.model_dump(),
    }


def decompose_figures(results: list[dict[str, Any]], u: LLMUsage) -> dict[str, Any]:
    done = [r for r in results if "model_completeness" in r]
    comp = [r["model_completeness"] for r in done]
    return {
        "traces": len(results),
        "answered": len(done),
        "no_valid_answer": len(results) - len(done),
        "model_completeness_mean": round(statistics.fmean(comp), 4) if comp else None,
        "model_completeness_median": round(statistics.median(comp), 4) if comp else None,
        "valid_after_repair": sum(1 for r in done if r["ok"]),
        "seconds_per_trace": round(statistics.fmean(r["seconds"] for r in results), 2),
        "share_needing_repair": share(u.repaired + u.failed, u.requests),
        "usage": u.model_dump(),
    }


def summarize(path: Path) -> dict[str, Any]:
    """The figures of the traces a (possibly cut) run wrote to its --rows file."""
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    rows = [TraceRow.model_validate(x["judge"]) for x in lines if "judge" in x]
    secs = [t for x in lines if "judge" in x for t in x["seconds"]]
    ju, du = LLMUsage(), LLMUsage()
    for x in lines:
        ju.add(LLMUsage.model_validate(x["judge_usage"]))
        du.add(LLMUsage.model_validate(x["decompose_usage"]))
    out: dict[str, Any] = {"traces": len(lines)}
    if rows:
        out["judge"] = judge_figures(rows, secs, sum(x.get("no_verdict", 0) for x in lines), ju)
    results = [x["decompose"] for x in lines if "decompose" in x]
    if results:
        out["decompose_single"] = decompose_figures(results, du)
    return out


def done_ids(rows: Path | None) -> set[str]:
    """Trace ids an earlier (cut) run already wrote to the rows file."""
    if rows is None or not rows.exists():
        return set()
    return {json.loads(x)["id"] for x in rows.read_text().splitlines() if x.strip()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--traces", type=int, default=50)
    ap.add_argument("--model", type=Path, default=None, help="GGUF file (default: the bundled SmolLM2-135M)")
    ap.add_argument("--base-url", default=None, help="use this endpoint instead of a local server")
    ap.add_argument("--model-name", default="local", help="model name at --base-url")
    ap.add_argument("--judge-max-tokens", type=int, default=2048, help="llm.max_tokens of the judge")
    ap.add_argument("--decompose-max-tokens", type=int, default=2048, help="decomposer.llm.max_tokens")
    ap.add_argument("--threads", type=int, default=None, help="CPU threads of the local server")
    ap.add_argument("--skip-judge", action="store_true")
    ap.add_argument("--skip-decompose", action="store_true")
    ap.add_argument("--rows", type=Path, default=None, help="append per-trace JSON lines here")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--summarize", type=Path, default=None, help="only compute the figures of a --rows file")
    args = ap.parse_args()
    if args.summarize:
        print(json.dumps(summarize(args.summarize), indent=2))
        return 0

    items = sample(load_processbench(args.data).items, args.traces)
    out: dict[str, Any] = {"data": str(args.data), "traces": len(items)}
    done = done_ids(args.rows)
    todo = [i for i in items if i.id not in done]
    if done:
        print(
            f"resuming: {len(items) - len(todo)} of {len(items)} traces already in {args.rows}",
            file=sys.stderr,
        )
    rows_fh = args.rows.open("a") if args.rows else None
    with ExitStack() as stack:
        if args.base_url:
            settings = LLMSettings(
                base_url=args.base_url, model=args.model_name, concurrency=1, timeout_s=300
            )
        else:
            srv = stack.enter_context(
                LocalLLMServer(args.model, threads=args.threads, log_path=Path("/tmp/bench_llm_server.log"))
            )
            settings = srv.settings()
        judge_settings = settings.model_copy(update={"max_tokens": args.judge_max_tokens})
        dec_settings = settings.model_copy(update={"max_tokens": args.decompose_max_tokens})
        out.update(
            model=settings.model,
            judge_max_tokens=args.judge_max_tokens,
            decompose_max_tokens=args.decompose_max_tokens,
            repair_retries=settings.repair_retries,
        )

        client = stack.enter_context(LLMClient(judge_settings))
        dclient = stack.enter_context(LLMClient(dec_settings))
        out["output_mode"] = client.probe("judge").output_mode
        judge = LLMJudge(client, fence_key=b"bench-llm-fence-key-32-bytes-...")
        dec = LLMDecomposer(dclient)
        rows: list[TraceRow] = []
        secs: list[float] = []
        no_verdict = 0
        results: list[dict[str, Any]] = []
        t0 = time.monotonic()
        for k, item in enumerate(
            todo, len(items) - len(todo) + 1
        ):  # judge and decompose each trace, so a cut run has both
            line: dict[str, Any] = {"id": item.id}
            ju, du = client.usage(), dclient.usage()
            if not args.skip_judge:
                row, s, errs = judge_trace(judge, item)
                rows.append(row)
                secs += s
                no_verdict += errs
                line.update(judge=row.model_dump(), seconds=s, no_verdict=errs)
            if not args.skip_decompose:
                r = decompose_trace(dec, item)
                results.append(r)
                line["decompose"] = r
            line["judge_usage"] = client.usage().minus(ju).model_dump()
            line["decompose_usage"] = dclient.usage().minus(du).model_dump()
            if rows_fh:
                print(json.dumps(line), file=rows_fh, flush=True)
            print(f"{k}/{len(items)} ({time.monotonic() - t0:.0f}s): {json.dumps(line)}", file=sys.stderr)
        if rows:
            out["judge"] = judge_figures(rows, secs, no_verdict, client.usage())
        if results:
            out["decompose_single"] = decompose_figures(results, dclient.usage())
    if rows_fh:
        rows_fh.close()
    if done and args.rows:  # a resumed run: the figures of every trace in the rows file
        out.update({k: v for k, v in summarize(args.rows).items() if k != "traces"})
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key}: {json.dumps(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
