"""A whole local network in separate processes: anvil, js-ipfs, an LLM endpoint, a canary
operator node (when the protocol wants gold canaries), the provider API node and several
auditor daemons. Used by `trustnode demo`, the end-to-end tests and the throughput benchmark,
so all three exercise exactly the same wiring.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from trustnode.audit.human_queue import HumanQueue
from trustnode.chain import devnet
from trustnode.chain.accounts import dev_account
from trustnode.chain.client import ChainClient
from trustnode.chain.deployment import Deployment
from trustnode.chain.port.evm import Web3Port
from trustnode.chain.protocol import DEVNET_SESSION_PARAMS, Protocol, SessionParams
from trustnode.chain.protocol.models_appeals import AppealModuleParams
from trustnode.models.enums import Tier, Verdict
from trustnode.node.cluster_api import ProviderAPIClient
from trustnode.node.processes import ManagedProcess, wait_http
from trustnode.storage.jsipfs import JsIpfsDaemon, free_port

TOKEN = 10**18


class AuditorSpec(BaseModel):
    name: str
    tier: Tier
    account: int = Field(ge=2, le=19, description="anvil dev account (0 deploys, 1 is the provider)")
    lazy: bool = Field(
        default=False, description="Runs `auditor run --lazy` (always PASS): the demo's lazy auditor."
    )
    later: bool = Field(
        default=False, description="Not started by `start()`: the caller starts it (`start_auditor`)."
    )


class ClusterConfig(BaseModel):
    workdir: Path
    auditors: list[AuditorSpec]
    seats_per_tier: tuple[int, int, int] = (2, 1, 1)
    seat_cap: int = Field(default=32, description="A four-auditor network cannot keep a 25% cap.")
    beta_bps: int = Field(
        default=9000,
        description="Trace PASS needs 90% of the segment weight to PASS: one definite error in a short trace fails it.",
    )
    batch_size: int = 2
    batch_wait_s: float = 1.0
    api_key: str = "demo-provider-key"
    llm: Literal["fake", "local"] = Field(
        default="fake",
        description="The LLM auditors' endpoint: the scripted fake server (`llm_responder`), or a real "
        "local model (trustnode.llm.local_server.LocalLLMServer, the `llm` extra).",
    )
    llm_responder: str = "trustnode.audit.llm_judge:arithmetic_judge_responder"
    flawed_phrases: list[str] = Field(default_factory=list, description="Answer key of the scripted human.")
    auditor_stake: int = 1_000 * TOKEN
    poll_interval_s: float = 0.3
    block_time_s: float = Field(
        default=0.5,
        description="Blocks at a steady rate, as on a real chain: block-counted phases last the same wall time under any load.",
    )
    provider_threads: int = 8
    protocol: dict[str, int] = Field(
        default_factory=dict,
        description="Further SessionParams fields (e.g. appeal_blocks, canary_rate_bps) set with the others.",
    )
    canary_operator: bool | None = Field(
        default=None,
        description="Run a canary operator node for the provider (None: when protocol's canary_rate_bps > 0).",
    )
    operator_account: int = Field(
        default=devnet.CANARY_OPERATOR_ACCOUNT,
        description="The devnet account `devnet.up` authorizes as canary operator.",
    )
    operator_key: str = "demo-operator-key"

    @property
    def wants_operator(self) -> bool:
        if self.canary_operator is not None:
            return self.canary_operator
        return self.protocol.get("canary_rate_bps", 0) > 0


class LocalCluster(ProviderAPIClient):
    """Start with `start()`, stop with `stop()` (or use as a context manager)."""

    def __init__(self, config: ClusterConfig, *, log: Any = None) -> None:
        self.cfg = config
        self.say = log or (lambda msg: None)
        self.work = config.workdir
        self.dep_file = self.work / "devnet" / "deployment.json"
        self.deployment: Deployment | None = None
        self.ipfs: JsIpfsDaemon | None = None
        self.llm: ManagedProcess | None = None
        self._local_llm: Any = None
        self.llm_model: str | None = None
        self.api: ManagedProcess | None = None
        self.operator: ManagedProcess | None = None
        self.operator_port = free_port()
        self.auditors: dict[str, ManagedProcess] = {}
        self.api_port = free_port()
        self._stop = threading.Event()
        self.human_answers = threading.Event()  # cleared: the scripted human stops answering
        self.human_answers.set()
        self._human_threads: list[threading.Thread] = []
        self.params: SessionParams = DEVNET_SESSION_PARAMS  # what `set_protocol` last set

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> LocalCluster:
        self.work.mkdir(parents=True, exist_ok=True)
        try:
            self._start_chain()
            self._start_ipfs()
            if any(a.tier == Tier.LLM for a in self.cfg.auditors):
                self._start_llm()
            self._fund()
            first = [a.name for a in self.cfg.auditors if not a.later]
            for name in first:
                self.start_auditor(name)
            self.wait_registered(first)
            if self.cfg.wants_operator:
                self.start_operator()
            self.start_api()
            for spec in self.cfg.auditors:
                if spec.tier == Tier.HUMAN:
                    t = threading.Thread(target=self._scripted_human, args=(spec,), daemon=True)
                    t.start()
                    self._human_threads.append(t)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        self._stop.set()
        for p in [self.api, self.operator, *self.auditors.values(), self.llm]:
            if p is not None:
                p.stop()
        if self._local_llm is not None:
            self._local_llm.__exit__(None, None, None)
            self._local_llm = None
        if self.ipfs is not None:
            self.ipfs.stop()
        devnet.down(self.dep_file)

    def _start_chain(self) -> None:
        self.say("starting anvil and deploying the contracts")
        self.deployment = devnet.up(
            self.dep_file, port=free_port(), block_time_s=self.cfg.block_time_s, automine=False
        )
        owner = Protocol(
            ChainClient.connect(self.deployment.rpc_url, dev_account(0)), self.deployment.contracts
        )
        self.owner = owner
        self.set_protocol(
            {
                "seats_per_tier": self.cfg.seats_per_tier,
                "seat_cap": self.cfg.seat_cap,
                "beta_bps": self.cfg.beta_bps,
                **self.cfg.protocol,
            },
            base=DEVNET_SESSION_PARAMS,
        )

    def set_protocol(self, updates: dict[str, Any], *, base: SessionParams | None = None) -> SessionParams:
        """New session parameters (a new version: sessions opened before keep theirs), appeal and
        canary fields included when the deployment has the issue-15 modules."""
        assert self.deployment is not None
        params = (base or self.params).model_copy(update=updates)
        self.params = params
        self.owner.client.transact(self.owner.sessions.functions.setParams(params.as_abi()))
        if "AppealModule" in self.deployment.contracts:
            fields = AppealModuleParams.model_fields
            self.owner.set_appeal_params(AppealModuleParams(**{f: getattr(params, f) for f in fields}))
        return params

    def _start_ipfs(self) -> None:
        self.say("starting the IPFS daemon (js-ipfs)")
        self.ipfs = JsIpfsDaemon(self.work / "ipfs").start()

    def _start_llm(self) -> None:
        if self.cfg.llm == "local":
            self._start_local_llm()
            return
        port = free_port()
        self.llm = ManagedProcess(
            "llm",
            [
                sys.executable,
                "-m",
                "trustnode.llm.fake_server",
                "--port",
                str(port),
                "--responder",
                self.cfg.llm_responder,
            ],
            dict(os.environ),
            self.work / "logs" / "llm.log",
        ).start()
        self.llm_url = f"http://127.0.0.1:{port}/v1"
        wait_http(f"http://127.0.0.1:{port}/v1/models", 30, self.llm)

    def _start_local_llm(self) -> None:
        try:
            from trustnode.llm.local_server import LocalLLMServer  # type: ignore[import-not-found,unused-ignore]
        except ImportError as exc:
            raise RuntimeError(
                "ClusterConfig(llm='local') needs trustnode.llm.local_server (the local-model extra)"
            ) from exc
        self.say("starting a local LLM (llama.cpp server) for the LLM auditors")
        server = LocalLLMServer()
        server.__enter__()
        self._local_llm = server
        self.llm_url = str(server.base_url)
        self.llm_model = str(server.model)

    def _fund(self) -> None:
        """The deployer pays the provider and every auditor from the initial supply."""
        self.owner.transfer(dev_account(1).address, 1_000_000 * TOKEN)
        for spec in self.cfg.auditors:
            self.owner.transfer(dev_account(spec.account).address, self.cfg.auditor_stake * 2)

    def _env(self, name: str, account: int, **extra: str) -> dict[str, str]:
        assert self.deployment is not None and self.ipfs is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTNODE_")}
        env.update(
            {
                "TRUSTNODE_DATA_DIR": str(self.work / name),
                "TRUSTNODE_CHAIN__DEPLOYMENT_FILE": str(self.dep_file),
                "TRUSTNODE_CHAIN__ACCOUNT_INDEX": str(account),
                "TRUSTNODE_CHAIN__POLL_INTERVAL_S": str(self.cfg.poll_interval_s),
                "TRUSTNODE_IPFS__API_URL": self.ipfs.api_url,
                "TRUSTNODE_LOG_JSON": "true",
                **extra,
            }
        )
        return env

    def start_auditor(self, name: str) -> ManagedProcess:
        spec = next(a for a in self.cfg.auditors if a.name == name)
        extra = {"TRUSTNODE_AUDITOR__STAKE": str(self.cfg.auditor_stake)}
        if spec.tier == Tier.LLM:
            extra["TRUSTNODE_LLM__BASE_URL"] = self.llm_url
            if self.llm_model is not None:
                extra["TRUSTNODE_LLM__MODEL"] = self.llm_model
        cmd = [sys.executable, "-m", "trustnode.cli.main", "auditor", "run", "--tier", spec.tier.name.lower()]
        proc = ManagedProcess(
            name,
            [*cmd, "--lazy"] if spec.lazy else cmd,
            self._env(name, spec.account, **extra),
            self.work / "logs" / f"{name}.log",
        ).start()
        self.auditors[name] = proc
        return proc

    def wait_registered(self, names: list[str], timeout_s: float = 60) -> None:
        """Until each named auditor is registered with its full stake."""
        deadline = time.monotonic() + timeout_s
        for spec in (a for a in self.cfg.auditors if a.name in names):
            addr = dev_account(spec.account).address
            while (
                not self.owner.profile(addr).registered
                or self.owner.pool(addr).assets < self.cfg.auditor_stake
            ):
                proc = self.auditors[spec.name]
                if not proc.alive:
                    raise RuntimeError(f"auditor {spec.name} exited:\n{proc.tail()}")
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"auditor {spec.name} did not register in {timeout_s}s:\n{proc.tail()}"
                    )
                time.sleep(0.2)

    def start_operator(self) -> ManagedProcess:
        """The canary operator node: `api serve --no-worker` with `canary_operator.enabled`, signing
        with the devnet's authorized operator account; the provider asks it for canaries."""
        env = self._env(
            "canary-operator",
            self.cfg.operator_account,
            TRUSTNODE_API__PORT=str(self.operator_port),
            TRUSTNODE_API__API_KEYS=json.dumps([self.cfg.operator_key]),
            TRUSTNODE_CANARY_OPERATOR__ENABLED="true",
        )
        cmd = [sys.executable, "-m", "trustnode.cli.main", "api", "serve", "--no-worker"]
        self.operator = ManagedProcess(
            "canary-operator", cmd, env, self.work / "logs" / "canary-operator.log"
        )
        self.operator.start()
        wait_http(f"{self.operator_url}/healthz", 60, self.operator)
        return self.operator

    @property
    def operator_url(self) -> str:
        return f"http://127.0.0.1:{self.operator_port}"

    def start_api(self) -> ManagedProcess:
        operator = (
            {
                "TRUSTNODE_CANARIES__OPERATOR_URL": self.operator_url,
                "TRUSTNODE_CANARIES__OPERATOR_API_KEY": self.cfg.operator_key,
            }
            if self.operator is not None
            else {}
        )
        env = self._env(
            "provider",
            1,
            **operator,
            TRUSTNODE_API__PORT=str(self.api_port),
            TRUSTNODE_API__API_KEYS=json.dumps([self.cfg.api_key]),
            TRUSTNODE_BATCH__SIZE=str(self.cfg.batch_size),
            TRUSTNODE_BATCH__MAX_WAIT_S=str(self.cfg.batch_wait_s),
        )
        self.api = ManagedProcess(
            "provider",
            [
                sys.executable,
                "-m",
                "trustnode.cli.main",
                "api",
                "serve",
                "--threads",
                str(self.cfg.provider_threads),
            ],
            env,
            self.work / "logs" / "provider.log",
        ).start()
        wait_http(f"{self.api_url}/healthz", 60, self.api)
        return self.api

    def port(self, account: int) -> Web3Port:
        """The chain port of a dev account (the demo's appellant, an auditor's own actions)."""
        assert self.deployment is not None
        proto = Protocol(
            ChainClient.connect(self.deployment.rpc_url, dev_account(account)), self.deployment.contracts
        )
        return Web3Port(proto, deploy_block=self.deployment.deploy_block)

    def fund(self, address: str, amount: int) -> None:
        self.owner.transfer(address, amount)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    # -- the scripted human ----------------------------------------------------------------------

    def _scripted_human(self, spec: AuditorSpec) -> None:
        """Stands in for a person at the audit form: answers from the demo's answer key."""
        queue_path = self.work / spec.name / "human" / "queue.db"
        address = dev_account(spec.account).address
        while not self._stop.is_set():
            if queue_path.exists() and self.human_answers.is_set():
                queue = HumanQueue(queue_path)
                for seat in queue.pending(address):
                    flawed = [p for p in self.cfg.flawed_phrases if p.lower() in seat.reasoning.lower()]
                    verdict = Verdict.FAIL if flawed else Verdict.PASS
                    criteria = {c.key: not flawed for c in seat.criteria}
                    note = f"uses {flawed[0]!r} without support" if flawed else "follows from the note"
                    queue.submit(seat.seat_id, verdict, criteria, note)
            self._stop.wait(0.3)
