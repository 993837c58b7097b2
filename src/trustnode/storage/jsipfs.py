"""Start and stop a real js-ipfs daemon (npm `ipfs`) on 127.0.0.1, for tests and local networks.

The daemon runs offline (no swarm, no bootstrap) with its own repository, its API and gateway
on given ports. It is started in its own process group so stopping it ends the whole tree.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import httpx

from trustnode.chain.paths import INSTALL_HINT, find_tool
from trustnode.storage.errors import StorageError

_FATAL_LOG = ("EADDRINUSE", "EACCES", "LockExistsError")


class JsIpfsError(StorageError):
    """The js-ipfs daemon could not be initialised or started."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class JsIpfsDaemon:
    """One js-ipfs daemon with its own repository; `start()` may follow `stop()` (same repo, same pins)."""

    def __init__(
        self,
        repo_dir: Path | str,
        api_port: int | None = None,
        gateway_port: int | None = None,
        *,
        rpc_port: int | None = None,
        jsipfs: Path | str | None = None,
        startup_timeout_s: float = 90.0,
        stop_timeout_s: float = 15.0,
    ) -> None:
        self.repo_dir = Path(repo_dir)
        self.api_port = api_port or free_port()
        self.gateway_port = gateway_port or free_port()
        self.rpc_port = rpc_port or free_port()
        found = Path(jsipfs) if jsipfs else find_tool("jsipfs")
        if found is None or not found.exists():
            raise JsIpfsError(f"jsipfs not found in node_modules/.bin or PATH: {INSTALL_HINT}")
        self.jsipfs = found
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.log_path = self.repo_dir.parent / f"{self.repo_dir.name}.daemon.log"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def gateway_url(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["IPFS_PATH"] = str(self.repo_dir)
        return env

    def _addresses(self) -> dict[str, object]:
        return {
            "Swarm": [],
            "API": f"/ip4/127.0.0.1/tcp/{self.api_port}",
            "Gateway": f"/ip4/127.0.0.1/tcp/{self.gateway_port}",
            "RPC": f"/ip4/127.0.0.1/tcp/{self.rpc_port}",
        }

    def init(self) -> None:
        """`jsipfs init` (empty repo, test profile) unless the repository already exists.

        The addresses go in through `--defaultConfig` in the same call: each `jsipfs config`
        invocation costs a Node start-up (~1.5 s), so one call instead of four.
        """
        config_file = self.repo_dir / "config"
        if config_file.is_file():
            self._write_addresses(config_file)
            return
        self.repo_dir.parent.mkdir(parents=True, exist_ok=True)
        defaults = self.repo_dir.parent / f"{self.repo_dir.name}.defaults.json"
        defaults.write_text(json.dumps({"Addresses": self._addresses()}))
        cmd = [str(self.jsipfs), "init", "--emptyRepo", "--profile", "test", "--defaultConfig", str(defaults)]
        res = subprocess.run(cmd, env=self._env(), capture_output=True, timeout=120, check=False)
        if res.returncode != 0 or not config_file.is_file():
            out = (res.stdout + res.stderr).decode(errors="replace")[-2000:]
            raise JsIpfsError(f"jsipfs init failed (exit {res.returncode}): {out}")
        self._write_addresses(config_file)

    def _write_addresses(self, config_file: Path) -> None:
        """Pin the ports in the repo config (also on restart, in case the ports were changed)."""
        cfg = json.loads(config_file.read_text())
        cfg.setdefault("Addresses", {}).update(self._addresses())
        config_file.write_text(json.dumps(cfg, indent=2))

    def start(self) -> JsIpfsDaemon:
        """Init if needed, launch `jsipfs daemon --offline`, return once `/api/v0/version` answers."""
        if self.running:
            return self
        self.init()
        # A repo lock left by a killed daemon would make the next start refuse the repo.
        lock = self.repo_dir / "repo.lock"
        if lock.is_dir():
            for p in lock.iterdir():
                p.unlink()
            lock.rmdir()
        elif lock.exists():
            lock.unlink()
        log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child for its lifetime
        try:
            self._proc = subprocess.Popen(
                [str(self.jsipfs), "daemon", "--offline"],
                env=self._env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            log.close()
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise JsIpfsError(f"js-ipfs daemon exited with {self._proc.returncode}: {self._log_tail()}")
            fatal = self._fatal_in_log(log_start)
            if fatal:
                # js-ipfs logs some start-up failures (a taken port) and then hangs instead of exiting.
                self.stop()
                raise JsIpfsError(f"js-ipfs daemon failed to start ({fatal}): {self._log_tail()}")
            try:
                r = httpx.post(f"{self.api_url}/api/v0/version", timeout=2.0)
                if r.status_code == 200 and "Version" in r.json():
                    return self
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.2)
        self.stop()
        raise JsIpfsError(f"js-ipfs daemon not ready after {self.startup_timeout_s}s: {self._log_tail()}")

    def stop(self) -> None:
        """SIGTERM the daemon's process group, SIGKILL it if it lingers; idempotent."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=self.stop_timeout_s)
        # Children that ignored the TERM (none expected) go with the group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def _fatal_in_log(self, start: int) -> str | None:
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(start)
                text = fh.read().decode(errors="replace")
        except OSError:
            return None
        for pattern in _FATAL_LOG:
            if pattern in text:
                return pattern
        return None

    def _log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_bytes()[-n:].decode(errors="replace")
        except OSError:
            return "(no log)"

    def __enter__(self) -> JsIpfsDaemon:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
