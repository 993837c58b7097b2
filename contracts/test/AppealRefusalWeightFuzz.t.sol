// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./attacks/AppealAttackKit.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";

/// @title AppealRefusalWeightFuzz
/// @notice Property (rule R, docs/appeals-canaries.md "Who counts, and when refusals are charged"): a failed
/// appeal draw whose admission charged refusals ends REFUSED iff the failed segment's counted refusers hold
/// more than half of its eligible snapshot weight, 2 W_R > W_E; else UNFILLABLE (the PASS stands). W_E =
/// every live leaf of the tier at the round's epoch but the segment's round-0 auditors (the provider holds
/// no leaf here), W_R = the refusers' leaves, both read from the snapshot, independently of the draw.
/// Set-up: 9 honest tier-1 auditors of random stake (round 0 of a 2-segment PASS session), then S = 8..12
/// refusing accounts of random stake (100 to 2,000 TRUST; honest: 100 to 3,000) staked before the appeal's epoch (eligible 9 + S - 3 >= 14 = 2 k_1:
/// charged); a one-segment appeal: the 6 eligible honest auditors fill 6 of 7 seats, every refuser refuses
/// (free stake locked in another session), so the draw always fails.
/// Command: `scripts/forge test --match-path contracts/test/AppealRefusalWeightFuzz.t.sol -vv` (256 runs).
contract AppealRefusalWeightFuzz is NoCanaryAppealsFixture {
    uint256 internal constant HONEST = 9;

    event log_named_uint(string key, uint256 val);

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _weightOf(address a, uint256 epoch) internal view returns (uint256) {
        (bool exists, uint256 leaf) = _sortition().leafOf(1, a);
        return exists ? _sortition().leafWeightAt(1, epoch, leaf) : 0;
    }

    /// forge-config: default.fuzz.runs = 256
    function testFuzz_RefusedIffRefusersHoldMostEligibleWeight(uint256 seed, uint8 refusersIn) public {
        uint256 s = bound(refusersIn, 8, 12);
        _deployAppeals();
        for (uint256 i = 0; i < HONEST; ++i) {
            _addAuditors(1, 1, 100e18 + uint256(keccak256(abi.encode(seed, "h", i))) % 2900e18);
        }
        _nextEpoch();
        uint256 sid = _passedSession(2, FEE);
        address[] memory refusers = new address[](s);
        for (uint256 i = 0; i < s; ++i) {
            address a = vm.addr(0x5EF000 + i);
            refusers[i] = a;
            uint256 amount = 100e18 + uint256(keccak256(abi.encode(seed, "r", i))) % 1900e18;
            _joinTier(a, 1, amount);
        }
        _nextEpoch();
        uint256[] memory named = new uint256[](1);
        assertTrue(appeals.quote(sid, named).refusalsCharged, "setup: eligible >= 2k");
        uint256 round = _appeal(sid, named);
        for (uint256 i = 0; i < s; ++i) {
            _busyElsewhere(refusers[i], 0);
        }
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled, "setup: the draw fails");
        uint256 epoch = rd.epoch;
        uint256 wr = 0;
        for (uint256 i = 0; i < s; ++i) {
            wr += _weightOf(refusers[i], epoch);
        }
        uint256 we = _sortition().totalWeightAt(1, epoch);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (_seatedOn(sid, auditorAddrs[i], 0)) we -= _weightOf(auditorAddrs[i], epoch);
        }
        assertEq(rd.drawnSeats, 6, "the 6 eligible honest auditors are seated");
        emit log_named_uint("2 W_R > W_E", 2 * wr > we ? 1 : 0);
        assertTrue(rd.refused == (2 * wr > we), "REFUSED iff 2 W_R > W_E");
        assertTrue((_outcomeOf(sid, 0) == 1) == !rd.refused, "the PASS stands iff UNFILLABLE");
    }
}
