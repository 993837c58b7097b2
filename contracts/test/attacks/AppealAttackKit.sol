// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";

/// @notice The appeal set-up outside reviews 11 to 13 share: no canaries, a session of correct tier-1 PASS
/// segments whose appeal window is open, and an auditor made busy in another session.
abstract contract NoCanaryAppealsFixture is AppealsFixture {
    function _appealParams() internal pure virtual override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.canaryRateBps = 0;
    }

    /// @dev A session of `segments` tier-1 segments for `fee`, drawn and voted PASS (the correct verdict),
    /// its appeal window open.
    function _passedSession(uint256 segments, uint256 fee) internal returns (uint256 sid) {
        sid = _open(_uniform(segments, 1), fee);
        _commitCanaries(sid, new bytes32[](0));
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
    }

    /// @dev `a` busy in another session: all but `left` of its free stake locked.
    function _busyElsewhere(address a, uint256 left) internal {
        uint256 free = staking.seatQuote(a).free;
        vm.prank(address(drawModule));
        (bool ok,,) = staking.lockSeat(a, 1, 0xB05E, free - left, 0);
        assertTrue(ok, "setup: busy");
    }
}
