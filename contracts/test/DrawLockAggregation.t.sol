// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "./utils/StakingFixture.sol";
import {LegacyDrawModule} from "./mocks/LegacyDrawModule.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";
import {Staking} from "../src/Staking.sol";
import {Vm} from "./utils/TestBase.sol";

/// @notice The draw module decides every stake lock of a call in memory from one `seatQuote` per auditor
/// and locks each auditor's seats with one `lockSeats` at the end of the call. Property
/// (LockAggregationIsExact): for any stakes, seat cap, pagination and stake changes between calls, it
/// draws exactly the seats, exclusions and locks of the per-seat reference (one `lockSeat` per seat,
/// LegacyDrawModule) - the same seat words, the same locked stake, the same ledger entries, the same
/// session state after every call - including auditors whose stake runs out in the middle of a call
/// (refused for that segment only) and draws that fail for lack of eligible weight.
contract DrawLockAggregationTest is StakingFixture {
    uint256 internal constant FEE = 4000e18;
    uint256 internal constant MAX_AUDITORS = 10;

    struct Case {
        uint256 auditors;
        uint256 segments;
        uint256 seatCap;
        uint256 budget;
        uint256 stakeSeed;
        uint256 changeAt;
        uint256 changer;
        uint256 change;
    }

    function setUp() public {
        _deploy();
    }

    function testFuzz_aggregatedLocksMatchPerSeatLocks(
        uint8 auditors,
        uint8 segments,
        uint8 seatCap,
        uint8 budget,
        uint256 stakeSeed,
        uint8 changeAt,
        uint8 changer,
        uint8 change
    ) public {
        _check(
            Case({
                auditors: bound(auditors, 4, MAX_AUDITORS),
                segments: bound(segments, 2, 40),
                seatCap: bound(seatCap, 2, 64),
                budget: bound(budget, 1, 48),
                stakeSeed: stakeSeed,
                changeAt: bound(changeAt, 0, 6),
                changer: changer,
                change: bound(change, 0, 3)
            })
        );
    }

    /// @dev Stake runs out inside one call: 4 auditors back at most 12 + 12 + 24 + 24 = 72 seats at most
    /// and 40 segments need 120, so locks are refused mid-call until the eligible weight is gone and the
    /// draw fails - identically on both paths.
    function test_refusalsInsideOneCallMatchPerSeatLocks() public {
        Case memory c = Case({
            auditors: 4,
            segments: 40,
            seatCap: 64,
            budget: 48,
            stakeSeed: 2, // 5 refusals (seed 1 gave 3 once lookahead values carry their target)
            changeAt: 99,
            changer: 0,
            change: 0
        });
        (uint256 refusals, IAuditSessions.Status status) = _check(c);
        assertGe(refusals, 4, "locks refused during the draw");
        assertTrue(status == IAuditSessions.Status.Cancelled, "the draw fails once no stake is left");
    }

    /// @dev A withdrawal request between two pages (after the seed is public) makes later locks fail.
    function test_withdrawalBetweenPagesMatchesPerSeatLocks() public {
        Case memory c = Case({
            auditors: 6,
            segments: 24,
            seatCap: 64,
            budget: 6,
            stakeSeed: 7,
            changeAt: 2,
            changer: 1,
            change: 1
        });
        _check(c);
    }

    /// @dev Runs the case with the aggregated module, then from the same state with the per-seat
    /// reference etched in its place; returns the lock refusals of the first run and its final status.
    function _check(Case memory c) internal returns (uint256 refusals, IAuditSessions.Status status) {
        _setUpCase(c);
        uint256 sid = _open(_uniform(c.segments, 1), FEE);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        uint256 snap = vm.snapshotState();
        vm.recordLogs();
        bytes32[] memory fast = _run(sid, c);
        refusals = _lockRefusals();
        status = sessions.statusOf(sid);
        vm.revertToState(snap);
        LegacyDrawModule legacy = new LegacyDrawModule(address(sessions), IStaking(address(staking)));
        vm.etch(address(drawModule), address(legacy).code);
        bytes32[] memory perSeat = _run(sid, c);
        assertEq(fast.length, perSeat.length, "same number of draw calls");
        for (uint256 i = 0; i < fast.length; ++i) {
            assertEq(fast[i], perSeat[i], "same state after every draw call");
        }
    }

    function _lockRefusals() internal returns (uint256 n) {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bytes32 topic = keccak256("AuditorExcluded(uint256,uint256,address,uint256)");
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] != topic) continue;
            (, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
            if (reason == 3) ++n; // REASON_LOCK_REFUSED
        }
    }

    /// @dev Auditors with stakes in [100, 200) TRUST (min stake 100, 8 TRUST locked per seat: 12 to 24
    /// seats): many back fewer seats than the cap, so locks are refused during the draw.
    function _setUpCase(Case memory c) internal {
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.seatCap = uint8(c.seatCap);
        vm.prank(owner);
        sessions.setParams(p);
        for (uint256 i = 0; i < c.auditors; ++i) {
            uint256 amount = 100e18 + uint256(keccak256(abi.encode(c.stakeSeed, i))) % 100e18;
            _addAuditors(1, 1, amount);
        }
        _nextEpoch();
    }

    /// @dev Draw page by page; before call `changeAt` one auditor changes its stake (a withdrawal request
    /// of half its shares, a deregistration, a top-up, or nothing). Returns a digest of the whole state
    /// after each call.
    function _run(uint256 sid, Case memory c) internal returns (bytes32[] memory digests) {
        digests = new bytes32[](64);
        uint256 n = 0;
        while (n < 64 && (sessions.statusOf(sid) == IAuditSessions.Status.Created || _drawing(sid))) {
            if (n == c.changeAt) _changeStake(auditorAddrs[c.changer % c.auditors], c.change);
            uint256 drawn = sessions.draw(sid, c.budget);
            digests[n++] = keccak256(abi.encode(drawn, _digest(sid)));
        }
        assembly ("memory-safe") {
            mstore(digests, n)
        }
    }

    function _changeStake(address a, uint256 change) internal {
        vm.startPrank(a);
        if (change == 1) {
            uint256 shares = staking.sharesOf(a, a);
            if (shares > 1) staking.requestWithdrawal(a, shares / 2);
        } else if (change == 2) {
            registry.deregister();
        } else if (change == 3) {
            staking.stake(a, 1e18);
        }
        vm.stopPrank();
    }

    function _digest(uint256 sid) internal view returns (bytes32 h) {
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        h = keccak256(abi.encode(s.status, s.drawnSeats, s.auditorCount, s.drawCursor));
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            Staking.PoolView memory pool = staking.poolOf(a);
            (uint256 head, uint256 tail) = staking.ledgerOf(a);
            (uint256 word, uint256 result) = staking.entryWordOf(a, tail - 1);
            h = keccak256(
                abi.encode(
                    h,
                    drawModule.seatWordOf(_key(sid), a),
                    pool.locked,
                    pool.backing,
                    head,
                    tail,
                    word,
                    result
                )
            );
        }
    }
}
