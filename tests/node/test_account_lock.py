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


def test_a_daemon_whose_key_another_daemon_replaced_says_so(tmp_path: Path) -> None:
    """On the README network a second daemon of account 2 (another data directory, before the
    machine-wide lock) registered its own encryption key; the first daemon then abandoned every seat
    as "cannot audit (bad session bundle): ... not ours, or altered", blaming the provider. It now
    names the cause: the key on chain is not its own, another daemon of the account registered it."""
    from tests.node.memnet import MarkedAuditor, MemoryNet, address
    from tests.node.test_auditor_states import PARAMS, TRACE
    from trustnode.node.votes import VoteState
    from trustnode.storage.envelopes import EncryptionKeyPair

    net = MemoryNet(tmp_path, PARAMS)
    for name, tier, account in (
        ("computer-1", Tier.COMPUTER, 2),
        ("computer-2", Tier.COMPUTER, 3),
        ("llm-1", Tier.LLM, 4),
        ("human-1", Tier.HUMAN, 5),
    ):
        net.add_auditor(name, tier, MarkedAuditor(), account)
    other = EncryptionKeyPair.load_or_create(tmp_path / "other-data-dir" / "encryption.key")
    net.chain.port(address(2)).update_profile(1, other.public_key)  # the second daemon's registration
    tid = net.submit(TRACE)
    sid = net.run([tid])[tid].session_id or 0
    net.close()
    rec = net.daemons["computer-1"].votes.get(sid)
    assert rec is not None and rec.state == VoteState.ABANDONED, rec
    assert "another daemon of this account registered its own" in rec.note, rec.note
    assert "bad session bundle" not in rec.note, rec.note
