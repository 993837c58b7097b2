"""The Python side of the protocol agrees with the contracts byte for byte, and bad input is
refused before anything is sent."""

from __future__ import annotations

import pytest
from eth_account import Account
from eth_utils import keccak

from tests.conftest import client_for
from trustnode.chain.accounts import dev_account
from trustnode.chain.deployment import Deployment
from trustnode.chain.errors import ChainError, ContractRevertError
from trustnode.chain.protocol import (
    DEVNET_EPOCH_BLOCKS,
    DEVNET_SESSION_PARAMS,
    DEVNET_STAKING_PARAMS,
    TOKEN,
    Protocol,
    SessionParams,
    SessionStatus,
    compute_commitment,
    pack_tiers_weights,
    verdict_bitmap,
)
from trustnode.consensus import rules

pytestmark = pytest.mark.chain


def test_pack_and_bitmap_match_the_reference() -> None:
    tiers, weights = [0, 1, 2, 1], [1, 300, 65535, 7]
    assert pack_tiers_weights(tiers, weights) == rules.pack_tiers_weights(tiers, weights)
    assert pack_tiers_weights([1], [258]) == bytes([1, 1, 2])
    votes = [True, False, False, True, True]
    assert verdict_bitmap(votes) == rules.verdict_bitmap(votes) == 0b11001
    with pytest.raises(ValueError, match="tier 3"):
        pack_tiers_weights([3], [1])
    with pytest.raises(ValueError, match="weight 0"):
        pack_tiers_weights([1], [0])
    with pytest.raises(ValueError, match="one weight per tier"):
        pack_tiers_weights([1, 1], [1])
    with pytest.raises(ValueError):
        SessionParams.model_validate({**DEVNET_SESSION_PARAMS.model_dump(), "p_min": 10**18, "p_max": 1})
    with pytest.raises(ValueError):
        SessionParams.model_validate({**DEVNET_SESSION_PARAMS.model_dump(), "tau_bps": 5000})


def test_hashes_and_signatures_agree_with_the_contract(devnet: Deployment) -> None:
    p = Protocol(client_for(devnet, 0), devnet.contracts)
    auditor = dev_account(5)
    salt = keccak(text="salt")
    word = 0b1011 | 1 << 130  # seats 0, 1, 3 FAIL; seat 2 abstains
    local = compute_commitment(p.client.chain_id, p.voting.address, 42, auditor.address, word, salt)
    on_chain = p.client.call(p.voting.functions.computeCommitment(42, 0, auditor.address, word, salt))
    assert local == on_chain == p.compute_commitment(42, auditor.address, word, salt)
    assert local == rules.commitment(p.client.chain_id, p.voting.address, 42, auditor.address, word, salt)
    assert local != p.compute_commitment(42, auditor.address, word, salt, round=1)
    signed = p.sign_commit(auditor, 42, local, nonce=3)
    digest = p.client.call(p.voting.functions.commitDigest(42, 0, auditor.address, local, 3))
    sig = signed.signature
    recovered = Account._recover_hash(
        digest, vrs=(sig[64], int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:64], "big"))
    )
    assert recovered == auditor.address
    assert p.params() == DEVNET_SESSION_PARAMS
    assert p.epoch_blocks == DEVNET_EPOCH_BLOCKS and p.staking_params() == DEVNET_STAKING_PARAMS


def test_bad_input_is_refused_before_sending(devnet: Deployment) -> None:
    p = Protocol(client_for(devnet, 0), devnet.contracts)
    with pytest.raises(ValueError, match="32 bytes"):
        p.open_session(b"\x01" * 31, [1], [1], 100 * TOKEN)
    with pytest.raises(ValueError, match="X25519"):
        p.register(1, 0, b"\x01" * 31)
    with pytest.raises(ChainError, match="AuditSessions.*protocol v1 deployment"):
        Protocol(p.client, {"TrustToken": devnet.contracts["TrustToken"]})
    with pytest.raises(ChainError, match="no session"):
        p.session(10**9)
    with pytest.raises(ContractRevertError) as low:
        p.open_session(b"\x01" * 32, [1, 1], [1, 1], 10 * TOKEN)
    assert low.value.name == "FeeTooLow"
    assert p.status(10**9) == SessionStatus.NONE


def test_a_randomness_delay_longer_than_the_snapshot_span_is_refused_before_any_transaction(
    devnet: Deployment,
) -> None:
    """Outside review 5: with 1-block epochs a 2-block lookahead delay delivers the seed after the
    snapshot of a session opened in an epoch's last block stops being readable (that block + 2),
    so every such session would end undrawn. Deployment refuses it, naming the bound, and sends
    nothing; the largest delay that fits (2 * epoch - 1) passes the check."""
    from trustnode.chain.deploy import check_randomness_delay, deploy_protocol

    client = client_for(devnet, 7)
    nonce = client.w3.eth.get_transaction_count(client.address)
    no_window = DEVNET_SESSION_PARAMS.model_copy(update={"canary_commit_blocks": 0})
    with pytest.raises(
        ValueError, match=r"randomness delay 2 .* use a delay of 1\.\.1 or epochs of at least 2"
    ):
        deploy_protocol(client, session_params=no_window, randomness_delay=2, epoch_blocks=1)
    assert client.w3.eth.get_transaction_count(client.address) == nonce, "nothing was sent"
    check_randomness_delay(DEVNET_EPOCH_BLOCKS, DEVNET_EPOCH_BLOCKS)
    with pytest.raises(ValueError, match="does not fit"):
        check_randomness_delay(DEVNET_EPOCH_BLOCKS + 1, DEVNET_EPOCH_BLOCKS)
    with pytest.raises(ValueError, match="does not fit"):
        check_randomness_delay(0, DEVNET_EPOCH_BLOCKS)
