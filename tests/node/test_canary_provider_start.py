"""A provider node process refuses to start on a chain that wants gold canaries when it names no
canary operator (issue 15, CANARY-OPERATOR): real anvil with the deployed contracts, the real
`trustnode api serve` process, and the refusal names the missing setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import free_port
from trustnode.chain import devnet
from trustnode.chain.accounts import dev_account
from trustnode.chain.client import ChainClient
from trustnode.chain.deployment import Deployment
from trustnode.chain.port.evm import Web3Port
from trustnode.chain.protocol import DEVNET_SESSION_PARAMS, Protocol
from trustnode.chain.protocol.models_appeals import AppealModuleParams

pytestmark = [pytest.mark.chain]


@pytest.fixture
def canary_chain(tmp_path: Path) -> Iterator[tuple[Path, Deployment]]:
    dep_file = tmp_path / "devnet" / "deployment.json"
    dep = devnet.up(dep_file, port=free_port())
    try:
        owner = Protocol(ChainClient.connect(dep.rpc_url, dev_account(0)), dep.contracts)
        params = DEVNET_SESSION_PARAMS.model_copy(update={"canary_rate_bps": 3000})
        owner.set_appeal_params(
            AppealModuleParams(**{f: getattr(params, f) for f in AppealModuleParams.model_fields})
        )
        yield dep_file, dep
    finally:
        devnet.down(dep_file)


def _serve(tmp_path: Path, dep_file: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTNODE_")}
    env |= {
        "TRUSTNODE_DATA_DIR": str(tmp_path / "provider"),
        "TRUSTNODE_CHAIN__DEPLOYMENT_FILE": str(dep_file),
        "TRUSTNODE_API__PORT": str(free_port()),
        "TRUSTNODE_API__API_KEYS": json.dumps(["provider-key-for-this-test-0123456789"]),
        **extra,
    }
    cmd = [sys.executable, "-m", "trustnode.cli.main", "api", "serve", "--threads", "1"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)


def test_api_serve_refuses_without_an_operator_when_the_chain_wants_canaries(
    canary_chain: tuple[Path, Deployment], tmp_path: Path
) -> None:
    dep_file, dep = canary_chain
    port = Web3Port(Protocol(ChainClient.connect(dep.rpc_url, dev_account(1)), dep.contracts))
    assert port.params().canary_rate_bps == 3000
    out = _serve(tmp_path, dep_file)
    said = out.stdout + out.stderr
    assert out.returncode != 0, said[-2000:]
    assert "canaryRateBps is 3000" in said and "canaries.operator_url" in said, said[-2000:]
    assert "TRUSTNODE_CANARIES__OPERATOR_URL" in said
    assert "Traceback" not in said, said[-2000:]  # a refusal, not a crash
