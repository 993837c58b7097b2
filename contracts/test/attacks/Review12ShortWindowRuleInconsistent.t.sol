// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfNoCanaryAppealsFixture, VmReview12} from "./VrfAttackFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review12ShortWindowRuleInconsistent (outside review 12 of c0fad00; LOW-MEDIUM, open)
/// @notice Property (docs/appeals-canaries.md, ABANDONED and UNFILLABLE; docs/protocol-v2.md, "Refund iff
/// the value came after the snapshot"): one rule decides forfeit or refund for a value that left less than a
/// full draw window (a late oracle), whoever must draw (the provider in round 0, the appellant in an appeal)
/// and whether or not somebody happened to start the draw: the late oracle blames nobody, so the payer loses
/// at most R per drawn seat.
/// Attack / liveness: c0fad00 applies `obtainableAt + drawBlocks <= readable` to one of three places only:
/// - appeal round, Drawing short past the deadline: full window -> Expired, else Cancelled (c0fad00);
/// - appeal round, never started (`_sync` Created): `obtainableAt <= readable` -> Expired, whatever the
///   window left: an appellant given a short window by the oracle who misses it loses the whole bond, and
///   would have lost only R per seat of one segment had anyone (even a griefer) started the draw with one
///   call. So the rule pays an appellant who dislikes the seed in a short window to start and abandon the
///   draw, and punishes one that does nothing;
/// - round 0 (`AuditSessions._sync` Drawing): always `DrawAbandoned`, so review 11's attack (the oracle
///   delivers in `readable - 1`, a griefer starts the draw with one segment in the one block left, the
///   provider's completing call lands in `readable + 1`) still forfeits the provider's fee.
/// The memory port (`memory_rounds.py`) always abandons a lapsed appeal round and models no snapshot: a
/// node or demo reading it shows ABANDONED (bond forfeited) where the chain refunds (UNFILLABLE); it cannot
/// mislead settlement on chain (the EVM port reads the chain's status, `evm_appeals.py`), only a user's
/// expectation in memory-port runs.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review12ShortWindow*' -vv`, skips
/// removed; mock VRF, 3 confirmations, timeout 400; drawBlocks 20):
/// - appeal of 2 PASS segments (bond 84 TRUST), delivery at readable - 20 (a 20-block window, one short of
///   full), nobody draws: Expired, the appellant loses 84 TRUST; the same round started with one call (7
///   seats) and left short is Cancelled and costs 42 (Review12FullDrawWindowBoundary).
/// - round 0, 8 tier-1 segments (24 seats, fee 1,000 TRUST, pool 800), delivery at readable - 1, a griefer
///   draws one segment (3 seats) in `readable`: DrawAbandoned (termination 5), the provider gets 0 of the
///   800 pool back (782 to the treasury, 18 for the 3 seats); the appeal rule would refund it 782.
/// Fix proposal: one predicate, `full(id, epoch) = obtainableAt(id) + drawBlocks <= readableUntil(epoch)`,
/// used (a) in `AppealModule._sync` Created (`late = !full`: Cancelled, refunded whole, 0 seats), (b) in
/// `AuditSessions._sync` Drawing (`full ? DrawAbandoned : RandomnessFailed`, R per drawn seat kept) and
/// (c) in `AuditSessions._endUndrawn` (`late = !full`). With params that make a timely value always leave
/// a full window (Review12TimedAppealShortWindow's fix) only an oracle outage reaches the refund, so the
/// free option it gives (look at the seed, do nothing, get refunded) is the oracle's doing, as today's
/// `obtainableAt > readable` refund already is. Mirror the predicate in `memory_rounds.py` or state there
/// that the memory port has no late oracle.
contract Review12ShortWindowRuleInconsistent is VrfNoCanaryAppealsFixture {
    function setUp() public {
        _setUpVrf();
    }

    function test_AppealUndrawnShortWindowCostsNoMoreThanAStartedOne() public {
        uint256 sid = _finalizedOnVrf(2);
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0, 1));
        uint256 bond = before - token.balanceOf(appellant);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        uint256 readable = _sortition().snapshotReadableUntil(rd.epoch);
        vm.roll(readable - 20);
        assertTrue(_deliver(rd.drawRequest, 7), "delivered");
        uint256 drawBlocks = sessions.paramsAt(sessions.sessionOf(sid).paramsVersion).drawBlocks;
        emit log_named_uint(
            "obtainableAt + drawBlocks - readable (> 0: not full)",
            vrf.obtainableAt(rd.drawRequest) + drawBlocks - readable
        );
        vm.roll(readable + 1); // nobody drew in the short window
        appeals.advance(sid);
        IAuditSessions.Status st = appeals.roundOf(sid, round).status;
        _closeAndSettleOnVrf(sid);
        uint256 cost = before - token.balanceOf(appellant);
        emit log_named_decimal_uint("bond (TRUST)", bond, 18);
        emit log_named_uint("round status (7 Cancelled, 8 Expired)", uint256(st));
        emit log_named_decimal_uint("appellant's cost, nobody drew (TRUST)", cost, 18);
        assertTrue(cost <= 7 * R, "no more than a round started with one call and left short (42 TRUST)");
    }

    function test_Round0ShortWindowLeftShortRefundsLikeAnAppeal() public {
        uint256 sid = _open(_uniform(8, 1), FEE);
        _commitCanaries(sid, new bytes32[](0));
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        uint256 readable = _sortition().snapshotReadableUntil(s.epoch);
        uint256 providerBefore = token.balanceOf(provider);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        vm.roll(readable - 1);
        assertTrue(_deliver(s.drawRequest, 7), "delivered");
        vm.roll(readable);
        vm.prank(address(0xBAD));
        sessions.draw(sid, 1); // a griefer takes the one block left with one segment
        s = sessions.sessionOf(sid);
        emit log_named_uint("seats drawn by the griefer (of 24)", s.drawnSeats);
        emit log_named_uint("draw window (blocks)", s.drawDeadline + 1 - vrf.obtainableAt(s.drawRequest));
        vm.roll(readable + 1); // the provider's completing call misses the block
        sessions.advance(sid);
        s = sessions.sessionOf(sid);
        uint256 refunded = token.balanceOf(provider) - providerBefore;
        emit log_named_uint("termination (2 RandomnessFailed, 5 DrawAbandoned)", uint256(s.termination));
        emit log_named_decimal_uint("pool refunded to the provider (TRUST)", refunded, 18);
        emit log_named_decimal_uint(
            "treasury gain (TRUST)", token.balanceOf(address(treasury)) - treasuryBefore, 18
        );
        assertEq(
            refunded, 800e18 - uint256(s.drawnSeats) * R, "as an appeal round: R per drawn seat, rest back"
        );
    }
}
