// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";
import {AppealMath} from "../../src/libraries/AppealMath.sol";
import {SegmentWord} from "../../src/libraries/SegmentWord.sol";

/// @notice Cheatcodes outside TestBase's minimal Vm.
interface VmReview24 {
    function skip(bool) external;
    function cool(address target) external;
}

/// @notice Outside review 24's probe of `DrawModule.draw`'s result: the `DrawResult` the appeal module reads
/// (rule R's `eligibleWeight` and `refusedWeight`) is neither stored nor emitted, so before every real
/// `drawPanel` call the probe replays the same call - the job `AppealModule._job` would build, rebuilt from
/// public views - as the appeal module, keeps its result and reverts its state.
abstract contract Review24DrawProbe is NoCanaryAppealsFixture {
    /// @dev The failed call's result as the probe saw it (`failed` false until a call fails).
    IDrawModule.DrawResult internal probed;
    /// @dev Gas of the real `drawPanel` call that failed, and the largest of the calls before it.
    uint256 internal failedCallGas;
    uint256 internal largestOtherCallGas;
    uint256 internal drawCalls;
    /// @dev Seats drawn before the failed call (more than the segments before the failed one hold: the failed
    /// segment was resumed mid-segment by that call).
    uint256 internal seatsBeforeFailedCall;

    /// @dev `AppealModule._job(sessionId, round, ..., maxSeats)` from views.
    function _jobOf(uint256 sid, uint256 round, uint256 maxSeats)
        internal
        view
        returns (IDrawModule.DrawJob memory job)
    {
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        IAuditSessions.SessionParams memory c = sessions.paramsAt(s.paramsVersion);
        uint256 first = SegmentWord.wordOf(rd.drawCursor);
        uint256[] memory words = new uint256[](SegmentWord.wordCount(s.segmentCount) - first);
        for (uint256 w = 0; w < words.length; ++w) {
            words[w] = appeals.roundWord(sid, round, first + w);
        }
        job.sessionId = sid;
        job.round = round;
        job.seed = sessions.sourceOf(sid).valueOf(rd.drawRequest);
        job.epoch = rd.epoch;
        job.provider = s.provider;
        job.maxSeats = maxSeats;
        job.segmentCount = s.segmentCount;
        job.cursor = rd.drawCursor;
        job.drawnSeats = rd.drawnSeats;
        job.auditorCount = rd.auditorCount;
        job.seatCap = c.seatCap;
        job.lockAmount = c.slashAmount;
        for (uint256 t = 0; t < 3; ++t) {
            job.seatsPerTier[t] = uint8(AppealMath.panelSeats(c.seatsPerTier[t], rd.depth));
        }
        job.segmentWords = words;
    }

    function _roundOpen(IAppealModule.Round memory rd) internal pure returns (bool) {
        return rd.status == IAuditSessions.Status.Created
            || (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats < rd.totalSeats);
    }

    /// @dev Draw round `round` in calls of `maxSeats`, probing each call after the first (which starts the
    /// draw and must not fail); records the failed call's `DrawResult` and gas.
    function _drawProbing(uint256 sid, uint256 round, uint256 maxSeats) internal {
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        probed = IDrawModule.DrawResult(0, 0, 0, false, 0, 0, 0);
        failedCallGas = 0;
        largestOtherCallGas = 0;
        drawCalls = 0;
        seatsBeforeFailedCall = 0;
        for (uint256 i = 0; i < 10_000; ++i) {
            IAppealModule.Round memory rd = appeals.roundOf(sid, round);
            if (!_roundOpen(rd)) break;
            IDrawModule.DrawResult memory r;
            if (rd.status == IAuditSessions.Status.Drawing) {
                IDrawModule.DrawJob memory job = _jobOf(sid, round, maxSeats);
                uint256 snap = vm.snapshotState();
                vm.prank(address(appeals));
                r = drawModule.draw(job);
                vm.revertToState(snap);
            }
            uint256 g = gasleft();
            appeals.drawPanel(sid, round, maxSeats);
            g -= gasleft();
            ++drawCalls;
            if (r.failed) {
                probed = r;
                seatsBeforeFailedCall = rd.drawnSeats;
                failedCallGas = g;
            } else if (g > largestOtherCallGas) {
                largestOtherCallGas = g;
            }
        }
        IAppealModule.Round memory end = appeals.roundOf(sid, round);
        if (end.status == IAuditSessions.Status.Cancelled) {
            assertTrue(probed.failed, "probe: the failed call seen");
        }
    }

    /// @dev Snapshot weight of `a` in `tier` at `epoch` (0 without a leaf).
    function _weightAt(uint8 tier, address a, uint256 epoch) internal view returns (uint256) {
        (bool exists, uint256 leaf) = _sortition().leafOf(tier, a);
        return exists ? _sortition().leafWeightAt(tier, epoch, leaf) : 0;
    }
}
