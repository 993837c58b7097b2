// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "../utils/TestBase.sol";
import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {StakingLedger} from "../../src/StakingLedger.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {Staking} from "../../src/Staking.sol";

/// @title Review26TierMoveCarriesSessionLocks (outside review 26 of a7a6f5e, fixed)
/// @notice Property (SessionOps `_checkStakeBacksLocks` NatSpec): with `minStake[t] >= slashAmount x
/// sessionLockSeats(n_t, ...)` for each tier, "the session's own locks never refuse [an eligible auditor] a
/// seat (reason 5 cannot occur)", so every eligible account can sit (the premise of admission's count).
/// Attack: the bound counts the seats of ONE tier (n_t), but `DrawModule._sessionHeld` counts every seat the
/// auditor holds in the session, whatever tier it sat them in. An auditor may change tier while its locks
/// stand (`StakingHoldsOps.onRegister`: only during a hold is a tier change refused). So a tier-1 auditor
/// seated in round 0 deregisters (with a withdrawal request), waits out its hold, registers in tier 2 and
/// enters the tier-2 snapshot with a basis at or above tier 2's minimum; its tier-1 locks of the SAME session
/// then make it session-held (reason 5, uncharged) on the session's tier-2 segment. Admission counts it
/// as a tier-2 member.
/// World: minStake (72, 72, 8) TRUST, slashAmount 8, seat cap 8; session of 9 tier-1 segments + 1 tier-2
/// segment (the rule: tier 1 needs 72, tier 2 needs 8: opens). 5 tier-1 auditors of 72 TRUST, 9 tier-2
/// auditors of 8 TRUST. Attacker A (tier 1) sits round 0; after finalization it deregisters and requests
/// the withdrawal of 55/72 of its shares; after the hold it registers in tier 2 (basis 17 TRUST >= 8). The
/// appellant names the tier-2 segment: members 10, E = 10 - 3 = 7 = k_1: admitted.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review26*' -vv`): A sat 5 tier-1
/// seats of round 0 (40 TRUST locked); in tier 2 its quote is eligible, basis 17 TRUST (>= 8), limit 47.56
/// (17 + the pro-rata relief 40 x 55 / 72), free 7.56 < 8; it counts among the 10 tier-2 members; the draw
/// excludes it once with reason 5 (session-held: 47.56 - 40 < 8) and 3 honest with reason 4; 6 of 7 seats,
/// status Cancelled (7), refused false (UNFILLABLE). Control (a fresh tier-2 auditor of 17 TRUST instead of
/// A): 7 of 7. This world's round is not charged (E 7 < 2 k), so a plain refusal would also end it
/// UNFILLABLE: the test shows the premise broken (an eligible, counted account the session's own locks
/// refuse), not yet a charged round turned uncharged, which needs E >= 14 and E - k + 1 such movers.
/// (Before the fix, measured with the move passing: the draw excluded A with reason 5, 6 of 7 seats.)
/// Severity: LOW (an attacker can already refuse, charged (reason 3); this makes one eligible tier-2 account
/// refuse UNCHARGED and counted, UNFILLABLE instead of REFUSED; it costs a tier-1 account that sat round 0
/// of the target session, a hold and the tier change; an honest auditor moving tier with a small stake hits
/// it too).
/// Fix options: refuse a tier change while the pool holds locks (`onRegister`: revert when `locked != 0`,
/// like TierHeld); or have `_sessionHeld` count only the seats of the draw's tier (the other tier's locks are
/// then the mover's own doing: reason 3, charged); or bound every tier by the whole session
/// (slashAmount x sessionLockSeats(n, n, ...)), stricter still.
/// Fix (chosen: the first option): `StakingHoldsOps.onRegister` refuses a tier change while the pool holds
/// locked stake, `TierLocked(auditor, locked)` (as `TierHeld` refuses one during a hold); a re-registration
/// in the same tier still passes. After the fix (`test_TierMoverSessionHeld`): A's move to tier 2 reverts
/// TierLocked(A, 40 TRUST) after its hold; it re-registers in tier 1; tier 2 has 9 members at the appeal
/// (A not among them), so no eligible tier-2 account carries locks of the session's other tier. Control
/// unchanged: 7 of 7. Before the fix the same test failed at the expected revert (the move passed).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review26*' -vv`.
contract Review26TierMoveCarriesSessionLocks is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    function _stakingParams() internal pure override returns (StakingLedger.StakingParams memory p) {
        p = super._stakingParams();
        p.minStake = [uint96(72e18), uint96(72e18), uint96(8e18)];
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(10 * EPOCH_BLOCKS);
    }

    function _tw() internal pure returns (bytes memory) {
        uint8[] memory tiers = new uint8[](10);
        uint16[] memory weights = new uint16[](10);
        for (uint256 i = 0; i < 10; ++i) {
            tiers[i] = i == 9 ? 2 : 1;
            weights[i] = 1;
        }
        return _tiersWeightsP(tiers, weights);
    }

    function _tiersWeightsP(uint8[] memory tiers, uint16[] memory weights)
        internal
        pure
        returns (bytes memory b)
    {
        for (uint256 i = 0; i < tiers.length; ++i) {
            b = abi.encodePacked(b, tiers[i], weights[i]);
        }
    }

    function _run(bool move)
        internal
        returns (IAppealModule.Round memory rd, uint256 aHeld, uint256 aSeats0, uint256 members)
    {
        _deployAppeals();
        _addAuditors(1, 5, 72e18);
        _addAuditors(2, 9, 8e18);
        address a = auditorAddrs[0];
        _nextEpoch();
        uint256 sid = _open(_tw(), 2 * FEE);
        _commitCanaries(sid, new bytes32[](0));
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        aSeats0 = _seats(sid, a).length;
        if (move) {
            vm.startPrank(a);
            registry.deregister();
            staking.requestWithdrawal(a, staking.sharesOf(a, a) * 55 / 72);
            vm.stopPrank();
            for (uint256 i = 0; i < 4; ++i) {
                _nextEpoch();
            }
            vm.prank(a);
            registry.register(2, uint64(1) << 2, keccak256(abi.encode("x25519", a)));
        } else {
            for (uint256 i = 0; i < 4; ++i) {
                _nextEpoch();
            }
            _addAuditors(2, 1, 17e18);
        }
        _nextEpoch();
        _toAppealWindow(sid);
        members = _sortition().liveCountAtExcept(2, block.number / EPOCH_BLOCKS + 1, provider);
        uint256[] memory segs = new uint256[](1);
        segs[0] = 9;
        uint256 round = _appeal(sid, segs);
        if (move) {
            IStaking.SeatQuote memory q = stakingContract.seatQuote(a);
            emit log_named_uint("A quote eligible", q.eligible ? 1 : 0);
            emit log_named_uint("A quote tier", q.tier);
            emit log_named_uint("A quote free", q.free);
            emit log_named_uint("A quote limit", q.limit);
            emit log_named_uint("A locked", staking.poolOf(a).locked);
            emit log_named_uint("A backing", staking.poolOf(a).backing);
        }
        vm.recordLogs();
        _drawRound(sid, round);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bytes32 sig = keccak256("AuditorExcluded(uint256,uint256,address,uint256)");
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length == 0 || logs[i].topics[0] != sig) continue;
            address who = address(uint160(uint256(logs[i].topics[2])));
            (, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
            if (who == a && reason == 5) ++aHeld;
            emit log_named_uint(who == a ? "A excluded, reason" : "other excluded, reason", reason);
        }
        rd = appeals.roundOf(sid, round);
        if (move) {
            (, uint256 leaf) = _sortition().leafOf(2, a);
            emit log_named_uint(
                "A weight in the round's snapshot", _sortition().leafWeightAt(2, rd.epoch, leaf)
            );
        }
        emit log_named_uint("A's round-0 seats (tier 1)", aSeats0);
        emit log_named_uint("tier-2 members at the appeal", members);
        emit log_named_uint("A session-held (reason 5)", aHeld);
        emit log_named_uint("seats drawn (of 7)", rd.drawnSeats);
        emit log_named_uint("status", uint256(rd.status));
        emit log_named_uint("refused", rd.refused ? 1 : 0);
    }

    /// @dev The attack's steps up to the move: A sits round 0 in tier 1, deregisters, requests the
    /// withdrawal of 55/72 of its shares and waits out its hold; then it asks for tier 2.
    function test_TierMoverSessionHeld() public {
        _deployAppeals();
        _addAuditors(1, 5, 72e18);
        _addAuditors(2, 9, 8e18);
        address a = auditorAddrs[0];
        _nextEpoch();
        uint256 sid = _open(_tw(), 2 * FEE);
        _commitCanaries(sid, new bytes32[](0));
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        uint256 seats = _seats(sid, a).length;
        uint256 locked = staking.poolOf(a).locked;
        emit log_named_uint("A's round-0 seats (tier 1)", seats);
        emit log_named_uint("A locked", locked);
        assertTrue(locked != 0, "setup: A holds the session's locks");
        vm.startPrank(a);
        registry.deregister();
        staking.requestWithdrawal(a, staking.sharesOf(a, a) * 55 / 72);
        vm.stopPrank();
        for (uint256 i = 0; i < 4; ++i) {
            _nextEpoch();
        }
        bytes32 key = keccak256(abi.encode("x25519", a));
        vm.prank(a);
        vm.expectRevert(abi.encodeWithSelector(Staking.TierLocked.selector, a, locked));
        registry.register(2, uint64(1) << 2, key);
        // The same tier still passes, locks or not.
        vm.prank(a);
        registry.register(1, uint64(1) << 2, key);
        (uint8 tier, bool registered,) = staking.auditorOf(a);
        assertEq(tier, 1, "A stays in tier 1");
        assertTrue(registered, "same-tier re-registration with locks");
        _nextEpoch();
        _toAppealWindow(sid);
        uint256 members = _sortition().liveCountAtExcept(2, block.number / EPOCH_BLOCKS + 1, provider);
        emit log_named_uint("tier-2 members at the appeal", members);
        assertEq(members, 9, "A is no tier-2 member");
        (bool exists,) = _sortition().leafOf(2, a);
        assertTrue(!exists, "A has no tier-2 leaf");
    }

    function test_ControlFreshTier2Auditor() public {
        (IAppealModule.Round memory rd,,, uint256 members) = _run(false);
        assertEq(members, 10, "10 tier-2 members");
        assertEq(rd.drawnSeats, 7, "drawn in full");
    }
}
