"""An auditor daemon on a devnet restarted from scratch (README: `devnet down`/a crash, then
`devnet up`): the new chain has the same contract addresses, and the old daemon followed it with the
old chain's state (UnknownWithdrawal reverts, unregistered, silent). It now refuses, saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trustnode.audit.computer import ComputerAuditor
from trustnode.chain.deployment import Deployment
from trustnode.config import Settings
from trustnode.models.enums import Tier
from trustnode.node.auditor import AuditorDaemon
from trustnode.node.chain_identity import ChainReplacedError
from trustnode.node.context import NodeContext

pytestmark = pytest.mark.chain


def test_a_daemon_refuses_a_chain_that_is_not_the_one_its_data_dir_served(
    fresh_devnet: Deployment, tmp_path: Path
) -> None:
    dep_file = tmp_path / "deployment.json"
    fresh_devnet.save(dep_file)
    settings = Settings(
        data_dir=tmp_path / "computer-1", chain={"deployment_file": dep_file, "account_index": 2}
    )  # type: ignore[arg-type]
    daemon = AuditorDaemon(NodeContext(settings), Tier.COMPUTER, ComputerAuditor())
    try:
        daemon.check_chain()  # first use: recorded
        daemon.check_chain()  # the same chain: fine
        record = daemon.home / "chain.json"
        known = json.loads(record.read_text())
        record.write_text(json.dumps({**known, "genesis": "0x" + "ab" * 32}))  # the old chain's genesis
        with pytest.raises(ChainReplacedError, match="is not the one this data directory served"):
            daemon.ensure_registered()
        assert not daemon.port.profile(daemon.address).registered, "nothing was sent to the new chain"
    finally:
        daemon.close()
