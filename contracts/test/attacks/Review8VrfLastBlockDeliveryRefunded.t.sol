// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {VrfAttackFixture} from "./VrfAttackFixture.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";

/// @title Review8VrfLastBlockDeliveryRefunded (outside review 8 of main b23b820, late randomness; low; fixed)
/// @notice Property (docs/protocol-v2.md, "Refund iff the value came after the snapshot": `obtainableAt` is
/// "the first block anyone could obtain a value", and a forfeit means "the value was available in time and
/// nobody drew"): a value that no keeper's transaction submitted after seeing it can use while the
/// snapshot is readable is refunded, and no draw uses a value before its `obtainableAt`. For lookahead,
/// `obtainableAt = target + 1`, the first block in which a separately submitted transaction can fix it.
/// For VRF it was the delivery block itself: a delivery in the snapshot's last readable block counted as
/// "in time", yet the only draw that could use it was one ordered after the delivery inside that same block
/// (a bundle/backrun); the provider's (or anyone's) draw submitted on seeing the delivery landed at
/// `readable + 1` and ended the session `SnapshotUnavailable`: forfeit.
/// @dev Attack: none by the provider; an oracle delayed by about two epochs (an outage) that answers in the
/// last readable block. The refund/forfeit line was off by one block against VRF.
/// Fix: `VRFRandomness.obtainableAt` = delivery block + 1 (the first block a transaction submitted after
/// the delivery can use it, as lookahead's target + 1) AND `AuditSessions._startDraw` reverts `TooEarly`
/// before `obtainableAt` (no draw ordered behind the delivery in its own block). Both halves are needed:
/// with only the first, whoever can backrun the last-block delivery would draw on a good seed and take the
/// refund on a bad one (a re-roll). `_requestDraw`'s check already leaves an epoch, so only outages move.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review8VrfLastBlock*' -vv`), fee
/// 1000 TRUST, delivery at `readable`, the keeper's draw at `readable + 1`:
/// - before (main 481282f, the `_KNOWN` test with its skip removed): 0 seats drawn, termination 3
///   (SnapshotUnavailable), provider refunded 0, treasury +800 TRUST beyond its 200 fee share; a draw in
///   the delivery block behind the delivery drew the session (the re-roll's other half).
/// - after: 0 seats drawn, termination 2 (RandomnessFailed), provider refunded 800 TRUST, treasury +0
///   beyond its fee share; a draw in the delivery block reverts `TooEarly(request, readable + 1)`.
/// The fuzz below moves the delivery over [readable - 3, readable + 3] and the keeper's draw after it.
contract Review8VrfLastBlockDeliveryRefunded is VrfAttackFixture {
    uint256 internal constant FEE = 1000e18;

    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _nextEpoch();
        _useVrf();
    }

    /// @dev Open, then the oracle answers in block `readable + offset` (offset may be negative).
    function _deliveredAt(int256 offset) internal returns (uint256 sid, uint256 readable, uint256 delivered) {
        sid = _open(_uniform(1, 1), FEE);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        readable = _sortition().snapshotReadableUntil(s.epoch);
        delivered = uint256(int256(readable) + offset);
        vm.roll(delivered);
        assertTrue(_deliver(s.drawRequest, 7), "delivered");
        assertEq(
            uint256(vrf.status(s.drawRequest)), uint256(IRandomness.RequestStatus.Fulfilled), "fixed at once"
        );
        assertEq(vrf.obtainableAt(s.drawRequest), delivered + 1, "usable from the block after the delivery");
    }

    function _need(uint256 sid, uint256 readable) internal view returns (uint256) {
        uint256 epochEnd = sessions.sessionOf(sid).epoch * EPOCH_BLOCKS - 1;
        uint256 delay = vrf.minDelay() > CANARY_COMMIT_BLOCKS ? vrf.minDelay() : CANARY_COMMIT_BLOCKS;
        uint256 guaranteed = readable - epochEnd - delay - 2 - 4; // 4: DrawWindow.LATENCY_BLOCKS
        uint256 drawBlocks = _sessionParams().drawBlocks;
        return drawBlocks < guaranteed ? drawBlocks : guaranteed;
    }

    function _refunded(uint256 providerBefore) internal view returns (uint256) {
        return token.balanceOf(provider) + FEE - providerBefore;
    }

    function test_LastBlockDeliveryIsRefunded() public {
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 providerBefore = token.balanceOf(provider);
        (uint256 sid, uint256 readable,) = _deliveredAt(0);
        vm.roll(readable + 1); // the first block a draw submitted on seeing the delivery can land in
        emit log_named_uint("seats drawn", sessions.draw(sid, 16));
        emit log_named_uint(
            "termination (2 RandomnessFailed, 3 SnapshotUnavailable)",
            uint256(sessions.sessionOf(sid).termination)
        );
        uint256 refunded = _refunded(providerBefore);
        emit log_named_decimal_uint("provider refunded (TRUST)", refunded, 18);
        emit log_named_decimal_uint(
            "treasury gained beyond the 20% fee share (TRUST)",
            token.balanceOf(address(treasury)) - treasuryBefore - FEE / 5,
            18
        );
        assertEq(
            uint256(sessions.sessionOf(sid).termination),
            uint256(IAuditSessions.Termination.RandomnessFailed),
            "nobody could draw in time"
        );
        assertEq(refunded, FEE * 8 / 10, "Review8: a VRF answer in the last readable block is refunded");
    }

    /// @dev The other half: the only draw that could use a last-block delivery, one ordered behind it in its
    /// own block, is refused, so nobody chooses between drawing on the seed and the refund.
    function test_NoDrawBehindTheDeliveryInItsBlock() public {
        (uint256 sid, uint256 readable,) = _deliveredAt(0);
        uint256 request = sessions.sessionOf(sid).drawRequest;
        vm.expectRevert(abi.encodeWithSelector(AuditSessions.TooEarly.selector, request, readable + 1));
        sessions.draw(sid, 16);
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Created), "not drawn");
    }

    /// @dev Control: a delivery one block earlier is in time; the keeper's draw in the last readable block
    /// draws every seat, and nobody drawing forfeits as before.
    function test_DeliveryBeforeTheLastBlockIsInTime() public {
        (uint256 sid, uint256 readable,) = _deliveredAt(-1);
        vm.roll(readable);
        sessions.draw(sid, 16);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(
            uint256(s.status), uint256(IAuditSessions.Status.Drawing), "drawn in the last readable block"
        );
        assertEq(s.drawnSeats, s.totalSeats, "every seat");
    }

    /// @dev Delivery anywhere in [readable - 3, readable + 3]; a draw tried behind the delivery in its own
    /// block; then a keeper draws `wait` blocks after it (or nobody does, and `advance` ends the session).
    /// A draw uses the value only from `obtainableAt` on; a draw in time draws; undrawn, the provider is
    /// refunded: no block from `obtainableAt` on was readable, or (outside review 12) too few to be the draw
    /// window a timely value is guaranteed (`DrawWindow`: drawBlocks capped at readable - epochEnd -
    /// max(minDelay, canaryCommitBlocks) - 2), which every delivery within 3 blocks of the end is.
    function testFuzz_DrawFromObtainableAtRefundIffNoBlockLeft(uint256 offset, uint256 wait, bool keeper)
        public
    {
        int256 off = int256(bound(offset, 0, 6)) - 3;
        wait = bound(wait, 1, 4);
        uint256 providerBefore = token.balanceOf(provider);
        (uint256 sid, uint256 readable, uint256 delivered) = _deliveredAt(off);
        uint256 request = sessions.sessionOf(sid).drawRequest;
        bool late = delivered + 1 + _need(sid, readable) > readable; // short of the guaranteed window
        if (delivered <= readable) {
            vm.expectRevert(abi.encodeWithSelector(AuditSessions.TooEarly.selector, request, delivered + 1));
            sessions.draw(sid, 16);
        }
        uint256 at = delivered + wait;
        vm.roll(at);
        if (keeper) {
            sessions.draw(sid, 16);
        } else {
            vm.roll(readable + 1 + wait);
            sessions.advance(sid);
        }
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        if (keeper && at <= readable) {
            assertLe(
                delivered + 1, readable, "drawn only while the snapshot is readable and the value obtainable"
            );
            assertGe(at, vrf.obtainableAt(request), "drawn from obtainableAt on");
            assertEq(uint256(s.status), uint256(IAuditSessions.Status.Drawing), "drawn");
            assertEq(s.drawnSeats, s.totalSeats, "every seat");
            assertEq(_refunded(providerBefore), 0, "fee kept by the session");
            return;
        }
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Expired), "ended undrawn");
        assertEq(s.drawnSeats, 0, "nothing drawn");
        if (late) {
            assertEq(
                uint256(s.termination), uint256(IAuditSessions.Termination.RandomnessFailed), "late: refund"
            );
            assertEq(_refunded(providerBefore), FEE * 8 / 10, "the audit pool refunded");
        } else {
            assertEq(
                uint256(s.termination),
                uint256(IAuditSessions.Termination.SnapshotUnavailable),
                "in time and not drawn: forfeit"
            );
            assertEq(_refunded(providerBefore), 0, "forfeited");
        }
    }
}
