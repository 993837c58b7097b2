// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "./utils/AppealsFixture.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";

interface StorageCheats {
    function load(address target, bytes32 slot) external view returns (bytes32);
    function store(address target, bytes32 slot, bytes32 value) external;
}

/// @notice The maximum-rounds limit: each appeal of a segment gets a panel of k_d = 2^d (k_0 + 1) - 1 seats
/// (7, 15, 31 for k_0 = 3) for a bond of k_d R (multiplier 1x); once a segment had `maxRounds` panels it has
/// no window again and an appeal of it is refused - `TooManyRounds` when the session has used all its rounds
/// (min(maxRounds * segments, 255)), `NoRoundsLeft` when only that segment has.
contract TooManyRoundsTest is AppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    uint256 internal constant MAX_ROUNDS = 3;
    StorageCheats internal constant CHEATS =
        StorageCheats(address(uint160(uint256(keccak256("hevm cheat code")))));

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.maxRounds = uint8(MAX_ROUNDS);
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 60, STAKE); // 3 + 7 + 15 + 31 = 56 seats over four panels of one segment
        _nextEpoch();
    }

    /// @dev Appeal segment 0 `MAX_ROUNDS` times, checking each panel's size and bond; every panel
    /// overturns the outcome before it.
    function _appealToTheLastRound(uint256 sid) internal {
        _voteRound0(sid, 0, 0, 0); // PASS
        _toAppealWindow(sid);
        for (uint256 d = 1; d <= MAX_ROUNDS; ++d) {
            uint256 k = (4 << d) - 1;
            IAppealModule.Quote memory q = appeals.quote(sid, _segs(0));
            assertEq(q.depth, d, "depth");
            assertEq(q.totalSeats, k, "k_d = 2 k_(d-1) + 1");
            assertEq(q.bond, k * R, "bond k_d R");
            uint256 round = _appeal(sid, _segs(0));
            assertEq(round, d, "next round");
            _drawRound(sid, round);
            IAppealModule.Round memory rd = appeals.roundOf(sid, round);
            assertEq(rd.totalSeats, k, "panel seats");
            assertEq(rd.drawnSeats, k, "panel filled");
            assertEq(rd.auditorCount, k, "k_d distinct auditors");
            _publishRound(sid, round);
            _voteRound(sid, round, d % 2 == 1 ? 1 : 0, 0, 0); // FAIL, PASS, FAIL, ...
            IAppealModule.SegmentAppeals memory a = appeals.segmentAppeals(sid, 0);
            assertEq(a.depth, d, "segment depth");
            if (d < MAX_ROUNDS) assertTrue(a.windowEnd >= block.number, "a new window while rounds remain");
            else assertEq(a.windowEnd, 0, "no window after the last round");
        }
    }

    function test_panelGrowsPerRound_thenTooManyRounds() public {
        uint256 sid = _openReady(1, 1, new bytes32[](0));
        _appealToTheLastRound(sid);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.TooManyRounds.selector, sid));
        appeals.quote(sid, _segs(0));
        uint256 before = token.balanceOf(appellant);
        vm.prank(appellant);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.TooManyRounds.selector, sid));
        appeals.appeal(sid, _segs(0), type(uint256).max);
        assertEq(token.balanceOf(appellant), before, "a refused appeal takes nothing");
        _closeAndSettle(sid);
        assertEq(appeals.outcomeOf(sid, 0), 2, "the last panel's FAIL is final");
    }

    /// @dev With a second segment the session still has rounds: the segment itself is out of them.
    function test_segmentPastItsLastRound_refusedNoRoundsLeft() public {
        uint256 sid = _openReady(2, 1, new bytes32[](0));
        _appealToTheLastRound(sid);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NoRoundsLeft.selector, sid, 0));
        appeals.quote(sid, _segs(0));
        vm.prank(appellant);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.NoRoundsLeft.selector, sid, 0));
        appeals.appeal(sid, _segs(0), type(uint256).max);
    }

    /// @dev The session-wide cap is 255 rounds (uint8 round numbers, `PanelKey.MAX_ROUND`): with 100 segments
    /// and 3 rounds each it binds first. Round 255 is the last admitted; the roundCount is set in storage
    /// (running 254 real rounds would prove nothing more).
    function test_sessionCap255Rounds() public {
        _addAuditors(0, 16, STAKE);
        _nextEpoch();
        uint256 sid = _openReady(100, 0, _hundredCanaries(sessions.sessionCount() + 1));
        _voteRound0(sid, 0, 0, 0);
        _toAppealWindow(sid);
        _setRoundCount(sid, 254);
        assertEq(appeals.quote(sid, _segs(5)).round, 255, "round 255 is the last");
        _setRoundCount(sid, 255);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.TooManyRounds.selector, sid));
        appeals.quote(sid, _segs(5));
    }

    function _hundredCanaries(uint256 sid) internal pure returns (bytes32[] memory c) {
        c = new bytes32[](10);
        for (uint256 i = 0; i < c.length; ++i) {
            c[i] = keccak256(abi.encode("unrevealed", sid, i));
        }
    }

    /// @dev `_sessions` is the AppealModule's slot 0; `roundCount` sits above four uint40 fields.
    function _setRoundCount(uint256 sid, uint256 count) internal {
        bytes32 slot = keccak256(abi.encode(sid, uint256(0)));
        uint256 word = uint256(CHEATS.load(address(appeals), slot));
        word = (word & ~(uint256(0xff) << 160)) | (count << 160);
        CHEATS.store(address(appeals), slot, bytes32(word));
        assertEq(appeals.sessionAppeals(sid).roundCount, count, "slot layout");
    }
}
