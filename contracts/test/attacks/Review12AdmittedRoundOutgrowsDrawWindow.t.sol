// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {VmReview12} from "./VrfAttackFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review12AdmittedRoundOutgrowsDrawWindow (outside review 12 of c0fad00, question 1; MEDIUM, open)
/// @notice Property (docs/appeals-canaries.md, ABANDONED: "anyone could have finished it"): a round the
/// appeal module admits can be drawn inside its draw window by an honest appellant that starts at once and
/// has every block's gas (30M) to itself; otherwise leaving it short is nobody's choice and must not forfeit
/// the bond.
/// Attack / liveness: `SnapshotSumTree.sampleAt` costs O(n^2) in the exclusion list's length n (the
/// duplicate check in `_exclusions`, plus n node reads and n x depth in `_without`): measured one sample
/// at 20,652 gas (n = 0), 290,576 (50), 829,521 (100), 2,786,883 (200), 9,750,239 (392)
/// (`Review12ExclusionCostCurve`). A panel's list holds every auditor at the seat cap (permanent) plus the
/// segment's own seats and earlier panels' auditors, so it grows with the round: n reaches about
/// totalSeats / seatCap. `_check` bounds a round only by `members * seatCap / 2` (`PanelTooLarge`, when it
/// names more segments than seatCap), never by what the window can draw, and a call completes whole
/// segments, so once k samples at the current n exceed a block no call can be included at all.
/// Here: seatCap 1 (every seated auditor is excluded from the rest of the panel: the steepest case of any
/// seatCap; larger caps reach the same n with seatCap times the seats), 720 tier-1 auditors of 1,000 TRUST,
/// 51 PASS segments appealed at depth 1 (357 seats, capacity 360, bond 2,142 TRUST), drawn by the appellant
/// one segment per call from obtainableAt on, calls packed greedily into 30M-gas blocks.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review12AdmittedRound*' -vv`, skip
/// removed; in-test `gasleft()` deltas, warm slots: a lower bound on real cost): 35 calls fit 16 blocks and
/// draw 245 of the 357 seats; the next segment's call (7 samples at n ~ 250) needs 33,593,662 gas, more
/// than a block, so no block of the remaining 5 of the window's 21 can include it and nobody can finish.
/// The round lapses Expired (the value left a full window) and the honest appellant loses its whole
/// 2,142 TRUST bond; the contested PASSes stand. The same happens at seatCap 8 once about 250 auditors
/// sit at the cap (about 2,000 seats; sooner with skewed stake, which a griefer can add with a few hundred
/// high-stake accounts staked before the appeal's epoch: they are seated, reach the cap first, and their
/// leaves also raise `PanelTooLarge`'s capacity). Round 0 (`AuditSessions.draw`) uses the same lists.
/// Fix proposal: (1) make a sample linear in n: `SnapshotSumTree._exclusions`' duplicate scan is the
/// quadratic term; keep the `DuplicateExclusion` revert with a memory bitmap over leaf ids (O(n + leaves /
/// 256)) instead of the pairwise scan. Tried locally (scan removed, then restored): one sample costs 148,101
/// gas at n = 50, 491,983 at 200, 924,560 at 392 (was 9,750,239), and this round draws all 357 seats in 51
/// calls over 7 of its 21 blocks (this test then passes). (2) Bound the admitted round by what the window
/// can draw, since the linear term (~2.3k gas per exclusion per sample) still grows with the round: e.g. in
/// `_check`, `q.totalSeats <= maxRoundSeats(drawBlocks, seatCap)` (a constant per params version, sized from
/// the worst call at 30M gas), reverting `PanelTooLarge` beyond it.
contract Review12AdmittedRoundOutgrowsDrawWindow is NoCanaryAppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    uint256 internal constant MEMBERS = 720;
    uint256 internal constant SEGMENTS = 51;
    uint256 internal constant BLOCK_GAS = 30_000_000;
    uint256 internal sid;

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 1;
    }

    function setUp() public {
        sid = _setUpPassedSession(MEMBERS, SEGMENTS, 2000e18); // all PASS
    }

    function test_AdmittedRoundDrawsInItsWindow() public {
        uint256[] memory all = new uint256[](SEGMENTS);
        for (uint256 i = 0; i < SEGMENTS; ++i) {
            all[i] = i;
        }
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, all);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("round seats", rd.totalSeats);
        emit log_named_decimal_uint("bond (TRUST)", rd.bond, 18);
        vm.roll(randomness.obtainableAt(rd.drawRequest));
        uint256 start = block.number;
        uint256 used = 0; // gas used in the current block
        uint256 calls = 0;
        uint256 tooBig = 0;
        while (true) {
            rd = appeals.roundOf(sid, round);
            if (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats == rd.totalSeats) break;
            uint256 snap = vm.snapshotState();
            uint256 g = gasleft();
            appeals.drawPanel(sid, round, 1);
            g -= gasleft();
            if (g > BLOCK_GAS) {
                tooBig = g;
                vm.revertToState(snap); // no block can include it
                break;
            }
            if (used + g > BLOCK_GAS) {
                vm.revertToState(snap); // next block
                if (block.number + 1 > appeals.roundOf(sid, round).drawDeadline) break;
                vm.roll(block.number + 1);
                used = 0;
                continue;
            }
            used += g;
            ++calls;
        }
        rd = appeals.roundOf(sid, round);
        emit log_named_uint("calls included", calls);
        emit log_named_uint("seats drawn in the window", rd.drawnSeats);
        emit log_named_uint("blocks used (from obtainableAt)", block.number + 1 - start);
        emit log_named_uint("blocks in the draw window", rd.drawDeadline + 1 - start);
        emit log_named_uint("first call above 30M gas (0: none)", tooBig);
        bool drawn = rd.drawnSeats == rd.totalSeats;
        vm.roll(uint256(rd.drawDeadline) + 1);
        appeals.advance(sid);
        IAuditSessions.Status st = appeals.roundOf(sid, round).status;
        emit log_named_uint("round status (2 Drawing, 7 Cancelled, 8 Expired)", uint256(st));
        if (!drawn) {
            _closeAndSettle(sid);
            emit log_named_decimal_uint("appellant's cost (TRUST)", before - token.balanceOf(appellant), 18);
        }
        assertTrue(drawn, "an admitted round can be drawn in its window");
    }
}
