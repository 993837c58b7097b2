"""`trustnode demo`: the main job. A whole local network audits the sample traces end to end."""

from __future__ import annotations

import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer
from rich.live import Live
from rich.table import Table

from trustnode.cli.common import console, fail
from trustnode.models.enums import Tier
from trustnode.models.jobs import TraceStage
from trustnode.node.appeal_demo import DEMO_PROTOCOL, AppealAct, AppealActReport
from trustnode.node.cluster import AuditorSpec, ClusterConfig, LocalCluster
from trustnode.node.samples import load_samples


class LLMTier(StrEnum):
    stand_in = "stand-in"
    local = "local"


STAND_IN_NOTE = (
    "LLM tier: a deterministic STAND-IN, not a language model (the exact arithmetic checker "
    "answers the judge's prompts over the OpenAI API). `trustnode demo --llm local` runs the "
    "bundled SmolLM2-135M model instead."
)
LOCAL_NOTE = (
    "LLM tier: the bundled SmolLM2-135M model on this machine (llama.cpp). It is a very small "
    "model and judges badly: verdicts that differ from the expected ones are reported, not hidden."
)

#: The lazy auditor (always PASS) is the only computer auditor when the appeal act's trace is
#: drawn; the honest ones join after that draw (`AppealAct.after_draw`), before the samples. Four, not
#: three, for a 3-seat panel: admission subtracts every earlier-panel seat from the live members, and
#: the lazy auditor, left with only its locks (below the 200 TRUST minimum), is no member any more
#: (docs/appeals-canaries.md, `Review22EarlierAuditorsLeaveToVeto`).
HONEST_COMPUTER = ["computer-1", "computer-2", "computer-3", "computer-4"]
DEMO_AUDITORS = [
    AuditorSpec(name="computer-lazy", tier=Tier.COMPUTER, account=6, lazy=True),
    AuditorSpec(name="llm-1", tier=Tier.LLM, account=4),
    AuditorSpec(name="human-1", tier=Tier.HUMAN, account=5),
    AuditorSpec(name="computer-1", tier=Tier.COMPUTER, account=2, later=True),
    AuditorSpec(name="computer-2", tier=Tier.COMPUTER, account=3, later=True),
    AuditorSpec(name="computer-3", tier=Tier.COMPUTER, account=7, later=True),
    AuditorSpec(name="computer-4", tier=Tier.COMPUTER, account=9, later=True),
]


def _table(rows: dict[str, dict[str, Any]], names: dict[str, str], started: float) -> Table:
    t = Table(title=f"auditing {len(rows)} traces ({time.monotonic() - started:.0f}s)")
    for col in ("trace", "stage", "session", "verdict"):
        t.add_column(col)
    for tid, view in rows.items():
        stage = view.get("stage", "received")
        bar = "#" * (TraceStage(stage).order + 1) + "." * (len(TraceStage) - TraceStage(stage).order - 1)
        verdict = (view.get("outcome") or {}).get("verdict") or (
            "error" if view.get("status") == "failed" else ""
        )
        t.add_row(names[tid], f"{bar} {stage}", str(view.get("session_id") or ""), verdict)
    return t


def demo(
    workdir: Path = typer.Option(
        None, help="Where processes keep their data and logs (default: a new temp dir)."
    ),
    timeout: float | None = typer.Option(
        None, help="Seconds to wait for every verdict (default: 240; 1800 with --llm local)."
    ),
    llm: LLMTier = typer.Option(
        LLMTier.stand_in, "--llm", help="The LLM auditor's model: stand-in (deterministic) or local (real)."
    ),
    llm_model: Path | None = typer.Option(
        None, "--llm-model", help="With --llm local: a GGUF file instead of the bundled model."
    ),
) -> None:
    """Run a local devnet with a canary operator, an API node and auditor daemons; audit the sample traces."""
    samples = load_samples()
    work = workdir or Path(tempfile.mkdtemp(prefix="trustnode-demo-"))
    extra: dict[str, Any] = {}
    if llm is LLMTier.local:
        from trustnode.llm.local_server import LocalModelUnavailable, bundled_model_path, runtime_available

        if "llm" not in ClusterConfig.model_fields:
            fail("this build's cluster cannot start a local model yet (ClusterConfig has no `llm` field)")
        if not runtime_available():
            from trustnode.llm.local_server import INSTALL_HINT

            fail(f"--llm local needs the local-model extra; {INSTALL_HINT}")
        try:
            model_path = llm_model or bundled_model_path()
        except LocalModelUnavailable as exc:
            fail(str(exc))
        extra = {"llm": "local", "llm_model_path": model_path}
    wait_s = timeout if timeout is not None else (1800.0 if llm is LLMTier.local else 240.0)
    cfg = ClusterConfig(
        workdir=work,
        auditors=DEMO_AUDITORS,
        seats_per_tier=(1, 1, 1),
        beta_bps=9500,
        protocol=DEMO_PROTOCOL,
        flawed_phrases=[p for s in samples for p in s.flawed_phrases],
        batch_size=len(samples),
        **extra,
    )
    console.print(f"[bold]trustnode demo[/] (data and logs in {work})")
    console.print(f"  [yellow]{STAND_IN_NOTE if llm is LLMTier.stand_in else LOCAL_NOTE}[/]", highlight=False)
    started = time.monotonic()
    with LocalCluster(cfg, log=lambda m: console.print(f"  {m}")) as cluster:
        if cluster.operator is not None:
            console.print(
                f"  canary operator on {cluster.operator_url} (account {cluster.cfg.operator_account}): "
                "it writes, commits and reveals the gold canaries; the provider only places them"
            )
        console.print(
            f"  API on {cluster.api_url}; auditors: "
            + ", ".join(f"{a.name} ({a.tier.name.lower()})" for a in cfg.auditors)
        )
        act = AppealAct(
            cluster, lazy="computer-lazy", honest=HONEST_COMPUTER, say=lambda m: console.print(f"  {m}")
        )
        act.submit()
        console.print(
            "  appeal act: a flawed calculation trace, drawn while computer-lazy is the only computer auditor"
        )
        try:
            act.after_draw()
        except (TimeoutError, RuntimeError) as exc:
            fail(f"{exc}; logs in {work / 'logs'}")
        # The stand-ins judge arithmetic only (the LLM one) or by an answer key (the human one): a
        # verbal FAIL canary would catch them too. The samples' sessions (a new parameter version)
        # carry none; the appeal act's session keeps its canaries.
        cluster.set_protocol({"canary_rate_bps": 0})
        names = {cluster.submit(s.payload()): s.name for s in samples}
        # The act appeals as soon as its window opens, while the samples are audited.
        appeal_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="appeal-act")
        pending_act = appeal_thread.submit(act.finish, wait_s)
        rows: dict[str, dict[str, Any]] = {tid: {"stage": "received"} for tid in names}
        with Live(_table(rows, names, started), console=console, refresh_per_second=4) as live:

            def update(tid: str, view: dict[str, Any]) -> None:
                rows[tid] = view
                live.update(_table(rows, names, started))

            try:
                views = cluster.wait(list(names), timeout_s=wait_s, on_update=update)
            except TimeoutError as exc:
                fail(f"{exc}; logs in {work / 'logs'}")
        mismatches = errors = 0
        console.print()
        for tid, view in views.items():
            sample = next(s for s in samples if s.name == names[tid])
            out = view.get("outcome") or {}
            verdict = out.get("verdict", "ERROR")
            ok = verdict == sample.expected_verdict
            mismatches += not ok
            colour = "green" if verdict == "PASS" else "red"
            console.print(
                f"[bold]{sample.name}[/]: session {view.get('session_id')} [{colour}]{verdict}[/] "
                f"score {out.get('score_bps', 0) / 100:.1f}% (expected {sample.expected_verdict}"
                f"{'' if ok else ', MISMATCH'})"
            )
            if view.get("status") == "failed":
                errors += 1
                console.print(f"  error: {view.get('error')}")
            nodes = {n["id"]: n for n in (view.get("hdag") or {}).get("nodes", [])}
            for seg in out.get("failing_segments", []):
                where = f", original step {seg['step_index']}" if seg.get("step_index") is not None else ""
                text = nodes.get(seg["node_id"], {}).get("content", "")
                shown = text if len(text) <= 160 else text[:157] + "..."
                console.print(f"  failing segment {seg['index']} ({seg['node_id']}{where}): {shown!r}")
            for step, h in view.get("tx_hashes", {}).items():
                console.print(f"  {step:<13} {h}")
        try:
            report = pending_act.result(timeout=wait_s + 120)
        except (TimeoutError, RuntimeError) as exc:
            fail(f"{exc}; logs in {work / 'logs'}")
        finally:
            appeal_thread.shutdown(wait=False, cancel_futures=True)
        act_ok = print_appeal_act(report)
        console.print(f"\nall traces audited in {time.monotonic() - started:.0f}s; shutting down")
    if llm is LLMTier.stand_in:
        console.print(f"[yellow]{STAND_IN_NOTE}[/]", highlight=False)
    elif mismatches:
        console.print(
            f"[yellow]{mismatches} verdict(s) differ from the expected ones with the local model[/]"
        )
        return  # a weak model's verdicts are a measurement, not a failure of the demo
    if mismatches or not act_ok:
        raise typer.Exit(1)


def print_appeal_act(report: AppealActReport) -> bool:
    """The evidence of the appeal act; False when it did not show what it should."""
    a = report.appeal
    console.print(f"\n[bold]appeal act[/]: session {a.session_id} (trace {report.trace_id})")
    for c in report.canaries:
        console.print(
            f"  [bold red]gold canary caught the lazy auditor[/]: segment {c.index}, truth {c.truth} "
            f"(written and revealed by the canary operator{f', {c.mutation} mutation' if c.mutation else ''}): "
            f"{c.text[:140]!r}",
            highlight=False,
        )
        for v in c.votes:
            console.print(f"    {v}", highlight=False)
    if not report.canaries:
        console.print(
            "  [yellow]no FAIL canary was caught on the lazy auditor[/] (every tier with a canary has a FAIL "
            "one, so the lazy auditor was not drawn on it)"
        )
    if report.lazy is not None:
        z = report.lazy
        console.print(
            f"  computer-lazy settled round 0: {z.correct} correct, {z.incorrect} incorrect, {z.slashes} slashed, "
            f"reputation {z.reputation:.3f}",
            highlight=False,
        )
    console.print(
        f"  round 0 passed segment {a.segment}: {a.text!r} -> trace verdict {a.verdict_before}",
        highlight=False,
    )
    console.print(
        f"  [bold]appeal round {a.round}[/]: {a.seats} seats, bond {a.bond} TRUST; panel outcome {a.outcome}, "
        f"result [bold]{a.result}[/]",
        highlight=False,
    )
    for v in a.panel:
        console.print(f"    {v}", highlight=False)
    colour = "green" if a.verdict_after == "FAIL" else "red"
    console.print(
        f"  [{colour}]verdict recomputed: {a.verdict_after}[/] ({a.summary_after})", highlight=False
    )
    return a.result == "overturned" and a.verdict_after == "FAIL" and bool(report.canaries)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
