// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";

/// @notice Property: `setParams` in the middle of an appeal changes nothing for sessions already open - not
/// the bond of the next appeal, not the windows, not what a running appeal pays - and applies to sessions
/// opened afterwards. Attack: the owner (or whoever captured it) doubles the bond multiplier and halves the
/// appellant reward while an appeal runs, to make it lose or to price out the next appellant.
contract AppealReviewParamsFixedPerSessionTest is AppealsFixture {
    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _next() internal pure returns (IAppealModule.AppealParams memory p) {
        p = _appealParams();
        p.appealBlocks = 30;
        p.appealBondMultiplierBps = 20_000;
        p.appealRewardBps = 1000;
    }

    function test_ParamsFixedPerSession() public {
        uint256 sid = _openReady(2, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0);
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0));
        vm.prank(owner);
        escrow.setParams(_next());
        assertEq(escrow.paramsOf(sid).appealBondMultiplierBps, 10_000, "the session keeps its version");
        assertEq(appeals.quote(sid, _segs(1)).bond, 7 * R, "next appeal of the session: old bond");
        _drawRound(sid, round);
        _publishRound(sid, round);
        _voteRound(sid, round, 1, 0, 0); // overturned
        assertEq(appeals.segmentAppeals(sid, 0).windowEnd, block.number + APPEAL_BLOCKS, "old window length");
        _closeAndSettle(sid);
        assertEq(token.balanceOf(appellant), before + 7 * R * 2000 / 10_000, "old reward rate");

        uint256 later = _openReady(2, 1, new bytes32[](0));
        assertEq(escrow.paramsOf(later).appealBondMultiplierBps, 20_000, "a new session takes the new one");
        _voteRound0(later, 0, 0, 0);
        _toAppealWindow(later);
        assertEq(appeals.quote(later, _segs(0)).bond, 14 * R, "new bond");
    }
}
