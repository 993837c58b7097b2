"""A tier move waits until the auditor's seat locks are released (outside review 26): Staking's
`onRegister` reverts `TierLocked` and the in-memory chain models the same rule, so the node's
registration path reports it with its meaning instead of a bare revert."""

from __future__ import annotations

import pytest
from eth_utils import to_checksum_address

from tests.chain.port_scenarios import ISSUE15_PARAMS, TOKEN
from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import reverts
from trustnode.chain.port.memory_state import MemoryChain
from trustnode.models.enums import Tier


def _registered(locked: int):  # type: ignore[no-untyped-def]
    """An auditor of the COMPUTER tier with `locked` stake of seats, deregistered since (the memory
    port has no deregistration call: the record is set as the registry's would be)."""
    chain = MemoryChain(ISSUE15_PARAMS)
    port = chain.port(to_checksum_address((0x2600).to_bytes(20, "big")))
    chain.fund(port.address, 1_000 * TOKEN)
    port.register(Tier.COMPUTER, 1, b"\x45" * 32)
    port.stake(100 * TOKEN)
    a = chain.auditors[port.address]
    a.locked = locked
    a.registered = False
    return chain, port


def test_tier_move_refused_while_locked() -> None:
    chain, port = _registered(8 * TOKEN)
    with pytest.raises(ContractRevertError) as err:
        port.register(Tier.LLM, 1, b"\x45" * 32)
    assert err.value.name == "TierLocked"
    assert err.value.args_by_name == {"auditor": port.address, "locked": 8 * TOKEN}
    assert "every seat the auditor holds is settled" in reverts.explain(err.value)
    assert chain.auditors[port.address].tier == int(Tier.COMPUTER)


def test_same_tier_re_registration_with_locks_passes() -> None:
    chain, port = _registered(8 * TOKEN)
    port.register(Tier.COMPUTER, 1, b"\x45" * 32)
    a = chain.auditors[port.address]
    assert a.registered and a.tier == int(Tier.COMPUTER) and a.locked == 8 * TOKEN


def test_tier_move_without_locks_passes() -> None:
    chain, port = _registered(0)
    port.register(Tier.LLM, 1, b"\x45" * 32)
    assert chain.auditors[port.address].tier == int(Tier.LLM)
