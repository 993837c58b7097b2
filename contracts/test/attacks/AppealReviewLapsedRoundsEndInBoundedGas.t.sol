// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @notice Property: however many appeal rounds lapse together, they end - and the session's outcome
/// becomes final - in calls of bounded gas. Attack (liveness): an appellant (e.g. the provider, whose bond
/// comes back whole from an UNFILLABLE round with no seat drawn) appeals every segment in its own round and
/// never draws. A lapsed round can only be ended by `advance` (every other entry point reverts after
/// applying the timeout, undoing it), and `advance` ended every due round in one call, each end recomputing
/// the O(n) trace verdict: O(rounds x n) gas in one transaction, past any block's gas limit for a large
/// session, so the outcome would never become final and every auditor's round-0 stake stay locked.
contract AppealReviewLapsedRoundsEndInBoundedGasTest is AppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);

    uint256 internal constant N = 64;
    /// @dev Gas one keeper call may use: a fraction of a block, whatever the number of lapsed rounds.
    uint256 internal constant CALL_GAS = 6_000_000;

    function setUp() public {
        _deployAppeals();
        _addAuditors(0, 16, STAKE);
        _nextEpoch();
    }

    function test_LapsedRoundsEndInBoundedGas() public {
        bytes32[] memory c = new bytes32[](N * 1000 / 10_000);
        for (uint256 i = 0; i < c.length; ++i) {
            c[i] = keccak256(abi.encode("never revealed", i));
        }
        uint256 sid = _openReady(N, 0, c);
        _voteRound0(sid, 0, 0, 0);
        _toAppealWindow(sid);
        uint256 before = token.balanceOf(appellant);
        for (uint256 i = 0; i < N; ++i) {
            _appeal(sid, _segs(i));
        }
        assertEq(appeals.sessionAppeals(sid).openRounds, N, "one round per segment");
        // Nobody draws: every round's randomness lapses (the lookahead hash window is 256 blocks).
        vm.roll(appeals.sessionAppeals(sid).lastWindowEnd + RANDOMNESS_DELAY + 300);
        uint256 calls = 0;
        uint256 most = 0;
        while (!appeals.isOutcomeFinal(sid)) {
            assertLe(++calls, N, "progress on every call");
            uint256 g = gasleft();
            appeals.advance(sid);
            uint256 used = g - gasleft();
            if (used > most) most = used;
        }
        emit log_named_uint("most gas of one advance call", most);
        emit log_named_uint("advance calls", calls);
        assertLe(most, CALL_GAS, "every call fits in a fraction of a block");
        uint256 bonds = 0;
        for (uint256 r = 1; r <= N; ++r) {
            // Each seed was obtainable while the snapshot was readable and nobody drew: abandoned (Expired
            // drawn short, outside review 6), not UNFILLABLE.
            assertEq(uint8(appeals.roundOf(sid, r).status), uint8(IAuditSessions.Status.Expired), "abandoned");
            bonds += appeals.roundOf(sid, r).bond;
        }
        _closeAndSettle(sid);
        assertEq(
            before - token.balanceOf(appellant), bonds, "a timely seed nobody drew: every bond forfeited"
        );
    }

    /// @dev Anyone may fix a round's randomness (`fulfil`) without drawing: a fixed value never expires, so
    /// the round must still end through `advance` alone once the snapshot it draws from is unreadable.
    function test_FixedButUndrawnRoundEndsByAdvance() public {
        uint256 sid = _openReady(8, 0, new bytes32[](0));
        _voteRound0(sid, 0, 0, 0);
        _toAppealWindow(sid);
        uint256 round = _appeal(sid, _segs(3));
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        randomness.fulfil(appeals.roundOf(sid, round).drawRequest);
        uint256 readable = _sortition().snapshotReadableUntil(appeals.roundOf(sid, round).epoch);
        vm.roll(readable + 1);
        assertTrue(appeals.advance(sid), "advance alone ends the round and the outcome");
        assertEq(uint8(appeals.roundOf(sid, round).status), uint8(IAuditSessions.Status.Expired), "abandoned");
        assertEq(appeals.roundOf(sid, round).drawnSeats, 0, "never drawn");
    }
}
