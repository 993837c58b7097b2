"""Everything a node process holds: settings, its databases, storage and chain access.

Built lazily, so `trustnode api serve` starts (and answers /healthz) even while the chain
or IPFS is down, and says which one is missing instead of failing at import.
"""

from __future__ import annotations

import threading
from functools import cached_property

from trustnode.chain.accounts import load_account
from trustnode.chain.client import ChainClient
from trustnode.chain.deployment import Deployment, DeploymentError
from trustnode.chain.port import ChainPort
from trustnode.chain.port.evm import Web3Port
from trustnode.chain.protocol import Protocol
from trustnode.config import Settings
from trustnode.node.chain_identity import ChainGuard
from trustnode.node.jobs import JobQueue
from trustnode.storage.base import BlobStore
from trustnode.storage.blobstore import store_from_settings


class NodeContext:
    """`port` and `store` may be given (tests use an in-memory chain and a shared local store)."""

    def __init__(
        self, settings: Settings, *, port: ChainPort | None = None, store: BlobStore | None = None
    ) -> None:
        self.settings = settings
        self.new_job = threading.Event()
        self._lock = threading.Lock()
        self._client: ChainClient | None = None
        self._protocol: Protocol | None = None
        self._fixed_port = port
        self._port: Web3Port | None = None
        self._store = store
        self.deploy_block = 0

    @cached_property
    def jobs(self) -> JobQueue:
        return JobQueue(self.settings.data_dir / "provider" / "jobs.db")

    @cached_property
    def chain_guard(self) -> ChainGuard:
        """The provider's watch on its chain's identity (shared by its worker threads and appeal
        duties; an injected port has no genesis to check)."""
        return ChainGuard(
            None if self._fixed_port is not None else self.client, self.settings.data_dir / "provider"
        )

    @cached_property
    def store(self) -> BlobStore:
        return self._store if self._store is not None else store_from_settings(self.settings)

    @property
    def fixed_port(self) -> ChainPort | None:
        """The port given at construction (tests), or None when this node reaches a deployment."""
        return self._fixed_port

    def port(self) -> ChainPort:
        """Every protocol operation of this node goes through this port (see `chain.port`)."""
        if self._fixed_port is not None:
            return self._fixed_port
        proto = self.protocol()
        with self._lock:
            if self._port is None or self._port.protocol is not proto:
                self._port = Web3Port(proto, deploy_block=self.deploy_block)
            return self._port

    @property
    def address(self) -> str:
        """This node's signing address, known without reaching the chain."""
        if self._fixed_port is not None:
            return self._fixed_port.address
        dep = self.deployment()
        return str(load_account(self.settings.chain, devnet=dep.chain_id == 31337).address)

    def deployment(self) -> Deployment:
        path = self.settings.deployment_file
        if self.settings.chain.deployment_file is None and not path.is_file():
            # The README operator forgot the export in one shell: "run `devnet up` first" misled.
            raise DeploymentError(
                f"no deployment file at {path}, the default under the data directory "
                "(TRUSTNODE_CHAIN__DEPLOYMENT_FILE is unset): set TRUSTNODE_CHAIN__DEPLOYMENT_FILE to the file "
                "`trustnode devnet up` or `trustnode deploy` wrote (e.g. net/deployment.json), or start the "
                "devnet first"
            )
        dep = Deployment.load(path, check_alive=False)
        if self.settings.chain.rpc_url:
            dep = dep.model_copy(update={"rpc_url": self.settings.chain.rpc_url})
        return dep

    def client(self) -> ChainClient:
        """The signing client of this node (created on first use, then shared)."""
        with self._lock:
            if self._client is None:
                dep = self.deployment()
                account = load_account(self.settings.chain, devnet=dep.chain_id == 31337)
                self._client = ChainClient.connect(
                    dep.rpc_url, account, tx_timeout_s=self.settings.chain.tx_timeout_s
                )
            return self._client

    @property
    def current_client(self) -> ChainClient | None:
        """The chain client if one is connected (never connects: for metrics and status)."""
        return self._client

    def protocol(self) -> Protocol:
        """The deployed contracts seen by this node's signer (shared, rebuilt after an outage)."""
        client = self.client()
        with self._lock:
            if self._protocol is None or self._protocol.client is not client:
                dep = self.deployment()
                self._protocol = Protocol(client, dep.contracts)
                self.deploy_block = dep.deploy_block
            return self._protocol

    def reset_client(self) -> None:
        """Forget the chain client (after an outage the next use reconnects)."""
        with self._lock:
            self._client = None
            self._protocol = None
            self._port = None

    def notify_new_job(self) -> None:
        self.new_job.set()
