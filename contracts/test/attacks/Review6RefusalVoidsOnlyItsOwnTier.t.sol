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
/// Fix: one tier per appeal round (`MixedTiers` in the quote, like `MixedDepths`), so a refused draw can
/// only void segments of the tier whose stake refused; or end REFUSED only the segments of the refusing
/// tier and leave the other named segments' panels (drawn whole, ascending) to run.
contract Review6RefusalVoidsOnlyItsOwnTier is AppealsFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    uint256 internal constant PASS = 1;
    uint256 internal sid;
    address[] internal tier2;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _addAuditors(2, 10, STAKE);
        for (uint256 i = 12; i < 22; ++i) {
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

    /// @dev One tier-2 account that did not sit on segment 3 in round 0 refuses its lock.
    function _oneTier2Refusal() internal {
        for (uint256 i = 0; i < tier2.length; ++i) {
            if (drawModule.seatsOf(sid, 0, tier2[i]).length != 0) continue;
            IStaking.SeatQuote memory q = staking.seatQuote(tier2[i]);
            q.free = 0;
            VmReview6Tier(address(vm))
                .mockCall(address(staking), abi.encodeCall(IStaking.seatQuote, (tier2[i])), abi.encode(q));
            return;
        }
        revert("setup: no eligible tier-2 account");
    }

    /// @notice Control: without the refusal the four-segment round is drawn in full.
    function test_NoRefusalFillsTheRound() public {
        uint256 round = _appeal(sid, _all());
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        assertEq(rd.drawnSeats, rd.totalSeats, "filled");
        assertTrue(!rd.refused, "not refused");
    }

    /// @notice The attack: one refusal in tier 2 voids the tier-1 PASSes too.
    function test_ThinTierRefusalVoidsNoOtherTier_KNOWN() public {
        VmReview6Tier(address(vm)).skip(true);
        uint256 before = token.balanceOf(appellant);
        (bool passed, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace score bps before the appeal", score);
        assertTrue(passed, "setup: the trace passes");
        uint256 round = _appeal(sid, _all());
        _oneTier2Refusal();
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        assertEq(uint256(rd.status), uint256(IAuditSessions.Status.Cancelled), "the draw failed");
        assertTrue(rd.refused, "REFUSED");
        emit log_named_uint("seats drawn before the failure", rd.drawnSeats);
        for (uint256 i = 0; i < 4; ++i) {
            emit log_named_uint(
                "segment * 10 + outcome (1 PASS, 3 INCONCLUSIVE)", i * 10 + _outcomeOf(sid, i)
            );
        }
        (passed, score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("trace score bps after the refused round", score);
        _closeAndSettle(sid);
        emit log_named_decimal_uint("appellant's cost", before - token.balanceOf(appellant), 18);
        for (uint256 i = 0; i < 3; ++i) {
            assertEq(_outcomeOf(sid, i), PASS, "a tier without refusals keeps its decided PASS");
        }
        (passed,,,,) = escrow.verdictOf(sid);
        assertTrue(passed, "the trace still passes on its thick tiers");
    }
}
