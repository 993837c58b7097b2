// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {VmReview12} from "./VrfAttackFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review12DevnetDefaultsNeverAbandon (outside review 12 of c0fad00; MEDIUM, open)
/// @notice Property (outside review 6, docs/appeals-canaries.md ABANDONED): with the shipped deployment
/// defaults and a timely source, walking away from a started draw after seeing the seed costs the bond.
/// Attack: `trustnode deploy` and the devnet default to 12-block epochs (`DEVNET_EPOCH_BLOCKS`), lookahead
/// delay 2 and `draw_blocks = 40` (`DEVNET_SESSION_PARAMS`, `config.py`). A timely lookahead value is
/// obtainable at most `3 * 12 - 2 - 2 = 32` blocks before its snapshot lapses, so c0fad00's
/// `obtainableAt + drawBlocks <= readable` never holds: every appeal round started and left short ends
/// UNFILLABLE. An appellant sees the seed, draws one call (one segment) and walks away for R per seat of
/// that segment, whenever it appeals (Review12TimedAppealShortWindow shows the timing variant at larger
/// epochs). Before c0fad00 the same lapse was Expired (abandoned).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review12DevnetDefaults*' -vv`, skip
/// removed). The fixture's epochs are fixed at 50 blocks (`StakingFixture._deployStaking` is not virtual),
/// so the test reproduces the devnet's regime there: drawBlocks 147, one more than the longest window
/// (3 * 50 - 2 - 2 = 146), as 40 > 32 on the devnet. 2 PASS segments appealed in an epoch's first block
/// (bond 84 TRUST, 14 seats): 146 blocks from obtainableAt to readable, the appellant draws 7 seats and lets
/// the round lapse: Cancelled, cost 42 TRUST, 42 refunded (the property wants Expired, 84).
/// Fix proposal: reject parameter sets with `drawBlocks + minDelay + 1 > 2 * epochBlocks` on chain
/// (`AuditSessions._pushParams` / `setRandomness`) and in `trustnode deploy` (next to `check_randomness_delay`),
/// and change the devnet defaults (e.g. `draw_blocks = 20` with 12-block epochs: 20 + 2 + 1 <= 24, or
/// 24-block epochs with `draw_blocks = 40`); see Review12TimedAppealShortWindow for the alternative rule.
/// Tried locally (reverted): the alternative rule in `_sync` (`need = min(drawBlocks, 2 * sortition.epochBlocks()
/// - source.minDelay() - 1)`, `full = obtainableAt + need <= readable`) makes this `_KNOWN` test and
/// Review12DevnetDefaultsNeverAbandon / Review12TimedAppealShortWindow pass, while
/// Review11VrfLateDeliveryOneBlockDraw and Review12FullDrawWindowBoundary still pass.
contract Review12DevnetDefaultsNeverAbandon is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    /// @dev The devnet's regime at the fixture's 50-block epochs: one block more than the longest window
    /// (3 * 50 - 2 - 2 = 146), as 40 > 32 on the devnet.
    uint256 internal constant NEVER_FULL_DRAW = 147;
    uint256 internal sid;

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.drawBlocks = uint32(NEVER_FULL_DRAW);
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams(); // no canaries
        p.appealBlocks = 200;
    }

    function setUp() public {
        sid = _setUpPassedSession(12, 2, FEE); // both PASS
    }

    function test_EpochStartAppealWalksAwayForHalf() public {
        _nextEpoch(); // the longest window an appeal can get
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0, 1));
        uint256 bond = before - token.balanceOf(appellant);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 first = randomness.obtainableAt(rd.drawRequest);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        emit log_named_uint("blocks from obtainableAt to readable (drawBlocks 147)", readable - first);
        vm.roll(first);
        appeals.drawPanel(sid, round, 1);
        rd = appeals.roundOf(sid, round);
        assertEq(rd.drawnSeats, 7, "setup: one segment drawn");
        vm.roll(uint256(rd.drawDeadline) + 1);
        appeals.advance(sid);
        IAuditSessions.Status st = appeals.roundOf(sid, round).status;
        _closeAndSettle(sid);
        uint256 cost = before - token.balanceOf(appellant);
        emit log_named_decimal_uint("bond (TRUST)", bond, 18);
        emit log_named_uint("round status (7 Cancelled, 8 Expired)", uint256(st));
        emit log_named_decimal_uint("appellant's cost of walking away (TRUST)", cost, 18);
        assertTrue(
            st == IAuditSessions.Status.Expired, "a timely seed seen and walked away from is ABANDONED"
        );
        assertEq(cost, bond, "the whole bond");
    }
}
