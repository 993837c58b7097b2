// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./attacks/AppealAttackKit.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";

/// @dev The three uint256 arguments of a custom error's revert data (selector stripped).
function errorArgs(bytes memory err) pure returns (uint256 a, uint256 b, uint256 c) {
    assembly ("memory-safe") {
        a := mload(add(err, 36))
        b := mload(add(err, 68))
        c := mload(add(err, 100))
    }
}

/// @title AppealRequireChargedFuzz (outside review 17)
/// @notice Property: `appeal(sessionId, segments, maxBond, true)` never admits a round whose lock refusals
/// are not charged; when it refuses `RefusalsNotCharged(sid, eligible, needed)` the figures are those of
/// the snapshot the appeal is mined in (eligible < needed = 2 k, the quote in that block says uncharged)
/// and the same appeal without the requirement is admitted, uncharged (the flag refuses nothing else).
/// Fuzzed: tier members 10..20 (k_0 = 3: eligible 7..17 around 2 k_1 = 14), 0..3 eligible accounts leaving
/// in the block before the appeal, that block the last of its epoch or not.
/// Run: `scripts/forge test --match-contract AppealRequireChargedFuzz -vv`.
contract AppealRequireChargedFuzz is NoCanaryAppealsFixture {
    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function testFuzz_requireChargedNeverAdmitsAnUnchargedRound(uint256 members, uint256 leave, bool cross)
        public
    {
        members = bound(members, 10, 20);
        leave = bound(leave, 0, 3);
        uint256 sid = _setUpPassedSession(members, 1, FEE);
        if (cross) vm.roll((block.number / EPOCH_BLOCKS + 1) * EPOCH_BLOCKS - 1); // last block of an epoch
        for (uint256 i = 0; i < auditorAddrs.length && leave != 0; ++i) {
            if (_seatedOn(sid, auditorAddrs[i], 0)) continue;
            vm.prank(auditorAddrs[i]);
            registry.deregister();
            --leave;
        }
        vm.roll(block.number + 1);
        vm.prank(appellant);
        try appeals.appeal(sid, _segs(0), type(uint256).max, true) returns (uint256 round) {
            assertTrue(
                appeals.roundOf(sid, round).refusalsCharged, "requireCharged admitted an uncharged round"
            );
        } catch (bytes memory err) {
            bytes4 sel = bytes4(err);
            if (sel == IAppealModule.NotEnoughEligibleAuditors.selector) return;
            assertEq(sel, IAppealModule.RefusalsNotCharged.selector, "only RefusalsNotCharged is the flag's");
            (uint256 s, uint256 eligible, uint256 needed) = errorArgs(err);
            IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
            assertEq(s, sid, "session");
            assertEq(needed, 2 * q.seats[0], "needed = 2 k");
            assertTrue(eligible < needed, "eligible < 2 k");
            assertTrue(!q.refusalsCharged, "the quote of the same block says uncharged");
            vm.prank(appellant);
            uint256 round = appeals.appeal(sid, _segs(0), type(uint256).max, false);
            assertTrue(!appeals.roundOf(sid, round).refusalsCharged, "without the flag: admitted, uncharged");
        }
    }
}

/// @title AppealCapacityFuzz (outside reviews 17, 20)
/// @notice Property: a round naming more segments than the seat cap is admitted only if its last segment
/// still finds k seatable auditors when half of the eligible (E = members - earlierSeats) refuse and the
/// earlier segments' seats are held by as few auditors as the cap allows:
/// E - E / 2 - (S - 1) k / seatCap >= k, i.e. seats <= k + seatCap (E - E / 2 - k) (0 if E - E / 2 < k), and
/// `PanelTooLarge(sid, seats, capacity)` refuses it exactly otherwise, capacity = that bound (outside
/// review 20; was E * seatCap / 2, which ignored the auditors at the cap). Fuzzed: 0..24
/// extra tier members and 2..4 segments of depth 1 (k_0 = 3, k_1 = 7, earlier seats 3), under seat cap 1
/// (`AppealCapacityFuzz`) and 2 (`AppealCapacityCap2Fuzz`). Members are counted independently of the
/// contract (16 registered auditors + the extra ones; the provider is none of them).
/// Run: `scripts/forge test --match-contract 'AppealCapacity.*Fuzz' -vv`.
contract AppealCapacityFuzz is NoCanaryAppealsFixture {
    uint256 internal constant HONEST = 16;

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _sessionParams() internal pure virtual override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 1;
    }

    function testFuzz_capacityNeverAdmitsWhatAMinorityCanFail(uint256 extra, uint256 segments) public {
        uint256 cap = _sessionParams().seatCap;
        extra = bound(extra, 0, 24);
        segments = bound(segments, cap + 1, 4);
        uint256 sid = _setUpPassedSession(HONEST, segments, FEE);
        for (uint256 i = 0; i < extra; ++i) {
            address a = vm.addr(0xCAFE00 + i);
            _joinTier(a, 1, 100e18);
        }
        _nextEpoch();
        uint256[] memory named = new uint256[](segments);
        for (uint256 i = 0; i < segments; ++i) {
            named[i] = i;
        }
        uint256 eligible = HONEST + extra - 3; // earlierSeats(3, 1) = k_0
        uint256 free = eligible - eligible / 2; // seatable after at most half refuse
        uint256 bound_ = free < 7 ? 0 : 7 + cap * (free - 7 + 1) - 1; // exact since outside review 22
        try appeals.quote(sid, named) returns (IAppealModule.Quote memory q) {
            assertEq(q.totalSeats, 7 * segments, "k_1 per segment");
            assertLe(q.totalSeats, bound_, "admitted beyond the bound");
            assertGe(free, (segments - 1) * 7 / cap + 7, "a minority can starve the last segment");
        } catch (bytes memory err) {
            assertEq(bytes4(err), IAppealModule.PanelTooLarge.selector, "only PanelTooLarge");
            (uint256 s, uint256 seats, uint256 capacity) = errorArgs(err);
            assertEq(s, sid, "session");
            assertEq(seats, 7 * segments, "seats");
            assertEq(capacity, bound_, "capacity = k + seatCap (E - E / 2 - k + 1) - 1");
            assertTrue(seats > capacity, "refused only beyond it");
            assertTrue(
                free < (segments - 1) * 7 / cap + 7, "refused only when a minority can starve the last one"
            );
        }
    }
}

/// @notice `AppealCapacityFuzz` under seat cap 2 (3 or 4 segments).
contract AppealCapacityCap2Fuzz is AppealCapacityFuzz {
    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 2;
    }
}
