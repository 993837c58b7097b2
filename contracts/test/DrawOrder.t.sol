// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "./utils/TestBase.sol";
import {TestBase} from "./utils/TestBase.sol";
import {StakingFixture} from "./utils/StakingFixture.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../src/interfaces/IDrawModule.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";

/// @notice A thin tier (4 auditors of 100 TRUST: 12 seats of P = 8 each, at most 8 per session) and
/// sessions of 1 to 8 tier-1 segments (fee 200 TRUST). Shared by the unit tests, the fuzz test and the invariant handler.
abstract contract DrawOrderFixture is StakingFixture {
    uint256 internal constant FEE = 200e18;
    uint256 internal constant THIN = 100e18;
    uint256 internal nonce;

    function _setUpThinTier() internal {
        _deploy();
        _addAuditors(1, 4, THIN);
        _nextEpoch();
    }

    function _openN(uint256 n) internal returns (uint256 sid) {
        bytes memory tw = _uniform(n, 1);
        vm.startPrank(provider);
        token.approve(address(sessions), FEE);
        sid = sessions.openSession(keccak256(abi.encode("order", ++nonce)), tw, FEE);
        vm.stopPrank();
    }

    /// @dev An auditor's whole free stake locked by a session it chose to draw first (an entry this
    /// test never settles): the refusal the provider's side can still cause after the seed is public.
    function _lockElsewhere(address auditor) internal {
        IStaking.SeatQuote memory q = staking.seatQuote(auditor);
        if (q.free == 0) return;
        vm.prank(address(drawModule));
        staking.lockSeat(auditor, q.tier, 0xB0B0 + q.nextEntry, q.free, 0);
    }

    function _status(uint256 sid) internal view returns (IAuditSessions.Status) {
        return sessions.statusOf(sid);
    }

    function _termination(uint256 sid) internal view returns (IAuditSessions.Termination) {
        return sessions.sessionOf(sid).termination;
    }

    function _open(uint256 sid) internal view returns (bool) {
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        return s.status == IAuditSessions.Status.Created
            || (s.status == IAuditSessions.Status.Drawing && s.drawnSeats < s.totalSeats);
    }

    /// @dev Lock refusals (AuditorExcluded reason 3) of `sid` in recorded logs, and whether the draw module
    /// acted on `sid` at all (it seats, excludes or fails whenever it runs with seats left to draw).
    function _scan(Vm.Log[] memory logs, uint256 sid) internal view returns (uint256 refusals, bool ran) {
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].emitter != address(drawModule) || logs[i].topics.length < 2) continue;
            if (uint256(logs[i].topics[1]) != sid) continue;
            bytes32 t0 = logs[i].topics[0];
            if (t0 == IDrawModule.AuditorExcluded.selector) {
                (uint256 round, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
                if (round == 0 && reason == 3) ++refusals;
                ran = true;
            } else if (t0 == IDrawModule.SeatsDrawn.selector || t0 == IDrawModule.DrawFailed.selector) {
                ran = true;
            }
        }
    }
}

/// @title DrawOrder (outside review 5, lock exhaustion: `DrawModule._orderCheck`)
/// @notice Property: only the provider's side can turn its failed draw into DrawRefused (fee forfeited).
/// A session drawn after a later-opened one may find its snapshot's free stake locked by it, and whoever
/// calls the draws chooses that order; so once a later-opened session's draw overtook a panel, only the
/// refusals met before that count.
contract DrawOrderTest is DrawOrderFixture {
    function setUp() public {
        _setUpThinTier();
    }

    /// @notice Refusals met before the overtaking still forfeit: the provider cannot launder its own
    /// side's refusal by drawing a later session of its own in the middle of the draw.
    function test_RefusalBeforeTheOvertakingStillForfeits() public {
        _lockElsewhere(auditorAddrs[0]); // the provider's friend cannot take a seat
        uint256 victim = _openN(4); // 12 seats of the 36 the other three can take
        uint256[3] memory later = [_openN(4), _openN(4), _openN(4)];
        _rollPastDrawTarget(later[2]);
        vm.recordLogs();
        for (uint256 i = 0; i < 4 && _open(victim); ++i) {
            sessions.draw(victim, 3); // whole segments until the friend is met
            (uint256 refused,) = _scan(vm.getRecordedLogs(), victim);
            if (refused != 0) break;
        }
        assertTrue(_open(victim), "setup: the refusal came before the draw completed");
        for (uint256 i = 0; i < 3; ++i) {
            _drawAll(later[i]); // the other three's free stake is gone
        }
        _drawAll(victim);
        assertEq(uint256(_status(victim)), uint256(IAuditSessions.Status.Cancelled), "the draw failed");
        assertEq(
            uint256(_termination(victim)),
            uint256(IAuditSessions.Termination.DrawRefused),
            "a refusal before the overtaking is the provider's side's: forfeited"
        );
    }

    /// @notice Control: the same draw without the friend's refusal is refunded (DrawFailed).
    function test_OvertakenWithoutEarlierRefusalIsRefunded() public {
        uint256 victim = _openN(4);
        uint256[3] memory later = [_openN(4), _openN(4), _openN(4)];
        _lockElsewhere(auditorAddrs[0]);
        _rollPastDrawTarget(later[2]);
        for (uint256 i = 0; i < 3; ++i) {
            _drawAll(later[i]);
        }
        uint256 before = token.balanceOf(provider);
        _drawAll(victim);
        assertEq(uint256(_status(victim)), uint256(IAuditSessions.Status.Cancelled), "the draw failed");
        assertEq(uint256(_termination(victim)), uint256(IAuditSessions.Termination.DrawFailed), "refunded");
        assertEq(token.balanceOf(provider) - before, FEE * 8 / 10, "the whole pool back (no seat drawn)");
    }

    /// @notice Fuzz: three sessions of 1-8 segments opened in order and drawn in any order (the three
    /// honest auditors' stake alone, one auditor's stake locked elsewhere or not): a session that a
    /// later-opened one overtook before its first refusal never ends DrawRefused; drawn in opening order,
    /// the first session never fails at all.
    function testFuzz_AnOvertakenPanelIsNeverChargedForOthersLocks(
        uint8 n0,
        uint8 n1,
        uint8 n2,
        uint8 order,
        bool friendLocked
    ) public {
        if (friendLocked) _lockElsewhere(auditorAddrs[0]);
        uint256[3] memory sid = [_openN(1 + n0 % 8), _openN(1 + n1 % 8), _openN(1 + n2 % 8)];
        _rollPastDrawTarget(sid[2]);
        uint256[3][6] memory perms = [
            [uint256(0), 1, 2],
            [uint256(0), 2, 1],
            [uint256(1), 0, 2],
            [uint256(1), 2, 0],
            [uint256(2), 0, 1],
            [uint256(2), 1, 0]
        ];
        uint256[3] memory p = perms[order % 6];
        uint256 latest = 0;
        for (uint256 i = 0; i < 3; ++i) {
            uint256 s = sid[p[i]];
            bool overtaken = latest > s;
            vm.recordLogs();
            _drawAll(s);
            (, bool ran) = _scan(vm.getRecordedLogs(), s);
            if (ran && s > latest) latest = s;
            if (overtaken && _status(s) == IAuditSessions.Status.Cancelled) {
                assertEq(
                    uint256(_termination(s)),
                    uint256(IAuditSessions.Termination.DrawFailed),
                    "an overtaken panel is refunded"
                );
            }
        }
        if (p[0] == 0) {
            assertTrue(_status(sid[0]) != IAuditSessions.Status.Cancelled, "first come, first drawn");
        }
    }
}

/// @notice Adversarial handler: sessions opened at any time, drawn page by page in any order by anyone,
/// auditors' free stake locked elsewhere at any moment (the provider's side refusing), time passing.
/// Ghosts come from the handler's own observations (draw calls made and refusals seen in the logs).
contract DrawOrderHandler is DrawOrderFixture {
    uint256 internal constant MAX_SESSIONS = 16;

    uint256[] public sessionIds;
    uint256 public maxDrawn;
    mapping(uint256 => bool) public overtaken;
    mapping(uint256 => bool) public refusedUnovertaken;
    uint256 public total;
    uint256 public refusedEnds;
    uint256 public overtakenRefunds;

    constructor() {
        _setUpThinTier();
        total = _held();
    }

    function _held() internal view returns (uint256) {
        return
            token.balanceOf(provider) + token.balanceOf(address(treasury))
                + token.balanceOf(address(sessions));
    }

    function held() external view returns (uint256) {
        return _held();
    }

    function sessionCount() external view returns (uint256) {
        return sessionIds.length;
    }

    function core() external view returns (IAuditSessions) {
        return IAuditSessions(address(sessions));
    }

    function open(uint8 n) external {
        if (sessionIds.length >= MAX_SESSIONS) return;
        sessionIds.push(_openN(1 + n % 8));
    }

    function draw(uint256 which, uint8 seats) external {
        if (sessionIds.length == 0) return;
        uint256 sid = sessionIds[which % sessionIds.length];
        if (!_open(sid)) return;
        if (maxDrawn > sid) overtaken[sid] = true;
        vm.recordLogs();
        try sessions.draw(sid, 1 + seats % 6) {} catch {}
        (uint256 refusals, bool ran) = _scan(vm.getRecordedLogs(), sid);
        if (refusals != 0 && !overtaken[sid]) refusedUnovertaken[sid] = true;
        if (ran && sid > maxDrawn) maxDrawn = sid;
        if (_status(sid) == IAuditSessions.Status.Cancelled) {
            IAuditSessions.Termination why = _termination(sid);
            if (why == IAuditSessions.Termination.DrawRefused) ++refusedEnds;
            if (why == IAuditSessions.Termination.DrawFailed && overtaken[sid]) ++overtakenRefunds;
        }
    }

    function lockElsewhere(uint256 which) external {
        _lockElsewhere(auditorAddrs[which % auditorAddrs.length]);
    }

    function passTime(uint8 blocks) external {
        vm.roll(block.number + 1 + blocks % 8);
    }
}

/// @title DrawOrderInvariants
/// @notice Over 10,000 handler calls per invariant: a session ends DrawRefused only when a lock was refused
/// on its panel before any later-opened session's draw overtook it, and tokens are conserved.
contract DrawOrderInvariantsTest is TestBase {
    DrawOrderHandler internal handler;

    function setUp() public {
        handler = new DrawOrderHandler();
    }

    function targetContracts() public view returns (address[] memory targets) {
        targets = new address[](1);
        targets[0] = address(handler);
    }

    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_refusedOnlyForTheProvidersSideRefusals() public view {
        IAuditSessions core = handler.core();
        for (uint256 i = 0; i < handler.sessionCount(); ++i) {
            uint256 sid = handler.sessionIds(i);
            IAuditSessions.Session memory s = core.sessionOf(sid);
            if (s.status != IAuditSessions.Status.Cancelled) continue;
            if (s.termination == IAuditSessions.Termination.DrawRefused) {
                assertTrue(handler.refusedUnovertaken(sid), "forfeited for refusals after an overtaking");
            }
        }
    }

    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_tokensConserved() public view {
        assertEq(handler.held(), handler.total(), "provider + treasury + core");
    }

    /// @dev The handler reaches both endings (so the invariant above is not vacuous).
    function test_handlerReachesBothEndings() public {
        for (uint256 i = 0; i < 3; ++i) {
            handler.open(3); // 4 segments, 12 seats each
        }
        handler.passTime(7);
        handler.passTime(7);
        for (uint256 i = 0; i < 2; ++i) {
            handler.draw(1, 5); // sessions 2 and 3 first (6 seats a call)
            handler.draw(2, 5);
        }
        handler.lockElsewhere(0);
        handler.lockElsewhere(1); // 8 free seats left in the tier
        for (uint256 i = 0; i < 6; ++i) {
            handler.draw(0, 5); // overtaken: its refusals come after, refunded
        }
        for (uint256 i = 0; i < 4; ++i) {
            handler.lockElsewhere(i);
        }
        handler.open(0);
        handler.passTime(7);
        handler.passTime(7);
        handler.draw(3, 5); // the newest session, refused by stake locked before: forfeited
        assertEq(handler.overtakenRefunds(), 1, "the overtaken session 1 is refunded");
        assertEq(handler.refusedEnds(), 1, "the unovertaken session 4 forfeits");
    }
}
