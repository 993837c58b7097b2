// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "./AppealsFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";

/// @notice The AppealHandler's refusal actions (outside review 3: REFUSED appeal panels): auditors of a
/// tier refuse their next stake locks at any moment, then an appeal round is drawn.
abstract contract AppealRefusals is AppealsFixture {
    /// @dev Refusals made (by kind: deregistered, withdrew everything, locked elsewhere) and appeal
    /// rounds whose draw ended REFUSED (coverage).
    uint256[3] public ghostRefusals;
    uint256 public ghostRefusedRounds;

    /// @dev A withdrawal request the handler's `claim` may complete later.
    function _recordWithdrawal(uint256 id) internal virtual;

    /// @dev One of the handler's sessions (0 if none).
    function _pickSession(uint256 seed) internal view virtual returns (uint256);

    /// @dev Auditors of one tier (possibly sampled by a running panel's draw, at any moment) make their
    /// next locks fail, 1 to 10 of them from `who` on, each its own way: it deregisters, asks to withdraw its
    /// whole stake, or (half the time) has its stake locked elsewhere (Staking's quote reads no free stake,
    /// as after locks in other sessions: the refusal left once snapshot stake cannot leave; `restore` ends
    /// it). Then, most times, an appeal round is drawn on the spot.
    function refuse(uint256 who, uint256 how, uint256 drawSeed) external {
        uint256 half = auditorAddrs.length / 2; // [0, half): tier 1; [half, 2 half): tier 0
        uint256 base = (who >> 8) % 2 == 0 ? 0 : half;
        uint256 count = 1 + (how >> 128) % 10;
        for (uint256 i = 0; i < count; ++i) {
            _refuseOne(auditorAddrs[base + (who % half + i) % half], how >> (2 * i));
        }
        if (drawSeed % 4 != 0) _drawAny(drawSeed >> 2);
    }

    function _refuseOne(address a, uint256 how) internal {
        uint256 kind = how % 4;
        if (kind == 0) {
            vm.prank(a);
            try registry.deregister() {
                ++ghostRefusals[0];
            } catch {}
        } else if (kind == 1) {
            uint256 shares = staking.sharesOf(a, a);
            if (shares == 0) return;
            vm.prank(a);
            try staking.requestWithdrawal(a, shares) returns (uint256 id) {
                _recordWithdrawal(id);
                ++ghostRefusals[1];
            } catch {}
        } else {
            IStaking.SeatQuote memory q = staking.seatQuote(a);
            q.free = 0;
            VmMockQuote(address(vm))
                .mockCall(address(staking), abi.encodeCall(IStaking.seatQuote, (a)), abi.encode(q));
            ++ghostRefusals[2];
        }
    }

    /// @dev The stake locked elsewhere is released (every mocked quote cleared).
    function restore() external {
        VmMockQuote(address(vm)).clearMockedCalls();
    }

    /// @dev Draw the next seats of some appeal round that is still drawing.
    function _drawAny(uint256 seed) internal {
        uint256 sid = _pickSession(seed);
        if (sid == 0) return;
        uint256 count = appeals.sessionAppeals(sid).roundCount;
        if (count == 0) return;
        uint256 round = 1 + (seed >> 8) % count;
        IAuditSessions.Status st = appeals.roundOf(sid, round).status;
        if (st != IAuditSessions.Status.Created && st != IAuditSessions.Status.Drawing) return;
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        try appeals.drawPanel(sid, round, 1 + (seed >> 16) % 16) {} catch {}
        if (appeals.roundOf(sid, round).refused) _countRefused(sid, round);
    }

    mapping(uint256 key => bool) internal _refusedSeen;

    function _countRefused(uint256 sid, uint256 round) internal {
        uint256 key = PanelKey.keyOf(sid, round);
        if (_refusedSeen[key]) return;
        _refusedSeen[key] = true;
        ++ghostRefusedRounds;
    }
}

/// @dev The cheatcode TestBase's `Vm` does not declare.
interface VmMockQuote {
    function mockCall(address callee, bytes calldata data, bytes calldata returnData) external;
    function clearMockedCalls() external;
}
