"""Node commands: `api serve`, `worker`, `submit`, `query`, `auditor run`."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from trustnode.chain.errors import ChainError
from trustnode.cli.common import console, err_console, errors_as_exit, fail, print_json, settings
from trustnode.models.enums import Tier
from trustnode.models.jobs import TraceStage
from trustnode.models.trace import TraceInput
from trustnode.node.logging import configure_logging

api_app = typer.Typer(help="The provider/user REST API.", no_args_is_help=True)
auditor_app = typer.Typer(help="The auditor daemon.", no_args_is_help=True)


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


@api_app.command("serve")
def api_serve(
    host: str = typer.Option(None, help="Bind address (default: settings, 127.0.0.1)."),
    port: int = typer.Option(None, help="Port (default: settings, 8080)."),
    worker: bool = typer.Option(None, "--worker/--no-worker", help="Run the provider pipeline worker here."),
    threads: int = typer.Option(4, help="Provider worker threads."),
) -> None:
    """Serve the REST API (and, by default, run the provider pipeline)."""
    import uvicorn

    from trustnode.api.app import create_app
    from trustnode.node.context import NodeContext
    from trustnode.node.provider import ProviderPipeline

    s = settings()
    configure_logging(s)
    ctx = NodeContext(s)
    app = create_app(ctx)
    stop = threading.Event()
    run_worker = s.api.worker if worker is None else worker
    pool: list[threading.Thread] = []
    if run_worker:
        pipeline = ProviderPipeline(ctx, decomposer=s.decomposer.mode)
        pipeline.observe = getattr(app.state, "observe_stage", None)
        pipeline.on_llm_usage = getattr(app.state, "record_llm_usage", None)
        for i in range(max(1, threads)):
            t = threading.Thread(target=pipeline.run, args=(stop,), name=f"provider-{i}", daemon=True)
            t.start()
            pool.append(t)
    config = uvicorn.Config(app, host=host or s.api.host, port=port or s.api.port, log_level="warning")
    server = uvicorn.Server(config)
    console.print(
        f"trustnode API on http://{config.host}:{config.port} (worker: {'on' if run_worker else 'off'})"
    )
    try:
        server.run()
    finally:
        stop.set()
        for t in pool:
            t.join(timeout=10)


def worker_cmd(threads: int = typer.Option(2, help="Worker threads.")) -> None:
    """Run only the provider pipeline worker (no HTTP)."""
    from trustnode.node.context import NodeContext
    from trustnode.node.provider import ProviderPipeline

    s = settings()
    configure_logging(s)
    ctx = NodeContext(s)
    pipeline = ProviderPipeline(ctx, decomposer=s.decomposer.mode)
    stop = _stop_on_signals()
    pool = [threading.Thread(target=pipeline.run, args=(stop,), daemon=True) for _ in range(max(1, threads))]
    for t in pool:
        t.start()
    console.print(f"provider worker running ({threads} threads); Ctrl-C to stop")
    while not stop.is_set():
        stop.wait(0.5)


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


def submit(
    file: Path = typer.Argument(..., help="JSON trace: {problem, thinking | steps, output}."),
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
    """Submit a reasoning trace for auditing."""
    from trustnode.api.auth import sign_request

    s = settings()
    base = api or f"http://{s.api.host}:{s.api.port}"
    trace = _trace_from_file(file)
    body = trace.model_dump_json(exclude_none=True).encode()
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    elif sign_key:
        headers.update(sign_request(sign_key, body))
    else:
        fail("give --key (API key) or --sign-key (EIP-191 signature)")
    try:
        r = httpx.post(f"{base}/v1/traces", content=body, headers=headers, timeout=30)
    except httpx.HTTPError as exc:
        fail(f"the API at {base} is not reachable: {exc}")
    if r.status_code >= 400:
        fail(f"{r.status_code}: {r.json().get('error', r.text)}")
    trace_id = r.json()["trace_id"]
    if not wait:
        print_json(r.json()) if json_out else console.print(f"queued as {trace_id}")
        return
    view = follow_trace(base, trace_id, headers, timeout)
    if json_out:
        print_json(view)
    else:
        print_outcome(view)


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
            view: dict[str, Any] = httpx.get(f"{base}/v1/traces/{trace_id}", headers=auth, timeout=30).json()
            stage = TraceStage(view["stage"])
            progress.update(task, completed=stage.order, description=f"{trace_id}: {stage.value}")
            if view["status"] in ("done", "failed"):
                return view
            if time.monotonic() > deadline:
                fail(f"{trace_id} not finished after {timeout:.0f}s (stage {stage.value})")
            time.sleep(0.5)


def print_outcome(view: dict[str, Any]) -> None:
    if view["status"] == "failed":
        console.print(f"[red]{view['trace_id']} failed:[/] {view['error']}")
        return
    out = view.get("outcome") or {}
    colour = "green" if out.get("passed") else "red"
    console.print(
        f"{view['trace_id']}: session {view['session_id']} [{colour}]{out.get('verdict')}[/] "
        f"(score {out.get('score_bps', 0) / 100:.1f}%)"
    )
    for seg in out.get("failing_segments", []):
        console.print(f"  failing segment {seg['index']} ({seg['node_id']}, step {seg['step_index']})")
    for name, h in view.get("tx_hashes", {}).items():
        console.print(f"  {name:<13} {h}")


def query(
    ident: str = typer.Argument(..., help="A session id (number) or a trace id (tr_...)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    proof: int = typer.Option(
        None, "--proof", help="Also fetch and verify the Merkle proof of this segment."
    ),
) -> None:
    """Show the on-chain outcome of a session (or of a trace this node submitted)."""
    from trustnode.node.context import NodeContext
    from trustnode.node.queries import SessionQueries, UnknownSessionError

    s = settings()
    ctx = NodeContext(s)
    with errors_as_exit(ChainError, UnknownSessionError, ValueError):
        if ident.startswith("tr_"):
            from trustnode.node.jobs import JobNotFoundError

            try:
                job = ctx.jobs.get(ident)
            except JobNotFoundError:
                fail(f"this node has no trace {ident}")
            if job.session_id is None:
                fail(f"trace {ident} has no session yet (stage {job.stage.value})")
            sid = job.session_id
        else:
            if not ident.isdigit():
                fail(f"{ident!r} is neither a session id nor a trace id")
            sid = int(ident)
        q = SessionQueries(ctx)
        view = q.session(sid)
        result: dict[str, Any] = view.model_dump(mode="json")
        if proof is not None:
            pv = q.proof(sid, proof)
            result["proof"] = {**pv.model_dump(mode="json"), "verifies_on_chain": q.verify_on_chain(pv)}
    if json_out:
        print_json(result)
        return
    verdict = view.verdict or view.status
    console.print(
        f"session {sid}: {verdict} (status {view.status}, score {(view.score_bps or 0) / 100:.1f}%)"
    )
    console.print(f"  merkle root {view.merkle_root}; key bundle {view.manifest_cid}")
    for seg in view.segments:
        console.print(
            f"  segment {seg.index:>3} {seg.tier:<8} w={seg.weight} pass={seg.pass_votes} fail={seg.fail_votes} "
            f"{seg.outcome:<12} {seg.cid or ''}"
        )
    for step, hashes in view.tx_hashes.items():
        console.print(f"  {step:<13} {', '.join(hashes)}")
    if proof is not None:
        p = result["proof"]
        console.print(
            f"  proof of segment {proof}: local {p['verifies_locally']}, on chain {p['verifies_on_chain']}"
        )


@auditor_app.command("run")
def auditor_run(
    tier: str = typer.Option(..., "--tier", help="computer, llm or human."),
    stake: int = typer.Option(None, help="Self-stake in token wei (default: settings)."),
    once: bool = typer.Option(False, "--once", help="Process what is there now, then exit."),
) -> None:
    """Run the auditor daemon: register and stake, then audit, commit, reveal and settle."""
    from trustnode.node.auditor import AuditorDaemon
    from trustnode.node.backends import backend_for_tier, undecided_policy
    from trustnode.node.context import NodeContext

    try:
        t = Tier.parse(tier)
    except KeyError:
        fail(f"unknown tier {tier!r}: use computer, llm or human")
    s = settings()
    configure_logging(s)
    ctx = NodeContext(s)
    with errors_as_exit(ChainError, ValueError):
        address = ctx.client().address
        daemon = AuditorDaemon(ctx, t, backend_for_tier(t, s, address), undecided_policy=undecided_policy(t))
        daemon.ensure_registered(stake=stake)
    console.print(f"auditor {address} ({t.name.lower()}) registered and staked; following the chain")
    if once:
        with errors_as_exit(ChainError):
            daemon.tick()
        return
    stop = _stop_on_signals()
    daemon.run(stop)


def register(app: typer.Typer) -> None:
    app.add_typer(api_app, name="api")
    app.add_typer(auditor_app, name="auditor")
    app.command("worker")(worker_cmd)
    app.command("submit")(submit)
    app.command("query")(query)
