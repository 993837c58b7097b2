"""A canary operator for the in-memory network: the real operator node app (`api.app.create_app`
with `canary_operator.enabled`) served over real HTTP on 127.0.0.1, signing with its own dev
account on the MemoryNet's chain. The provider talks to it with the real `CanaryClient`.

`stop()` / `start()` take it down and bring it back on the same port (an operator outage);
`tick()` runs its daemon's pass (the reveal in the canary window): it is added to the net's
per-round ticks, and the server stops with `net.close()`."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import uvicorn

from tests.conftest import free_port
from tests.node.memnet import MemoryNet, address
from trustnode.api.app import create_app
from trustnode.config import Settings
from trustnode.node.canary_client import CanaryClient
from trustnode.node.canary_operator import CanaryOperator
from trustnode.node.context import NodeContext

OPERATOR = 11
KEY = "operator-test-key"


class OperatorNode:
    def __init__(
        self, net: MemoryNet, root: Path, *, account: int = OPERATOR, seed: int | None = None
    ) -> None:
        self.address = address(account)
        self.net = net
        # Governance (the core's owner) authorizes it: only an authorized operator commits canaries.
        net.chain.port(net.chain.owner).set_canary_operator(self.address, True)
        settings = Settings(
            data_dir=root,
            canary_operator={"enabled": True},  # type: ignore[arg-type]
            api={"api_keys": [KEY], "worker": False},  # type: ignore[arg-type]
        )
        self.ctx = NodeContext(settings, port=net.chain.port(self.address), store=net.store)
        self.app = create_app(self.ctx)
        self.operator: CanaryOperator = self.app.state.canary_operator
        if seed is not None:
            self.operator.rng = random.Random(seed)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.start()
        net.ticks.append(self.tick)
        net.on_close.append(self.stop)

    def client(self, **kw: float) -> CanaryClient:
        return CanaryClient(self.url, KEY, **kw)  # type: ignore[arg-type]

    def start(self) -> None:
        server = uvicorn.Server(
            uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 15
        while not server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the operator app did not start")
            time.sleep(0.02)
        self._server, self._thread = server, thread

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._server = self._thread = None

    @property
    def up(self) -> bool:
        return self._server is not None

    def tick(self) -> None:
        if self.up:
            self.operator.tick()
