// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";

/// @title Review11LiveCountDecidesRefusal (fuzz of the outside-review-11 fix)
/// @notice Property (docs/appeals-canaries.md "Round size"): a failed appeal draw ends REFUSED (bond back, a
/// contested PASS voided) exactly when it met a lock refusal and the tier's members with weight in the
/// round's snapshot could have seated it: the failing segment's live auditors who sat on none of its earlier
/// panels are at least its seats, and a round naming more segments than the seat cap fits in half of what
/// the live members can seat. Otherwise UNFILLABLE (the PASS stands, R per drawn seat).
/// Inputs: `live` registered auditors, `dead` leaves (staked once, left before the session), `busy` auditors
/// whose free stake another panel holds (they refuse every lock), 1-4 named segments (seat cap 2, k_0 = 1,
/// so k_1 = 3), and optionally segment 0's round-0 auditor leaving before the appeal's snapshot (a departed
/// earlier-panel member must count neither as live nor as excluded).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review11LiveCount*' -vv`): fails on main
/// 2c2ae4f (every failed draw with a refusal was REFUSED, the dead leaves included).
contract Review11LiveCountDecidesRefusal is NoCanaryAppealsFixture {
    uint256 internal constant K1 = 3;
    uint256 internal constant CAP = 2;

    struct LogEntry {
        bytes32[] topics;
        bytes data;
        address emitter;
    }

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = uint8(CAP);
        p.seatsPerTier = [uint8(1), uint8(1), uint8(1)];
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams(); // no canaries
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS); // room to cross an epoch before appealing
    }

    /// forge-config: default.fuzz.runs = 200
    function testFuzz_RefusedOnlyWhenTheLiveTierCouldSeatIt(
        uint8 liveIn,
        uint8 deadIn,
        uint8 busyIn,
        uint8 segmentsIn,
        bool leaves
    ) public {
        uint256 live = bound(liveIn, 3, 12);
        uint256 dead = bound(deadIn, 0, 8);
        uint256 busy = bound(busyIn, 0, 4);
        uint256 m = bound(segmentsIn, 1, 4);
        _deployAppeals();
        _addAuditors(1, live, STAKE);
        for (uint256 i = 0; i < dead; ++i) {
            _deadLeaf(vm.addr(0x5B00 + i));
        }
        _nextEpoch();
        uint256 sid = _open(_uniform(m, 1), FEE);
        _commitCanaries(sid, new bytes32[](0));
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0);
        address gone = address(0);
        if (leaves) {
            gone = _seats0Of(sid, 0);
            vm.prank(gone);
            registry.deregister();
            _nextEpoch();
        }
        _toAppealWindow(sid);
        for (uint256 i = 0; i < busy && i < live; ++i) {
            _makeBusy(auditorAddrs[live - 1 - i]);
        }
        uint256[] memory named = new uint256[](m);
        for (uint256 i = 0; i < m; ++i) {
            named[i] = i;
        }
        try appeals.quote(sid, named) {}
        catch {
            return; // not admitted: nothing to check
        }
        uint256 round = _appeal(sid, named);
        vm.recordLogs();
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        (bool failed, uint256 segment, uint256 refusals) = _drawFailed();
        if (!failed) {
            assertTrue(!rd.refused, "a draw that did not fail is never REFUSED");
            return;
        }
        uint256 members = live - (leaves ? 1 : 0);
        uint256 earlier = (leaves && segment == 0) ? 0 : 1; // k_0 = 1 auditor per round-0 panel
        // several segments: every one seatable even with its round-0 auditor still live (k_0 = 1 seat)
        bool expected = refusals != 0 && members >= earlier + K1 && (m <= CAP || 2 * m * K1 <= members * CAP)
            && (m == 1 || members >= 1 + K1);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled, "a failed draw cancels the round");
        assertTrue(rd.refused == expected, "REFUSED iff a refusal met a tier that could seat the round");
        if (!expected) assertEq(_outcomeOf(sid, segment), 1, "an unfillable round leaves the PASS standing");
    }

    /// @dev Lock all but 7 TRUST of `a`'s free stake (a lock needs 8): it refuses every seat.
    function _makeBusy(address a) internal {
        uint256 free = staking.seatQuote(a).free;
        if (free < 8e18) return;
        vm.prank(address(drawModule));
        staking.lockSeat(a, 1, uint256(keccak256(abi.encode("busy", a))), free - 7e18, 0);
    }

    /// @dev The round-0 auditor of `segment` (k_0 = 1).
    function _seats0Of(uint256 sid, uint256 segment) internal view returns (address) {
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            uint256[] memory segs = drawModule.seatsOf(sid, 0, auditorAddrs[i]);
            for (uint256 j = 0; j < segs.length; ++j) {
                if (segs[j] == segment) return auditorAddrs[i];
            }
        }
        revert("no round-0 auditor");
    }

    function _drawFailed() internal returns (bool failed, uint256 segment, uint256 refusals) {
        (bool ok, bytes memory raw) = address(vm).call(abi.encodeWithSignature("getRecordedLogs()"));
        require(ok, "getRecordedLogs");
        LogEntry[] memory logs = abi.decode(raw, (LogEntry[]));
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] == IDrawModule.DrawFailed.selector) {
                (, segment,,,, refusals) =
                    abi.decode(logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256));
                return (true, segment, refusals);
            }
        }
    }
}
