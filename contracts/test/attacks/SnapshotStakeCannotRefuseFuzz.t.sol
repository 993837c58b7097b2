// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {Staking} from "../../src/Staking.sol";

/// @title SnapshotStakeCannotRefuseFuzz (docs/protocol-v2.md, 5.1)
/// @notice Property: an adaptive outsider that requests a withdrawal, deregisters, or both, at any block
/// between a session's opening and its draw never makes an honest provider's session end DrawRefused
/// (or cancelled at all) when, without it, the session is drawn in full; and the stake of every seat
/// the outsider got stays in its pool until that session settles, even after its hold is over.
contract SnapshotStakeCannotRefuseFuzz is AttackBase {
    address internal outsider;

    function setUp() public {
        _deployProtocol();
        _newAuditor(1, 1000e18);
        _newAuditor(1, 1000e18);
        outsider = _newAuditor(1, 1000e18);
        _rollTo(block.number + 3 * EPOCH_BLOCKS); // every pool stands in the readable snapshots
    }

    function testFuzz_OutsiderCannotRefuseSnapshotStake(
        uint256 segSeed,
        uint256 actSeed,
        uint256 drawSeed,
        uint256 mode,
        uint256 fraction
    ) public {
        uint256 segments = bound(segSeed, 1, 2);
        mode = bound(mode, 0, 2); // 0 withdraw, 1 deregister, 2 both
        fraction = bound(fraction, 1, 100);
        uint256 openBlock = block.number;
        uint256 sid = _openUniform(segments, 1, _feeFor(3 * segments));
        IAuditSessions.Session memory s = _sessionRecord(sid);
        uint256 target = randomness.targetBlockOf(s.drawRequest);
        uint256 lastDraw = sortition.snapshotReadableUntil(s.epoch);
        uint256 drawBlock = bound(drawSeed, target + 1, lastDraw);
        uint256 actBlock = bound(actSeed, openBlock, drawBlock);

        // Without the outsider's move.
        uint256 snap = vm.snapshotState();
        _rollTo(drawBlock);
        _drawAll(sid);
        bool full = _drawDone(sid);
        vm.revertToState(snap);

        _rollTo(actBlock);
        if (mode != 1) {
            assertTrue(_requestWithdrawal(outsider, outsider, 1000e18 * fraction / 100), "request");
        }
        if (mode != 0) {
            vm.prank(outsider);
            registry.deregister();
        }
        _rollTo(drawBlock);
        _drawAll(sid);
        s = _sessionRecord(sid);
        if (full) {
            assertTrue(
                s.status != IAuditSessions.Status.Cancelled, "an outsider's move cancelled the session"
            );
            assertTrue(s.termination != IAuditSessions.Termination.DrawRefused, "DrawRefused");
            assertTrue(_drawDone(sid), "drawn in full");
        }
        uint256 seats = _seatsOf(sid, outsider).length;
        if (seats == 0) return;
        // Past every hold: the parked shares join the ledger behind the session's entry, so nothing
        // leaves before it settles and the locked stake is still in the pool.
        _rollTo(block.number + 4 * EPOCH_BLOCKS);
        assertEq(_claimWithdrawals(outsider), 0, "stake left before the session settled");
        Staking.PoolView memory p = staking.poolOf(outsider);
        assertTrue(p.locked != 0 && p.assets >= p.locked, "the seats' stake is in the pool");
    }
}
