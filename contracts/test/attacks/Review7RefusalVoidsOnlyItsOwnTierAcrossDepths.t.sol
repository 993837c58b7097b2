// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare.
interface VmReview7Depths {
    function mockCall(address callee, bytes calldata data, bytes calldata returnData) external;
}

/// @title Review7RefusalVoidsOnlyItsOwnTierAcrossDepths (outside review 7 of main b460fed, MixedTiers)
/// @notice Property: a refused appeal round ends only its own tier's segments, also when rounds of two
/// tiers of one session run side by side at different depths, opened apart or in the same block.
/// Attack tried (does not work): segment 0 (tier 1) goes to depth 2 while segment 1 (tier 2, thin) has a
/// depth-1 round still undrawn; one round naming both is refused with `MixedTiers` (segment 1's running
/// round counts in its depth, as `running` does in `consensus/appeal_admission.check_session_appeal`, so the depths
/// agree and the tiers decide); the two rounds then run side by side and one tier-2 account refuses its
/// lock. Regression, passes (`scripts/forge test --match-path
/// 'contracts/test/attacks/Review7RefusalVoidsOnlyItsOwnTierAcrossDepths*' -vv`): the depth-2 tier-1 round
/// draws 15 of 15 seats, not refused, segment 0 keeps its depth-1 PASS while its round runs; the tier-2
/// round is REFUSED (6 of 7 seats drawn), segment 1 ends INCONCLUSIVE.
/// `test_SameBlockRoundsAtTwoDepths`: the rounds opened in one block, [0, 1] refused with `MixedDepths`;
/// the same outcomes (15/15 and 6/7 seats). Review 6's test covers one depth only.
contract Review7RefusalVoidsOnlyItsOwnTierAcrossDepths is AppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal constant PASS = 1;
    uint256 internal constant INCONCLUSIVE = 3;
    uint256 internal sid;
    address[] internal tier2;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 25, STAKE); // a depth-2 panel needs 15 beyond round 0's 3 and depth 1's 7
        _addAuditors(2, 17, STAKE); // eligible 14 = 2 k_1: refusals charged (review 13's rule)
        for (uint256 i = 25; i < 42; ++i) {
            tier2.push(auditorAddrs[i]);
        }
        _nextEpoch();
        uint8[] memory tiers = new uint8[](2);
        uint16[] memory weights = new uint16[](2);
        tiers[0] = 1;
        tiers[1] = 2;
        weights[0] = 1;
        weights[1] = 1;
        sid = _open(_tiersWeights(tiers, weights), FEE);
        _commitCanaries(sid, new bytes32[](0));
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0); // both PASS
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
    }

    function test_RefusedRoundEndsOnlyItsTierAcrossDepths() public {
        uint256 tier2Round = _appeal(sid, _segs(1)); // opened now, drawn later
        uint256 first = _appeal(sid, _segs(0));
        _drawRound(sid, first);
        _publishRound(sid, first);
        _voteRound(sid, first, 0, 0, 0); // depth 1 decides PASS: segment 0 may go to depth 2
        assertEq(_outcomeOf(sid, 0), PASS, "setup: depth 1 PASS");
        // One round over both is refused: segment 1's running round counts in its depth (both would be
        // depth 2, as `check_session_appeal` counts `running`), so the tiers decide: MixedTiers.
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.MixedTiers.selector, sid, 1));
        _appeal(sid, _segs(0, 1));
        uint256 deep = _appeal(sid, _segs(0)); // depth 2, tier 1
        assertEq(appeals.roundOf(sid, deep).depth, 2, "setup: depth 2");
        assertEq(appeals.roundOf(sid, tier2Round).depth, 1, "setup: depth 1");
        _oneTier2Refusal();
        _drawRound(sid, tier2Round);
        _drawRound(sid, deep);
        IAppealModule.Round memory a = appeals.roundOf(sid, deep);
        IAppealModule.Round memory b = appeals.roundOf(sid, tier2Round);
        emit log_named_uint("depth-2 tier-1 round: seats drawn", a.drawnSeats);
        emit log_named_uint("depth-1 tier-2 round: seats drawn", b.drawnSeats);
        assertEq(a.drawnSeats, a.totalSeats, "the tier-1 round is drawn in full");
        assertTrue(!a.refused, "the tier-1 round is not refused");
        assertTrue(b.refused, "the tier-2 round is REFUSED");
        assertEq(_outcomeOf(sid, 0), PASS, "segment 0 keeps its decided PASS while its round runs");
        assertEq(_outcomeOf(sid, 1), INCONCLUSIVE, "the refusing tier's segment ends INCONCLUSIVE");
    }

    /// @notice Both rounds opened in one block: segment 0 at depth 2, segment
    /// 1 at depth 1; one round over both is refused with `MixedDepths` (checked before the tiers).
    function test_SameBlockRoundsAtTwoDepths() public {
        uint256 first = _appeal(sid, _segs(0));
        _drawRound(sid, first);
        _publishRound(sid, first);
        _voteRound(sid, first, 0, 0, 0);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.MixedDepths.selector, sid, 1));
        _appeal(sid, _segs(0, 1));
        uint256 deep = _appeal(sid, _segs(0));
        uint256 tier2Round = _appeal(sid, _segs(1));
        _oneTier2Refusal();
        _drawRound(sid, deep);
        _drawRound(sid, tier2Round);
        IAppealModule.Round memory a = appeals.roundOf(sid, deep);
        IAppealModule.Round memory b = appeals.roundOf(sid, tier2Round);
        emit log_named_uint("same block, depth-2 tier-1 round: seats drawn", a.drawnSeats);
        emit log_named_uint("same block, depth-1 tier-2 round: seats drawn", b.drawnSeats);
        assertEq(a.drawnSeats, a.totalSeats, "the tier-1 round is drawn in full");
        assertTrue(!a.refused && b.refused, "only the tier-2 round is REFUSED");
        assertEq(_outcomeOf(sid, 0), PASS, "segment 0 keeps its decided PASS");
        assertEq(_outcomeOf(sid, 1), INCONCLUSIVE, "segment 1 ends INCONCLUSIVE");
    }

    /// @dev 8 of the 14 tier-2 accounts that did not sit on segment 1 in round 0 refuse their locks: more than
    /// half of the eligible, as a charged round needs to fail (review 13: with 17 tier-2 auditors, eligible
    /// 14 = 2 k_1; before, 10 auditors and ONE refusal failed the draw, which now ends UNFILLABLE).
    function _oneTier2Refusal() internal {
        uint256 made = 0;
        for (uint256 i = 0; i < tier2.length && made < 8; ++i) {
            if (drawModule.seatsOf(sid, 0, tier2[i]).length != 0) continue;
            IStaking.SeatQuote memory q = staking.seatQuote(tier2[i]);
            q.free = 0;
            VmReview7Depths(address(vm))
                .mockCall(address(staking), abi.encodeCall(IStaking.seatQuote, (tier2[i])), abi.encode(q));
            ++made;
        }
        if (made < 8) revert("setup: too few eligible tier-2 accounts");
    }
}
