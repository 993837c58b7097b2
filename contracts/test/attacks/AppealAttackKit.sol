// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";

/// @notice The appeal set-up outside reviews 11 to 13 share: no canaries, a session of correct tier-1 PASS
/// segments whose appeal window is open, dead leaves, and an auditor made busy in another session.
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

    /// @dev The appeal modules deployed, `members` tier-1 auditors of STAKE, the next epoch, and a
    /// `_passedSession(segments, fee)`.
    function _setUpPassedSession(uint256 members, uint256 segments, uint256 fee)
        internal
        returns (uint256 sid)
    {
        _deployAppeals();
        _addAuditors(1, members, STAKE);
        _nextEpoch();
        sid = _passedSession(segments, fee);
    }

    /// @dev A dead leaf: `a` is sent 100 TRUST, registers in tier 1, stakes it, deregisters and requests the
    /// withdrawal of all its shares (returns the claim).
    function _deadLeaf(address a) internal returns (uint256 claim) {
        token.transfer(a, 100e18);
        vm.startPrank(a);
        registry.register(1, uint64(1) << 1, keccak256(abi.encode("x25519", a)));
        token.approve(address(stakingContract), type(uint256).max);
        staking.stake(a, 100e18);
        registry.deregister();
        claim = staking.requestWithdrawal(a, staking.sharesOf(a, a));
        vm.stopPrank();
    }

    /// @dev Whether `a` holds a round-0 seat on `segment` of `sid`.
    function _seatedOn(uint256 sid, address a, uint256 segment) internal view returns (bool) {
        uint256[] memory segs = drawModule.seatsOf(sid, 0, a);
        for (uint256 j = 0; j < segs.length; ++j) {
            if (segs[j] == segment) return true;
        }
        return false;
    }

    /// @dev `a` busy in another session: all but `left` of its free stake locked.
    function _busyElsewhere(address a, uint256 left) internal {
        uint256 free = staking.seatQuote(a).free;
        vm.prank(address(drawModule));
        (bool ok,,) = staking.lockSeat(a, 1, 0xB05E, free - left, 0);
        assertTrue(ok, "setup: busy");
    }
}
