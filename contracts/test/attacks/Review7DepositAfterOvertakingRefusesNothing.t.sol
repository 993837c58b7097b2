// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";

/// @title Review7DepositAfterOvertakingRefusesNothing (outside review 7 of main b460fed, draw order 6.1)
/// @notice Kept after the overtaking rule was withdrawn: a queued deposit still refuses no seat of a panel
/// whose draw a later session interleaved (a free refusal would forfeit or, under any future draw-order rule,
/// excuse a draw).
/// @notice Property: once a later-opened session's draw overtook a panel (its later refusals excused), an
/// auditor of the provider's side still has no free way to refuse a seat. Attack tried (does not work): a
/// friend that already sits on segment 0 of S and holds a later ledger entry (from the overtaking session
/// S') deposits 1,000 TRUST, hoping `_canLock`'s rule "queued deposits back no extension of an entry that
/// later entries follow" refuses it on segment 1 (free, since the deposit stays its stake).
/// @dev Regression, passes: `seatQuote.free` counts the queued deposit and `_canLock` subtracts it again,
/// so the friend's usable free stake is unchanged. Measured (`scripts/forge test --match-path
/// 'contracts/test/attacks/Review7DepositAfter*' -vv`): free 1,084 TRUST with 1,000 queued, S drawn in
/// full (6 of 6 seats). Tier 1: three auditors of 100 TRUST; S = 2 segments, S' = 1 segment, same block.
contract Review7DepositAfterOvertakingRefusesNothing is AttackBase {
    address[3] internal friends;
    uint256 internal nonce;

    function setUp() public {
        _deployProtocol();
        for (uint256 i = 0; i < 3; ++i) {
            friends[i] = _newAuditor(1, 100e18);
        }
        _rollTo((block.number / EPOCH_BLOCKS + 2) * EPOCH_BLOCKS);
    }

    /// @dev The provider opens n tier-1 segments at the minimum fee, in the current block.
    function _openHere(uint256 n) internal returns (uint256 sid) {
        bytes memory tw = new bytes(3 * n);
        for (uint256 i = 0; i < n; ++i) {
            tw[3 * i] = bytes1(uint8(1));
            tw[3 * i + 2] = bytes1(uint8(1));
        }
        uint256 fee = _feeFor(3 * n);
        vm.startPrank(_provider());
        token.approve(address(sessions), fee);
        sid = sessions.openSession(keccak256(abi.encode("review7", ++nonce)), tw, fee);
        vm.stopPrank();
    }

    function test_DepositAfterOvertakingRefusesNothing() public {
        uint256 s = _openHere(2);
        uint256 later = _openHere(1);
        _waitForRandomness(later);
        _waitForRandomness(s);
        sessions.draw(s, 1); // segment 0: every friend seated, one entry each for S
        assertEq(_sessionRecord(s).drawnSeats, 3, "setup: segment 0 drawn");
        _drawAll(later); // a later entry for each friend (S overtaken, under the withdrawn rule)
        _stake(friends[0], friends[0], 1000e18); // queued behind the friend's entries
        IStaking.SeatQuote memory q = staking.seatQuote(friends[0]);
        emit log_named_decimal_uint("friend's free stake", q.free, 18);
        uint256 queued = staking.queuedAfter(friends[0], q.lastEntry - 1);
        emit log_named_decimal_uint("friend's queued deposit", queued, 18);
        assertEq(queued, 1000e18, "setup: the deposit is queued");
        sessions.draw(s, 64);
        emit log_named_uint("seats of S drawn", _sessionRecord(s).drawnSeats);
        assertTrue(_drawDone(s), "the deposit refused no seat: S drawn in full");
        assertEq(uint256(sessions.statusOf(s)), uint256(IAuditSessions.Status.Drawing), "not cancelled");
    }
}
