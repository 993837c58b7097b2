"""A second daemon of one account is refused also when it is given another data directory.

The README's operator starts `auditor run` per account with its own TRUSTNODE_DATA_DIR; copying a
line and changing only the data directory started a second daemon of account 2 that registered and
followed the chain beside the first (both would commit different salts for the same seats and lose
the reveal). The data-directory lock could not see it; a machine-wide lock per chain and account
refuses it at start-up. No chain is needed: the daemon takes its locks before it reaches one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trustnode.audit.computer import ComputerAuditor
from trustnode.chain.accounts import dev_account
from trustnode.chain.deployment import Deployment
from trustnode.config import Settings
from trustnode.models.enums import Tier
from trustnode.node.auditor import AuditorDaemon
from trustnode.node.context import NodeContext
from trustnode.node.votes import AccountInUseError


def _deployment(path: Path, rpc_url: str) -> Path:
    Deployment(
        chain_id=31337,
        rpc_url=rpc_url,
        contracts={"AuditSessions": "0x5FC8d32690cc91D4c39d9d3abcBD16989F875707"},
        deploy_block=0,
        deployer=dev_account(0).address,
    ).save(path)
    return path


def _daemon(data_dir: Path, dep_file: Path, account: int) -> AuditorDaemon:
    settings = Settings(
        data_dir=data_dir,
        chain={"deployment_file": dep_file, "account_index": account},  # type: ignore[arg-type]
    )
    return AuditorDaemon(NodeContext(settings), Tier.COMPUTER, ComputerAuditor())


def test_a_second_daemon_of_one_account_in_another_data_dir_is_refused(tmp_path: Path) -> None:
    # a port nobody listens on, unique to this test so parallel runs never share the lock
    dep = _deployment(tmp_path / "deployment.json", f"http://127.0.0.1:1/{tmp_path.name}")
    first = _daemon(tmp_path / "computer-1", dep, 2)
    try:
        with pytest.raises(AccountInUseError) as refused:
            _daemon(tmp_path / "computer-1b", dep, 2)
        message = str(refused.value)
        assert f"account {dev_account(2).address} already runs on this machine for the chain" in message
        assert f"data directory {tmp_path / 'computer-1'}" in message, message
        assert "give each daemon its own account" in message
        # the same account against another chain (another RPC URL) is another daemon's business
        elsewhere = _deployment(tmp_path / "other.json", f"http://127.0.0.1:2/{tmp_path.name}")
        _daemon(tmp_path / "computer-1c", elsewhere, 2).close()
    finally:
        first.close()
    # the refused daemon left no lock behind: once the first one stopped, it starts
    _daemon(tmp_path / "computer-1b", dep, 2).close()
