"""The deployment file: which chain, which RPC, which contract at which address.

Every command that touches the chain reads this file (or the settings pointing at it),
so it is the single source of truth for addresses.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from trustnode.chain.client import rpc_alive
from trustnode.chain.errors import ChainError


class DeploymentError(ChainError):
    """The deployment file is missing, malformed, or points at a dead chain."""


class Deployment(BaseModel):
    chain_id: int
    rpc_url: str
    contracts: dict[str, str]
    deploy_block: int = Field(ge=0)
    deployer: str
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    anvil_pid: int | None = Field(
        default=None, description="Set when `trustnode devnet up` started the chain."
    )
    port: int | None = None

    def address(self, name: str) -> str:
        try:
            return self.contracts[name]
        except KeyError as exc:
            raise DeploymentError(f"the deployment has no contract named {name!r}") from exc

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.model_dump(), indent=2) + "\n")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, *, check_alive: bool = True) -> Deployment:
        if not path.is_file():
            raise DeploymentError(f"no deployment file at {path}: run `trustnode devnet up` first")
        try:
            dep = cls.model_validate_json(path.read_text())
        except ValidationError as exc:
            raise DeploymentError(f"deployment file {path} is malformed: {exc}") from exc
        if check_alive and not rpc_alive(dep.rpc_url):
            raise DeploymentError(
                f"deployment file {path} points at {dep.rpc_url}, which does not answer: "
                "the chain is down (run `trustnode devnet up`)"
            )
        return dep
