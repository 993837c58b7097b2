// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @dev The cheatcodes TestBase's `Vm` does not declare.
interface VmReview6Tier {
    function mockCall(address callee, bytes calldata data, bytes calldata returnData) external;
    function skip(bool) external;
}

/// @title Review6RefusalVoidsOnlyItsOwnTier (outside review 6 of main c7e9e27, REFUSED rounds)
/// @notice Property: refusals in one tier cannot void verdicts in another. The documented residual of
/// REFUSED rounds is "an appellant holding enough refusing accounts in a THIN tier can turn a correct PASS
/// into INCONCLUSIVE for no fee". But an appeal round may name segments of different tiers
/// (`AppealModule._checkSegment` checks depth, window and eligibility per segment, never one tier), the
/// round's named segments are drawn in ascending order, and a REFUSED round ends EVERY named segment as
/// withheld (`_end` -> `_endSegments`, commit 5eb217f). So refusals in the thinnest tier of a trace void
/// every PASS of the trace in every tier, including thick tiers where the attacker holds no account.
/// @dev Tier 1 has 12 auditors, tier 2 (the thin one, humans in production) 10, all 1,000 TRUST. A trace of
/// four segments, 0-2 in tier 1 and 3 in tier 2, passes unanimously in round 0 (correct). The appellant
/// names all four in one appeal (4 bonds of 42 TRUST); one of the 7 eligible tier-2 accounts refuses (stake
/// locked elsewhere, mocked as in AppealRefusedPanels). Measured (`scripts/forge test --match-path
/// 'contracts/test/attacks/Review6RefusalVoids*' -vv`, skip removed): 27 seats drawn (segments 0-2 in
/// full, 21 seats, then 6 of segment 3's 7) and the draw fails: REFUSED; all four segments end
/// INCONCLUSIVE, the trace score goes from 10,000 bps (passed) to 0 bps (not passed), the appellant's cost
/// is 0 (its 168 TRUST of bonds come back whole). By reading: round 0's 12 correct seats also lose their
/// 72 TRUST of rewards (final INCONCLUSIVE pays no vote). Control (`test_NoRefusalFillsTheRound`): the
/// same round without the refusal is drawn in full.
/// Fixed: one tier per appeal round (`MixedTiers` in the quote, beside `MixedDepths`), so a refused draw can
/// only void segments of the tier whose stake refused.
contract Review6RefusalVoidsOnlyItsOwnTier is AppealsFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    uint256 internal constant PASS = 1;
    uint256 internal sid;
    address[] internal tier2;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _addAuditors(2, 17, STAKE); // eligible 14 = 2 k_1: its refusals charged (review 13's rule)
        for (uint256 i = 12; i < 29; ++i) {
            tier2.push(auditorAddrs[i]);
        }
        _nextEpoch();
        uint8[] memory tiers = new uint8[](4);
        uint16[] memory weights = new uint16[](4);
        for (uint256 i = 0; i < 4; ++i) {
            tiers[i] = i < 3 ? 1 : 2;
            weights[i] = 1;
        }
        sid = _open(_tiersWeights(tiers, weights), FEE);
        _commitCanaries(sid, new bytes32[](0));
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0); // every segment PASS: the correct verdict
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
    }

    function _all() internal pure returns (uint256[] memory s) {
        s = new uint256[](4);
        for (uint256 i = 0; i < 4; ++i) {
            s[i] = i;
        }
    }

    /// @dev 8 of the 14 tier-2 accounts that did not sit on segment 3 in round 0 refuse their locks: more than
    /// half of the eligible, as a charged round needs to fail (review 13: with 17 tier-2 auditors, eligible
    /// 14 = 2 k_1; before, 10 auditors and ONE refusal failed the draw, which now ends UNFILLABLE).
    function _oneTier2Refusal() internal {
        uint256 made = 0;
        for (uint256 i = 0; i < tier2.length && made < 8; ++i) {
            if (drawModule.seatsOf(sid, 0, tier2[i]).length != 0) continue;
            IStaking.SeatQuote memory q = staking.seatQuote(tier2[i]);
            q.free = 0;
            VmReview6Tier(address(vm))
                .mockCall(address(staking), abi.encodeCall(IStaking.seatQuote, (tier2[i])), abi.encode(q));
            ++made;
        }
        if (made < 8) revert("setup: too few eligible tier-2 accounts");
    }

    function _range(uint256 from, uint256 to) internal pure returns (uint256[] memory s) {
        s = new uint256[](to - from);
        for (uint256 i = from; i < to; ++i) {
            s[i - from] = i;
        }
    }

    /// @notice The fix: one round names segments of one tier, so the four-segment round of the attack is
    /// refused at the quote (on c7e9e27 it was admitted).
    function test_OneRoundNamesOneTier() public {
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.MixedTiers.selector, sid, 3));
        _appeal(sid, _all());
    }

    /// @notice The attack, after the fix: the appellant must appeal tier 1 (segments 0-2) and tier 2
    /// (segment 3) in two rounds. One refusal in tier 2 ends only the tier-2 round REFUSED (segment 3
    /// INCONCLUSIVE, the documented thin-tier residual); the tier-1 round is drawn in full and its three
    /// PASSes stand until their own panel decides. On c7e9e27 the single round voided all four.
    function test_ThinTierRefusalVoidsNoOtherTier() public {
        (bool passed, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace score bps before the appeal", score);
        assertTrue(passed, "setup: the trace passes");
        uint256 thick = _appeal(sid, _range(0, 3));
        uint256 thin = _appeal(sid, _range(3, 4));
        _oneTier2Refusal();
        _drawRound(sid, thick);
        _drawRound(sid, thin);
        IAppealModule.Round memory a = appeals.roundOf(sid, thick);
        IAppealModule.Round memory b = appeals.roundOf(sid, thin);
        emit log_named_uint("tier-1 round: seats drawn", a.drawnSeats);
        emit log_named_uint("tier-2 round: seats drawn", b.drawnSeats);
        assertEq(a.drawnSeats, a.totalSeats, "the tier-1 round is drawn in full");
        assertTrue(!a.refused, "the tier-1 round is not refused");
        assertTrue(b.refused, "the tier-2 round is REFUSED");
        for (uint256 i = 0; i < 3; ++i) {
            assertEq(_outcomeOf(sid, i), PASS, "a tier without refusals keeps its decided PASS");
        }
        assertEq(_outcomeOf(sid, 3), 3, "the refusing tier's segment ends INCONCLUSIVE");
    }
}
