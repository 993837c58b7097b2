// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review6AppealSeenSeedBuysNoFreeAbort (outside review 6 of main c7e9e27, late randomness)
/// @notice Property (issue 12, 5, applied to appeal panels as `_endUndrawn` applies it to round 0): once a
/// panel's randomness was obtainable while its snapshot was readable, abandoning the draw is not refunded,
/// so nobody can look at the seed and walk away for free. The core now tells a late value (refund) from
/// an undrawn timely one (forfeit) with `IRandomness.obtainableAt`; `AppealModule._sync` and
/// `_startDraw` do not: a round whose timely seed nobody drew ends Cancelled, not refused, i.e. UNFILLABLE,
/// and `AppealSettlement._scoreRound` charges an UNFILLABLE appellant R per DRAWN seat only: 0. The
/// appellant can therefore fix the seed (`fulfil` is permissionless), simulate the panel offline and draw
/// only if the panel suits it; otherwise it lets the round lapse, gets its bond back whole, and the
/// contested segment closes. The appeal becomes a free option on a captured panel instead of a bonded
/// bet (the bond is what `AppealMath.farmingLoses` relies on). Only other nodes drawing in time (the
/// provider's service and the auditors' watchdog call `drawPanel`) stop it.
/// @dev Tier 1, 12 auditors of 1,000 TRUST, R = 6 TRUST. Round 0 PASS; the appellant appeals segment 0
/// (bond 42 TRUST), fixes the seed once it is obtainable, does not draw, and lets the snapshot lapse.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review6AppealSeen*' -vv`, skip
/// removed): the round ends Cancelled (not refused), the appellant's cost is 0 of its 42 TRUST bond, the
/// segment is closed at PASS. Round 0 under the same abandonment forfeits its pool (SnapshotUnavailable).
/// Fix: mirror `_endUndrawn` in AppealModule: a round still Created (or Drawing with seats missing) past
/// its snapshot whose randomness had `obtainableAt <= readable` ends as the appellant's abandonment (bond
/// forfeited to the treasury, or R per panel seat like KEYS_WITHHELD), and only a late value is refunded.
contract Review6AppealSeenSeedBuysNoFreeAbort is AppealsFixture {
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    uint256 internal constant PASS = 1;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function test_AbandonedAppealAfterSeenSeedIsNotFree() public {
        uint256 sid = _openReady(4, 1, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0);
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0));
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        bytes32 seed = sessions.sourceOf(sid).fulfil(rd.drawRequest); // the appellant looks at the seed
        assertTrue(seed != bytes32(0), "seed public");
        assertTrue(sessions.sourceOf(sid).obtainableAt(rd.drawRequest) <= readable, "obtainable in time");
        vm.roll(readable + 1); // ... and does not draw
        _closeAndSettle(sid);
        rd = appeals.roundOf(sid, round);
        uint256 cost = before - token.balanceOf(appellant);
        emit log_named_uint("round status (8 Expired: abandoned, 7 Cancelled)", uint256(rd.status));
        emit log_named_uint("refused (1 yes)", rd.refused ? 1 : 0);
        emit log_named_decimal_uint("appellant's cost", cost, 18);
        emit log_named_uint("segment 0 outcome (1 PASS)", _outcomeOf(sid, 0));
        assertTrue(rd.drawnSeats < rd.totalSeats, "ended undrawn");
        assertTrue(cost > 0, "walking away from a timely seed is not free");
        assertEq(_outcomeOf(sid, 0), PASS, "the contested outcome stands");
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty");
    }
}
