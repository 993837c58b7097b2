"""What providers and users run: `submit` a trace, `query` an outcome, list the bundled `samples`.

The outcome is printed for people (names, decimal TRUST, the beta threshold) or as JSON;
a session that ended without a verdict (cancelled, expired) exits non-zero with its reason.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from trustnode.chain.errors import ChainError
from trustnode.cli.common import (
    console,
    err_console,
    errors_as_exit,
    fail,
    node_settings,
    print_json,
    settings,
)
from trustnode.models.jobs import TraceStage
from trustnode.models.trace import TraceInput
from trustnode.models.verdict import SessionOutcome
from trustnode.node.samples import Sample, load_samples

#: Exit code of `query` and `submit --wait` when the session ended without a verdict.
EXIT_NO_VERDICT = 2


def _sample(name: str) -> Sample:
    samples = {s.name: s for s in load_samples()}
    if name not in samples:
        fail(f"no sample {name!r}: choose one of {', '.join(sorted(samples))}")
    return samples[name]


def _trace_from_file(path: Path) -> TraceInput:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        fail(f"cannot read {path}: {exc}")
    if isinstance(data, dict) and "trace" in data and "problem" not in data:
        data = data["trace"]  # a sample file: {"name", ..., "trace": {...}}
    try:
        return TraceInput.model_validate(data)
    except ValueError as exc:
        fail(f"{path} is not a valid trace: {exc}")


def samples_cmd(json_out: bool = typer.Option(False, "--json", help="Print the samples as JSON.")) -> None:
    """List the sample traces that ship with trustnode (submit one with `submit --sample NAME`)."""
    samples = load_samples()
    if json_out:
        print_json([s.model_dump(mode="json") for s in samples])
        return
    for s in samples:
        console.print(f"{s.name:<38} expected {s.expected_verdict:<5} {s.description}")


def submit(
    file: Path = typer.Argument(None, help="JSON trace: {problem, thinking | steps, output}."),
    sample: str = typer.Option(None, "--sample", metavar="NAME", help="Submit a bundled sample instead."),
    api: str = typer.Option(None, help="API base URL (default: from settings)."),
    key: str = typer.Option(None, "--key", envvar="TRUSTNODE_API_KEY", help="Provider API key."),
    sign_key: str = typer.Option(
        None,
        "--sign-key",
        envvar="TRUSTNODE_SIGN_KEY",
        help="Sign the request (EIP-191) with this private key.",
    ),
    wait: bool = typer.Option(False, "--wait", help="Follow the audit until it is finalized."),
    timeout: float = typer.Option(600, help="Seconds to wait with --wait."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Submit a reasoning trace for auditing (a file, or a bundled sample with --sample)."""
    from trustnode.api.auth import sign_request

    if (file is None) == (sample is None):
        fail("give a trace FILE or --sample NAME (see `trustnode samples`)")
    s = settings()
    base = (api or f"http://{s.api.host}:{s.api.port}").rstrip("/")
    trace = _sample(sample).trace if sample else _trace_from_file(file)
    body = trace.model_dump_json(exclude_none=True).encode()
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    elif sign_key:
        headers.update(sign_request(sign_key, "POST", "/v1/traces", body))
    else:
        fail("give --key (API key) or --sign-key (EIP-191 signature)")
    try:
        r = httpx.post(f"{base}/v1/traces", content=body, headers=headers, timeout=30)
    except httpx.HTTPError as exc:
        fail(f"the API at {base} is not reachable: {exc}")
    if r.status_code >= 400:
        try:
            message = r.json().get("error", r.text)
        except ValueError:
            message = r.text[:500]
        fail(f"{r.status_code}: {message}")
    trace_id = r.json()["trace_id"]
    if not wait:
        print_json(r.json()) if json_out else console.print(f"queued as {trace_id}")
        return
    view = follow_trace(base, trace_id, headers, timeout)
    if json_out:
        print_json(view)
    else:
        print_outcome(view)
    if view["status"] == "failed":
        raise typer.Exit(1)
    outcome = view.get("outcome")
    if outcome and SessionOutcome.model_validate(outcome).state.ended_without_verdict:
        raise typer.Exit(EXIT_NO_VERDICT)


def follow_trace(base: str, trace_id: str, headers: dict[str, str], timeout: float) -> dict[str, Any]:
    """Poll a trace with a progress bar until it is done or failed."""
    stages = list(TraceStage)
    auth = {k: v for k, v in headers.items() if k.lower() in ("authorization",)}
    # Progress goes to stderr so that `--json` output on stdout stays parseable.
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err_console,
    ) as progress:
        task = progress.add_task(f"{trace_id}: received", total=len(stages) - 1)
        deadline = time.monotonic() + timeout
        while True:
            try:
                view: dict[str, Any] = httpx.get(
                    f"{base}/v1/traces/{trace_id}", headers=auth, timeout=30
                ).json()
            except (httpx.HTTPError, ValueError) as exc:
                fail(f"lost the API at {base} while following {trace_id}: {exc}")
            stage = TraceStage(view["stage"])
            progress.update(task, completed=stage.order, description=f"{trace_id}: {stage.value}")
            if view["status"] in ("done", "failed"):
                return view
            if time.monotonic() > deadline:
                fail(f"{trace_id} not finished after {timeout:.0f}s (stage {stage.value})")
            time.sleep(0.5)


def print_outcome(view: dict[str, Any]) -> None:
    """A finished trace for people: its verdict line, failing segments and transactions."""
    if view["status"] == "failed":
        err_console.print(f"[red]{view['trace_id']} failed:[/] {view['error']}")
        return
    out = SessionOutcome.model_validate(view["outcome"])
    console.print(f"{view['trace_id']}: session {out.session_id}")
    _print_outcome_lines(out)
    for name, h in view.get("tx_hashes", {}).items():
        console.print(f"  {name:<13} {h}")


_COLOURS = {"PASS": "green", "FAIL": "red", "INCONCLUSIVE": "yellow"}


def _print_outcome_lines(out: SessionOutcome) -> None:
    colour = _COLOURS.get(out.verdict.value if out.verdict else "", "yellow")
    console.print(f"  [{colour}]{out.summary}[/]", highlight=False)
    console.print(
        f"  a PASS needs {out.beta_bps / 100:g}% of the segment weight (beta); fee {out.fee} TRUST",
        highlight=False,
    )
    for seg in out.failing_segments:
        where = f", step {seg.step_index}" if seg.step_index is not None else ""
        console.print(f"  failing segment {seg.index} ({seg.node_id or '?'}{where}, {seg.tier.value})")


def _session_id(ctx: Any, ident: str) -> int:
    """A session id, or the session of a trace this node submitted, checked against the chain it
    follows now (`SessionQueries.session_of_trace`): after a reset the old link is refused."""
    if ident.startswith("tr_"):
        from trustnode.node.jobs import JobNotFoundError
        from trustnode.node.queries import SessionQueries

        try:
            job = ctx.jobs.get(ident)
        except JobNotFoundError:
            fail(
                f"this node has no trace {ident} (its data directory is {ctx.settings.data_dir}; a trace is "
                "kept by the provider node that took it: run this with that node's TRUSTNODE_DATA_DIR, or "
                "query the session id `submit` printed)"
            )
        return SessionQueries(ctx).session_of_trace(job)
    if not ident.isdigit():
        fail(f"{ident!r} is neither a session id nor a trace id")
    return int(ident)


def query(
    ident: str = typer.Argument(..., metavar="ID", help="A session id (number) or a trace id (tr_...)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    proof: int = typer.Option(
        None, "--proof", metavar="INDEX", help="Also fetch and verify the Merkle proof of this segment."
    ),
) -> None:
    """Show the on-chain outcome of a session (or of a trace this node submitted).

    Exits 2 when the session ended without a verdict (cancelled or expired), with the reason.
    """
    from trustnode.node.context import NodeContext
    from trustnode.node.queries import SessionQueries, UnknownSessionError

    ctx = NodeContext(node_settings())
    with errors_as_exit(ChainError, UnknownSessionError, ValueError):
        sid = _session_id(ctx, ident)
        q = SessionQueries(ctx)
        view = q.session(sid)
        result: dict[str, Any] = view.model_dump(mode="json")
        if proof is not None:
            pv = q.proof(sid, proof)
            result["proof"] = {**pv.model_dump(mode="json"), "verifies_on_chain": q.verify_on_chain(pv)}
    out = view.outcome
    if json_out:
        print_json(result)
    else:
        _print_session(view, result, proof)
    if out.state.ended_without_verdict:
        if json_out:
            err_console.print(f"session {sid} {out.summary}", highlight=False)
        raise typer.Exit(EXIT_NO_VERDICT)


def _print_session(view: Any, result: dict[str, Any], proof: int | None) -> None:
    out: SessionOutcome = view.outcome
    if out.state.ended_without_verdict:
        err_console.print(f"[red]session {out.session_id} {out.summary}[/]", highlight=False)
        console.print(f"  merkle root {view.merkle_root}; fee {out.fee} TRUST (refunded)", highlight=False)
        return
    console.print(f"session {out.session_id} ({out.state.value})")
    _print_outcome_lines(out)
    bundle = f"; key bundle {view.manifest_cid}" if view.manifest_cid else ""
    console.print(f"  merkle root {view.merkle_root}{bundle}", highlight=False)
    for seg in out.segments:
        console.print(
            f"  segment {seg.index:>3} {seg.tier.value:<8} weight {seg.weight} pass {seg.pass_votes} "
            f"fail {seg.fail_votes} {seg.outcome.value:<12} {seg.cid or ''}",
            highlight=False,
        )
    for step, hashes in view.tx_hashes.items():
        console.print(f"  {step:<13} {', '.join(hashes)}")
    print_appeals(view)
    if proof is not None:
        p = result["proof"]
        console.print(
            f"  proof of segment {proof}: local {p['verifies_locally']}, on chain {p['verifies_on_chain']}"
        )


def print_appeals(view: Any) -> None:
    """Appeal window, every appeal round's panel and outcome, and the revealed canaries."""
    from trustnode.node.queries import SessionView
    from trustnode.node.round_views import AppealWindowView

    assert isinstance(view, SessionView)
    a = view.appeal
    if a is not None:
        if a.appealable_until is not None and a.appealable:
            # each segment's own window: a round extends only the windows of the segments it named
            windows = a.windows or [AppealWindowView(until=a.appealable_until, segments=a.appealable)]
            shown = "; ".join(
                f"until block {w.until} (segments {', '.join(map(str, w.segments))})" for w in windows
            )
            console.print(f"  [bold]appealable[/] {shown}", highlight=False)
        elif a.appealable_until is not None:
            console.print(
                f"  appealable from block {a.opens_at} until block {a.appealable_until}", highlight=False
            )
        elif a.final:
            console.print("  final: the outcome can no longer change", highlight=False)
        elif a.enabled and not a.running:
            opens = f" (opens at block {a.opens_at})" if a.opens_at is not None else ""
            console.print(f"  appeal window not open yet{opens}", highlight=False)
    for r in view.rounds:
        console.print(
            f"  appeal round {r.round} ({r.state}): by {r.appellant}, bond {r.bond} TRUST, depth {r.depth}, "
            f"lock refusals {'charged' if r.refusals_charged else 'not charged'}",
            highlight=False,
        )
        for s in r.segments:
            status = f" ({s.status})" if s.status and s.status != "decided" else ""
            console.print(
                f"    segment {s.index:>3} {s.tier.value:<8} {s.seats} seats: appealed {s.appealed.value}, "
                f"pass {s.pass_votes} fail {s.fail_votes} -> {s.outcome.value}{status}; {s.result or 'pending'}",
                highlight=False,
            )
        for v in r.votes:
            said = ", ".join(v.verdicts) if v.verdicts else ("committed" if v.committed else "not committed")
            console.print(f"    {v.auditor} seats {v.seats}: {said}", highlight=False)
    for c in view.canaries:
        votes = ", ".join(
            f"{v.auditor} {v.vote or 'unrevealed'}"
            + ("" if v.agrees is None else " (right)" if v.agrees else " (WRONG)")
            for v in c.votes
        )
        console.print(
            f"  gold canary segment {c.index} ({c.tier.value}): truth {c.truth.value}, majority "
            f"{c.outcome.value}; {votes}",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    app.command("submit")(submit)
    app.command("query")(query)
    app.command("samples")(samples_cmd)
