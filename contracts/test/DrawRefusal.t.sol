// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "./utils/StakingFixture.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";

/// @notice A sampled auditor can make its own stake lock fail (get its stake locked by drawing another
/// session first; a withdrawal request or deregistration no longer can, docs/protocol-v2.md 5.1), and
/// a slash from another session can empty it. That choice is made after the seed is
/// public, so it must not move any seat it does not touch: otherwise every refusal is a free re-roll
/// of the rest of the draw, and an auditor (or a provider's sybil) grinds the draw it wants.
contract DrawRefusalTest is StakingFixture {
    uint256 internal constant FEE = 2000e18;
    uint256 internal constant SEGMENTS = 8;

    function setUp() public {
        _deploy();
        _addAuditors(1, 12, STAKE);
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.seatCap = 64; // the cap never binds here: only the refusal differs between the two draws
        vm.prank(owner);
        sessions.setParams(p);
        _nextEpoch();
    }

    /// @dev Property (DrawIsRefusalProof): an auditor that refuses its lock after seeing the seed
    /// changes no seat of any segment it would not have sat on. Drawn twice from the same seed: once
    /// honestly, once with the first auditor of segment 0 withdrawing all its stake before the draw.
    function test_LockRefusalRerollsNoOtherSegment() public {
        uint256 sid = _open(_uniform(SEGMENTS, 1), FEE);
        uint256 snap = vm.snapshotState();
        _drawAll(sid);
        address[][] memory honest = new address[][](SEGMENTS);
        for (uint256 g = 0; g < SEGMENTS; ++g) {
            honest[g] = _seatedOn(sid, g);
        }
        address refuser = honest[0][0];
        vm.revertToState(snap);

        // Another session's slash takes its stake (its own withdrawal no longer can: snapshot stake
        // stays lockable, docs/protocol-v2.md 5.1).
        _slashNow(refuser, _pushEntry(refuser), STAKE);
        _drawAll(sid);

        assertEq(sessions.sessionOf(sid).drawnSeats, SEGMENTS * 3, "the draw completes");
        assertEq(_seats(sid, refuser).length, 0, "the refuser is never seated");
        uint256 untouched = 0;
        for (uint256 g = 0; g < SEGMENTS; ++g) {
            if (_contains(honest[g], refuser)) continue;
            ++untouched;
            address[] memory seated = _seatedOn(sid, g);
            assertEq(seated.length, honest[g].length, "same seat count");
            for (uint256 j = 0; j < seated.length; ++j) {
                assertEq(seated[j], honest[g][j], "a refusal moved a seat of another segment");
            }
        }
        assertTrue(untouched > 0, "some segment without the refuser");
    }

    function _contains(address[] memory list, address a) internal pure returns (bool) {
        for (uint256 i = 0; i < list.length; ++i) {
            if (list[i] == a) return true;
        }
        return false;
    }

    /// @dev The auditors seated on `segment`, in auditor order.
    function _seatedOn(uint256 sid, uint256 segment) internal view returns (address[] memory out) {
        address[] memory tmp = new address[](auditorAddrs.length);
        uint256 n = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            uint256[] memory segs = _seats(sid, auditorAddrs[i]);
            for (uint256 j = 0; j < segs.length; ++j) {
                if (segs[j] == segment) tmp[n++] = auditorAddrs[i];
            }
        }
        out = new address[](n);
        for (uint256 i = 0; i < n; ++i) {
            out[i] = tmp[i];
        }
    }
}
