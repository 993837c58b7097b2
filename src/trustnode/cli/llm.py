"""`trustnode llm`: an LLM endpoint on this machine, and a check of the configured ones.

- `serve`: the bundled SmolLM2-135M (or any GGUF) behind llama.cpp's OpenAI-compatible
  server on 127.0.0.1: an LLM tier with no account anywhere;
- `fake-serve`: the deterministic test server (scripted stand-ins, not a model);
- `probe`: is each configured endpoint (judge, decomposer) an LLM this node can use?
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path

import typer
from rich.markup import escape

from trustnode.cli.common import console, fail, print_json, settings
from trustnode.llm.client import LLMClient
from trustnode.llm.errors import LLMError
from trustnode.llm.fake_server import FakeOpenAIServer, load_responder, route_by_schema
from trustnode.llm.local_server import DEFAULT_CONTEXT, LocalLLMServer, LocalModelUnavailable
from trustnode.llm.settings import LLMSettings

llm_app = typer.Typer(help="A local LLM endpoint (real model or test server), and endpoint checks.")

JUDGE_STANDIN = "trustnode.audit.llm_judge:arithmetic_judge_responder"
DECOMPOSER_STANDIN = "trustnode.hdag.fake_responder:respond"


class Role(StrEnum):
    judge = "judge"
    decomposer = "decomposer"
    both = "both"


def _set_when_done(wait: Callable[[], object], stopped: threading.Event) -> None:
    """In a thread: call `wait` (until a server stops), then set `stopped`."""

    def run() -> None:
        wait()
        stopped.set()

    threading.Thread(target=run, daemon=True, name="server-watch").start()


def _wait_for_signal(stopped: threading.Event) -> None:
    """Block until Ctrl-C / SIGTERM or until `stopped` is set."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.set())
    while not stopped.wait(0.5):
        pass


def _print_endpoint(base_url: str, model: str, extra: dict[str, str]) -> None:
    console.print(f"base URL: [bold]{base_url}[/]  model: [bold]{model}[/]")
    console.print("use it for the LLM auditors (judge), the decomposer, or both:")
    for prefix in ("TRUSTNODE_LLM__", "TRUSTNODE_DECOMPOSER__LLM__"):
        line = " ".join(
            f"{prefix}{k}={v}" for k, v in {"BASE_URL": base_url, "MODEL": model, **extra}.items()
        )
        console.print(f"  {line}", highlight=False)


@llm_app.command("serve")
def serve(
    model: Path | None = typer.Option(
        None, "--model", help="A GGUF file (default: the bundled SmolLM2-135M)."
    ),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0: a free one)."),
    threads: int | None = typer.Option(None, "--threads", min=1, help="CPU threads (default: all cores)."),
    context: int = typer.Option(DEFAULT_CONTEXT, "--context", min=512, help="Context window in tokens."),
    ready_timeout: float = typer.Option(
        180.0, "--ready-timeout", min=1, help="Seconds to wait for the model."
    ),
) -> None:
    """Serve a local model over an OpenAI-compatible API on 127.0.0.1 until Ctrl-C."""
    log = settings().data_dir / "logs" / "llm-server.log"
    try:
        srv = LocalLLMServer(
            model, port=port, threads=threads, context=context, ready_timeout_s=ready_timeout, log_path=log
        )
    except LocalModelUnavailable as exc:
        fail(str(exc))
    console.print(f"loading {srv.model_path.name} ({srv.threads} threads, context {context}); log: {log}")
    try:
        srv.start()
    except LLMError as exc:
        fail(str(exc))
    try:
        env = srv.env()
        _print_endpoint(
            srv.base_url,
            srv.model,
            {
                k.removeprefix("TRUSTNODE_LLM__"): v
                for k, v in env.items()
                if not k.endswith(("BASE_URL", "MODEL"))
            },
        )
        console.print("the server runs one request at a time; Ctrl-C stops it")
        stopped = threading.Event()
        proc = srv.proc
        assert proc is not None
        _set_when_done(proc.wait, stopped)
        _wait_for_signal(stopped)
        if not srv.alive:
            fail(f"the model server stopped by itself; see {log}")
    finally:
        srv.stop()


@llm_app.command("fake-serve")
def fake_serve(
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0: a free one)."),
    role: Role = typer.Option(Role.both, "--role", help="Which stand-in answers: judge, decomposer or both."),
    responder: str | None = typer.Option(
        None, "--responder", help="Your own responder, package.module:function (replaces --role)."
    ),
    formats: str = typer.Option(
        "json_schema,json_object", "--formats", help="response_format types it accepts (empty: none)."
    ),
    lifetime: float = typer.Option(3600.0, "--lifetime", min=1, help="Seconds before it stops by itself."),
) -> None:
    """Serve the deterministic test server: scripted stand-ins, NOT a language model."""
    if responder:
        answer = load_responder(responder)
    else:
        routes = {}
        if role in (Role.judge, Role.both):
            routes["judge_"] = load_responder(JUDGE_STANDIN)
            routes["trustnode_probe_judge"] = routes["judge_"]
        if role in (Role.decomposer, Role.both):
            routes["hdag_"] = load_responder(DECOMPOSER_STANDIN)
            routes["trustnode_probe_decomposer"] = routes["hdag_"]
        answer = route_by_schema(routes)
    srv = FakeOpenAIServer(
        responder=answer,
        response_formats=[f for f in formats.split(",") if f],
        port=port,
        lifetime_s=lifetime,
    ).start()
    try:
        console.print(
            f"test server (deterministic stand-ins for the {responder or role.value}, "
            f"not a model); stops after {lifetime:g}s or on Ctrl-C"
        )
        _print_endpoint(srv.base_url, srv.model, {})
        stopped = threading.Event()
        _set_when_done(srv.wait, stopped)
        _wait_for_signal(stopped)
    finally:
        srv.stop()


def _probe_one(name: str, llm: LLMSettings, role: str) -> dict[str, object]:
    if not llm.base_url:
        return {"endpoint": name, "ok": None, "detail": "not configured (offline)"}
    try:
        with LLMClient(llm) as client:
            report = client.probe(role)
    except LLMError as exc:
        return {"endpoint": name, "ok": False, "base_url": llm.base_url, "detail": str(exc)}
    return {"endpoint": name, "ok": True, "detail": report.summary(), "report": report.model_dump()}


@llm_app.command("probe")
def probe(
    role: Role = typer.Option(
        Role.both, "--role", help="Check the judge's endpoint, the decomposer's, or both."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the reports as JSON."),
) -> None:
    """Check that the configured LLM endpoints are LLMs this node can use (exit 1 if not)."""
    cfg = settings()
    results = []
    if role in (Role.judge, Role.both):
        results.append(_probe_one("judge (llm)", cfg.llm, "judge"))
    if role in (Role.decomposer, Role.both):
        results.append(_probe_one("decomposer (decomposer.llm)", cfg.decomposer.llm, "decomposer"))
    if as_json:
        print_json(results)
    else:
        for r in results:
            mark = {True: "[green]ok[/]", False: "[red]FAILED[/]", None: "[dim]skipped[/]"}[r["ok"]]  # type: ignore[index]
            console.print(f"{mark} {escape(str(r['endpoint']))}: {escape(str(r['detail']))}", highlight=False)
    if any(r["ok"] is False for r in results):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(llm_app, name="llm")
