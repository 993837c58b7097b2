"""The deploy's randomness-delay check states the session core's rule (outside review 5): the
Python refusal and the contract's `RandomnessTooSlow` agree at the boundary, on a real chain."""

from __future__ import annotations

import pytest

from tests.conftest import client_for
from trustnode.chain.deploy import check_randomness_delay
from trustnode.chain.deployment import Deployment
from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port.revert_meanings import MEANINGS
from trustnode.chain.protocol import DEVNET_EPOCH_BLOCKS, DEVNET_SESSION_PARAMS

pytestmark = pytest.mark.chain


def test_the_deploy_check_and_the_core_refuse_the_same_delays(devnet: Deployment) -> None:
    """One epoch of delay is accepted by both; one block more is refused by both, the chain with
    RandomnessTooSlow(delay, epochBlocks), which the node can explain."""
    epoch = DEVNET_EPOCH_BLOCKS
    check_randomness_delay(epoch, epoch)
    with pytest.raises(ValueError, match=rf"randomness delay {epoch + 1} .*RandomnessTooSlow.* 1\.\.{epoch}"):
        check_randomness_delay(epoch + 1, epoch)
    client = client_for(devnet, 8)
    args = (
        devnet.address("TrustToken"),
        devnet.address("Staking"),
    )
    tail = (devnet.address("Treasury"), client.address, DEVNET_SESSION_PARAMS.as_abi())
    fits = client.deploy("LookaheadRandomness", epoch)
    client.deploy("AuditSessions", *args, fits.address, *tail)
    slow = client.deploy("LookaheadRandomness", epoch + 1)
    with pytest.raises(ContractRevertError) as refused:
        client.deploy("AuditSessions", *args, slow.address, *tail)
    assert refused.value.name == "RandomnessTooSlow"
    assert refused.value.args_by_name == {"delay": epoch + 1, "limit": epoch}
    assert "faster source" in MEANINGS["RandomnessTooSlow"]
