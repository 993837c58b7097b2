"""Node commands: `api serve`, `worker`, `auditor run` (each checks its configuration at start-up)."""

from __future__ import annotations

import signal
import socket
import threading
from decimal import Decimal
from typing import TYPE_CHECKING

import typer

from trustnode.chain.accounts import KeyConfigError
from trustnode.chain.errors import ChainError
from trustnode.chain.units import parse_trust
from trustnode.cli.common import ROLES_HELP, console, errors_as_exit, fail, node_settings, settings, warn
from trustnode.cli.startup import (
    PROVIDER_ACCOUNT_RISKS,
    StartupError,
    check_auditor_funds,
    check_canary_operator,
    check_service_urls,
    decomposer_mode,
    ipfs_warning,
    judge_endpoint,
    provider_account_reason,
    role_warnings,
)
from trustnode.config import Settings
from trustnode.models.enums import Tier
from trustnode.node.chain_identity import CANARY_STATE, PAGE_STATE, ChainGuard, ChainReplacedError
from trustnode.node.logging import configure_logging

if TYPE_CHECKING:
    from fastapi import FastAPI

    from trustnode.node.canary_operator import CanaryOperator
    from trustnode.node.context import NodeContext

api_app = typer.Typer(
    help=f"The provider/user REST API (signs as the provider's account). {ROLES_HELP}", no_args_is_help=True
)
auditor_app = typer.Typer(help=f"The auditor daemon. {ROLES_HELP}", no_args_is_help=True)


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def _provider_start(s: Settings, run_worker: bool) -> tuple[NodeContext, str]:
    """The provider node's context and decomposer mode, after its start-up checks."""
    from trustnode.node.context import NodeContext

    mode = "offline"
    with errors_as_exit(StartupError):
        check_service_urls(s)
    if run_worker:
        with errors_as_exit(StartupError):
            mode, line = decomposer_mode(s)
        console.print(line)
    ctx = NodeContext(s)
    with errors_as_exit(ChainReplacedError):  # its jobs' sessions (or its pages' votes) are another chain's
        _start_guard(ctx, s, run_worker).check(force=True)
    if run_worker:  # a page-only node (a human auditor's) signs nothing as the provider
        for message in role_warnings(ctx, "provider"):
            warn(message)
        ipfs = ipfs_warning(s)
        if ipfs is not None:
            warn(ipfs)
    return ctx, mode


def _start_guard(ctx: NodeContext, s: Settings, run_worker: bool) -> ChainGuard:
    """The start-up chain check of `api serve`: a page-only node (a human auditor's pages, a canary
    operator) on a data directory that served another chain showed that chain's seats and jobs against
    the new one, and an operator's tickets would be revealed there: it refuses like the provider."""
    if run_worker:
        return ctx.chain_guard
    state = CANARY_STATE if s.canary_operator.enabled else PAGE_STATE
    return ChainGuard(None if ctx.fixed_port is not None else ctx.client, s.data_dir / "provider", state)


def _listen(host: str, port: int) -> socket.socket:
    """The API's socket, bound before anything starts: a port in use was said by uvicorn only after
    "trustnode API on ..." and after the provider's workers had started (README operator, a second
    `api serve` on 8080)."""
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
    except OSError as exc:
        fail(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} (another node there? give this one "
            "another --port, or TRUSTNODE_API__PORT)"
        )
    sock.set_inheritable(True)
    return sock


def _operator_account(s: Settings) -> Settings:
    """A canary operator without its own key or account index signs with the devnet's operator
    account (authorized by `devnet up`), never with the provider's."""
    from trustnode.chain.devnet import CANARY_OPERATOR_ACCOUNT

    raw = settings()
    chain = raw.chain
    if chain.private_key or chain.keystore_path or "account_index" in chain.model_fields_set:
        return s
    return s.model_copy(
        update={"chain": s.chain.model_copy(update={"account_index": CANARY_OPERATOR_ACCOUNT})}
    )


def _start_canary_operator(app: FastAPI, stop: threading.Event) -> threading.Thread:
    """The operator's reveal loop (and commits a restart left unsent), on the app's ticket store."""
    operator: CanaryOperator = app.state.canary_operator
    t = threading.Thread(target=operator.run, args=(stop,), name="canary-operator", daemon=True)
    t.start()
    return t


def _start_appeals(ctx: NodeContext, s: Settings, stop: threading.Event) -> threading.Thread:
    """The provider's appeal duties (draw, key manifests and ends of its sessions' appeal rounds)."""
    from trustnode.node.appeals import ProviderAppeals

    duties = ProviderAppeals(ctx, privacy_share=s.privacy.max_decrypt_share)
    t = threading.Thread(target=duties.run, args=(stop,), name="provider-appeals", daemon=True)
    t.start()
    return t


@api_app.command("serve")
def api_serve(
    host: str = typer.Option(None, help="Bind address (default: settings, 127.0.0.1)."),
    port: int = typer.Option(None, help="Port (default: settings, 8080)."),
    worker: bool = typer.Option(None, "--worker/--no-worker", help="Run the provider pipeline worker here."),
    threads: int = typer.Option(4, help="Provider worker threads."),
) -> None:
    """Serve the REST API and the pages (and, by default, run the provider pipeline).

    With TRUSTNODE_CANARY_OPERATOR__ENABLED=true (and --no-worker) it signs by default with devnet account 20 (the devnet's canary operator), serves /v1/canary and commits and reveals gold canaries; it refuses to start unless its account is an authorized canary operator and IPFS is reachable. At start-up an LLM decomposer's endpoint is probed: a wrong one is refused, or replaced by the offline decomposer when TRUSTNODE_DECOMPOSER__OFFLINE_FALLBACK is set. Otherwise, without TRUSTNODE_CHAIN__ACCOUNT_INDEX it signs with devnet account 1, the provider's.
    """
    import uvicorn

    from trustnode.api.app import create_app
    from trustnode.api.auth import api_warnings, check_api_settings
    from trustnode.api.server import uvicorn_config
    from trustnode.node.canary_client import NoOperator
    from trustnode.node.provider import ProviderPipeline

    s = node_settings("provider")
    if s.canary_operator.enabled:
        s = _operator_account(s)
    configure_logging(s)
    run_worker = s.api.worker if worker is None else worker
    # Without a worker here nothing is spent, and a page-only node (a human auditor's) takes no
    # traces: the rule that someone must be able to submit applies to nodes that run the pipeline.
    checked = (
        s
        if run_worker
        else s.model_copy(update={"api": s.api.model_copy(update={"accept_any_signer": True})})
    )
    problems = check_api_settings(checked)
    if problems:
        fail("the API cannot start as configured:\n  " + "\n  ".join(problems))
    for message in api_warnings(s):
        warn(message)
    ctx, mode = _provider_start(s, run_worker)
    if s.canary_operator.enabled:
        with errors_as_exit(StartupError):
            console.print(check_canary_operator(ctx, run_worker=run_worker))
    app = create_app(ctx)
    config = uvicorn_config(app, s, host=host, port=port)
    sock = _listen(config.host, config.port)  # before any worker starts signing
    stop = threading.Event()
    pool: list[threading.Thread] = []
    if s.canary_operator.enabled:
        pool.append(_start_canary_operator(app, stop))
    if run_worker:
        with errors_as_exit(NoOperator):  # canaries wanted and no operator named: refuse, no traceback
            pipeline = ProviderPipeline(
                ctx,
                decomposer=mode,  # type: ignore[arg-type]
                privacy_share=s.privacy.max_decrypt_share,
            )
        pipeline.observe = getattr(app.state, "observe_stage", None)
        pipeline.on_llm_usage = getattr(app.state, "record_llm_usage", None)
        for i in range(max(1, threads)):
            t = threading.Thread(target=pipeline.run, args=(stop,), name=f"provider-{i}", daemon=True)
            t.start()
            pool.append(t)
        pool.append(_start_appeals(ctx, s, stop))
    server = uvicorn.Server(config)

    def replaced(_: ChainReplacedError) -> None:
        stop.set()
        server.should_exit = True

    ctx.chain_guard.on_replaced = replaced
    console.print(
        f"trustnode API on http://{config.host}:{config.port} (worker: {'on' if run_worker else 'off'})"
    )
    try:
        server.run(sockets=[sock])
    finally:
        stop.set()
        for t in pool:
            t.join(timeout=10)
    if ctx.chain_guard.replaced is not None:
        fail(str(ctx.chain_guard.replaced))


def worker_cmd(threads: int = typer.Option(2, help="Worker threads.")) -> None:
    """Run only the provider pipeline worker (no HTTP), with the same start-up checks as `api serve`."""
    from trustnode.node.canary_client import NoOperator
    from trustnode.node.provider import ProviderPipeline

    s = node_settings("provider")
    configure_logging(s)
    ctx, mode = _provider_start(s, True)
    with errors_as_exit(NoOperator):
        pipeline = ProviderPipeline(
            ctx,
            decomposer=mode,  # type: ignore[arg-type]
            privacy_share=s.privacy.max_decrypt_share,
        )
    stop = _stop_on_signals()
    ctx.chain_guard.on_replaced = lambda _: stop.set()
    pool = [threading.Thread(target=pipeline.run, args=(stop,), daemon=True) for _ in range(max(1, threads))]
    for t in pool:
        t.start()
    pool.append(_start_appeals(ctx, s, stop))
    console.print(f"provider worker running ({threads} threads); Ctrl-C to stop")
    while not stop.is_set():
        stop.wait(0.5)
    for t in pool:
        t.join(timeout=10)
    if ctx.chain_guard.replaced is not None:
        fail(str(ctx.chain_guard.replaced))


@auditor_app.command("run")
def auditor_run(
    tier: str = typer.Option(..., "--tier", metavar="computer|llm|human", help="The auditor's tier."),
    stake: Decimal = typer.Option(
        None, "--stake", metavar="TRUST", help="Self-stake in TRUST (default: settings auditor.stake)."
    ),
    once: bool = typer.Option(False, "--once", help="Process what is there now, then exit."),
    lazy: bool = typer.Option(
        False,
        "--lazy",
        help="DEMO ONLY: vote PASS on every seat without reading it (the auditor gold canaries catch).",
    ),
    share_provider_account: bool = typer.Option(
        False,
        "--share-provider-account",
        help="Run on a provider's account anyway (refused by default: it is never drawn into its own "
        "sessions, and two processes would sign with one key). Only to audit other providers' traces.",
    ),
) -> None:
    """Run the auditor daemon: register and stake, then audit, commit, reveal and settle.

    Each auditor needs its own account (on the devnet TRUSTNODE_CHAIN__ACCOUNT_INDEX=2..19) and its own data directory. A provider's account (devnet account 1, or one that opened sessions) is refused unless --share-provider-account: the chain never draws a provider into its own sessions, so it would stake for nothing on its own traces, and the two processes would race for one key's nonces. At start-up it checks its tokens and gas, and an LLM auditor probes its endpoint (TRUSTNODE_LLM__BASE_URL).
    """
    from trustnode.node.auditor import AuditorDaemon
    from trustnode.node.backends import backend_for_tier, undecided_policy
    from trustnode.node.context import NodeContext

    try:
        t = Tier.parse(tier)
    except KeyError:
        fail(f"unknown tier {tier!r}: use computer, llm or human")
    s = node_settings("auditor")
    configure_logging(s)
    with errors_as_exit(StartupError):
        check_service_urls(s)
    ipfs = ipfs_warning(s, "auditor")  # the README operator's mistyped port was met only at its first seat
    if ipfs is not None:
        warn(ipfs)
    if t == Tier.LLM:
        with errors_as_exit(StartupError):
            console.print(judge_endpoint(s))
    ctx = NodeContext(s)
    want = s.auditor.stake if stake is None else parse_trust(stake)
    with errors_as_exit(ChainError, ChainReplacedError, KeyConfigError, StartupError, ValueError):
        provider = provider_account_reason(ctx)
        if provider is not None and not share_provider_account:
            fail(
                f"this auditor would sign with a provider's account: {provider}. Refused: "
                f"{PROVIDER_ACCOUNT_RISKS}. Give the auditor its own account (on the devnet "
                "TRUSTNODE_CHAIN__ACCOUNT_INDEX=2..19), or pass --share-provider-account to audit other "
                "providers' traces with it anyway"
            )
        if provider is not None:
            warn(f"--share-provider-account: {provider}; it is never drawn into its own sessions")
        for message in role_warnings(ctx, "auditor"):
            warn(message)
        check_auditor_funds(ctx, want)
        address = ctx.client().address
        backend = backend_for_tier(t, s, address, lazy=lazy)
        daemon = AuditorDaemon(ctx, t, backend, undecided_policy=undecided_policy(t))
        daemon.ensure_registered(stake=want)
    console.print(f"auditor {address} ({t.name.lower()}) registered and staked; following the chain")
    if lazy:
        warn("--lazy: this auditor votes PASS without reading; gold canaries will catch and slash it")
    if once:
        with errors_as_exit(ChainError):
            daemon.tick()
        return
    stop = _stop_on_signals()
    with errors_as_exit(ChainReplacedError):
        daemon.run(stop)


def register(app: typer.Typer) -> None:
    app.add_typer(api_app, name="api")
    app.add_typer(auditor_app, name="auditor")
    app.command("worker")(worker_cmd)
