"""The stake premise of appeal admission (outside review 22): `consensus.session_stake`, the memory
port's opening and the deploy-time parameter check agree with `SessionOps._checkStakeBacksLocks`."""

from __future__ import annotations

import pytest

from tests.chain.port_scenarios import ISSUE15_PARAMS, TOKEN
from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port.memory_state import MemoryChain
from trustnode.chain.protocol import DEVNET_SESSION_PARAMS, DEVNET_STAKING_PARAMS, check_stake_premise
from trustnode.consensus.session_stake import (
    StakeBelowSessionLocks,
    check_session_stake,
    max_session_segments,
    required_min_stake,
    session_lock_seats,
)


def test_lock_seats_are_one_per_segment_of_the_tier_not_max_rounds_plus_one_seat_caps() -> None:
    """13 segments, seat cap 4, max_rounds 1: round 0 and three appeal rounds of disjoint segments give
    one auditor 4 + 4 + 4 + 1 = 13 locks, more than (max_rounds + 1) x seat_cap = 8."""
    assert session_lock_seats(13, 13, 4, 1) == 13
    assert session_lock_seats(9, 9, 8, 2) == 9
    # the round bound binds only past 255 rounds: seat cap 1, 1024 segments -> 256 locks
    assert session_lock_seats(1024, 1024, 1, 4) == 256


def test_the_review22_figures() -> None:
    """Review22CapacityAssumesStakeForSeats: 9 tier-1 segments at 10 TRUST need 72 TRUST;
    Review22MinStakeSybilsInflateCapacity: 13 at seat cap 4 need 104 TRUST."""
    assert required_min_stake(9, 9, seat_cap=8, max_rounds=2, slash_amount=8 * TOKEN) == 72 * TOKEN
    with pytest.raises(StakeBelowSessionLocks) as e:
        check_session_stake([1] * 13, (10 * TOKEN,) * 3, seat_cap=4, max_rounds=2, appeal_blocks=10,
                            slash_amount=8 * TOKEN)  # fmt: skip
    assert (e.value.tier, e.value.min_stake, e.value.required) == (1, 10 * TOKEN, 104 * TOKEN)
    # appeals off: no rule
    check_session_stake([1] * 13, (10 * TOKEN,) * 3, seat_cap=4, max_rounds=0, appeal_blocks=10,
                        slash_amount=8 * TOKEN)  # fmt: skip
    assert max_session_segments(100 * TOKEN, 8 * TOKEN) == 12


def test_the_memory_chain_refuses_the_opening_as_the_contract_does() -> None:
    chain = MemoryChain(ISSUE15_PARAMS)  # memory minimum 100 TRUST, lock 8: 12 segments of a tier
    provider = chain.port("0x" + "01" * 20)
    chain.fund(provider.address, 10_000 * TOKEN)
    with pytest.raises(ContractRevertError) as e:
        provider.open_session(b"\x01" * 32, [0] * 13, [1] * 13, 1_000 * TOKEN)
    assert e.value.name == "MinStakeBelowSessionLocks"
    assert e.value.args_by_name == {"tier": 0, "minStake": 100 * TOKEN, "required": 104 * TOKEN}
    provider.open_session(b"\x02" * 32, [0] * 12 + [1] * 12, [1] * 24, 1_000 * TOKEN)


def test_deploy_refuses_appeals_whose_minimum_backs_no_lock() -> None:
    check_stake_premise(DEVNET_SESSION_PARAMS, DEVNET_STAKING_PARAMS)  # appeals off
    on = DEVNET_SESSION_PARAMS.model_copy(update={"appeal_blocks": 300, "max_rounds": 2, "seat_cap": 32})
    check_stake_premise(on, DEVNET_STAKING_PARAMS)  # 200 TRUST: 25 locks of 8 TRUST
    low = DEVNET_STAKING_PARAMS.model_copy(update={"min_stake": (200 * TOKEN, 7 * TOKEN, 200 * TOKEN)})
    with pytest.raises(
        ValueError, match="tier 1: minimum stake 7000000000000000000 wei is below one seat lock"
    ):
        check_stake_premise(on, low)
