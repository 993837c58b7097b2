// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "./utils/TestBase.sol";
import {AppealsFixture} from "./utils/AppealsFixture.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {ISettlementModule} from "../src/interfaces/ISettlementModule.sol";
import {AppealMath} from "../src/libraries/AppealMath.sol";

/// @notice Keys withheld at any depth after any pattern of decided depths (second review: withholding the
/// next depth's keys erased a decided overturn). One segment of tier 0 (k_0 = 1: panels of 3, 7, 15 seats),
/// three rounds allowed, a bond multiplier of 1.25 (so a forfeited bond has a surplus). Each run lives the
/// same history twice: once with the last depth's keys withheld, once stopping before that appeal, and
/// checks that a decided FAIL (at any depth) stands and every earlier round settles as if the withheld appeal
/// had never been made; that a contested PASS ends INCONCLUSIVE (the verdict) with the bond back and no
/// reward, while round 0 and every earlier appeal are scored as if the panel had voted FAIL (a third life,
/// outside review 5: only the provider can withhold); and that the escrow ends empty.
contract AppealsWithheldFuzzTest is AppealsFixture {
    uint256 internal constant PASS = 1;
    uint256 internal constant FAIL = 2;
    uint256 internal constant INCONCLUSIVE = 3;
    uint256 internal constant MULT = 12_500;

    /// @dev The appellant of each depth (1..3), distinct so that each one's net is its own appeal's.
    address[4] internal who;

    struct Life {
        uint256 sid;
        uint256 contested;
        uint256 finalOutcome;
        uint256 correct0;
        uint256 incorrect0;
        int256[4] net;
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.maxRounds = 3;
        p.appealBondMultiplierBps = uint32(MULT);
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(0, 28, STAKE);
        _nextEpoch();
        for (uint256 d = 1; d <= 3; ++d) {
            who[d] = address(uint160(0xAA00 + d));
            token.transfer(who[d], 10_000e18);
            vm.prank(who[d]);
            token.approve(address(appeals), type(uint256).max);
        }
    }

    /// @dev Every seat PASS, every seat FAIL, or a split that reaches no quorum (half the seats inverted,
    /// one more silent).
    function _vote(uint256 sid, uint256 round, uint256 kind, uint256 k) internal {
        if (kind == PASS) _voteRound(sid, round, 0, 0, 0);
        else if (kind == FAIL) _voteRound(sid, round, 1, 0, 0);
        else _voteRound(sid, round, 0, (uint256(1) << (k / 2)) - 1, uint256(1) << (k - 1));
    }

    function _expire(uint256 sid, uint256 round) internal {
        uint256 deadline = appeals.roundOf(sid, round).keyDeadline;
        if (block.number <= deadline) vm.roll(deadline + 1);
        appeals.advance(sid);
        assertEq(
            uint256(appeals.roundOf(sid, round).status), uint256(IAuditSessions.Status.Expired), "withheld"
        );
    }

    /// @dev Round 0 says `fail0`; depths 1..`depth` are appealed, each decided by `kinds`, except the last
    /// one's keys are withheld if `withhold`; then everything is settled.
    function _life(uint256 fail0, uint256[3] memory kinds, uint256 depth, bool withhold)
        internal
        returns (Life memory x)
    {
        x.sid = _openReady(1, 0, new bytes32[](0));
        _voteRound0(x.sid, fail0, 0, 0);
        _toAppealWindow(x.sid);
        uint256[4] memory before;
        for (uint256 d = 1; d <= 3; ++d) {
            before[d] = token.balanceOf(who[d]);
        }
        for (uint256 d = 1; d <= depth; ++d) {
            x.contested = _outcomeOf(x.sid, 0);
            vm.prank(who[d]);
            uint256 round = appeals.appeal(x.sid, _segs(0), type(uint256).max);
            assertEq(round, d, "one segment: round d is depth d");
            _drawRound(x.sid, round);
            if (withhold && d == depth) {
                _expire(x.sid, round);
                break;
            }
            _publishRound(x.sid, round);
            _vote(x.sid, round, kinds[d - 1], AppealMath.panelSeats(1, d));
        }
        x.finalOutcome = _outcomeOf(x.sid, 0);
        vm.recordLogs();
        _closeAndSettle(x.sid);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length < 2 || logs[i].topics[0] != ISettlementModule.AuditorSettled.selector) {
                continue;
            }
            if (uint256(logs[i].topics[1]) != x.sid) continue;
            (uint256 r, uint256 correct, uint256 incorrect,,,,,) = abi.decode(
                logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256, uint256, uint256)
            );
            if (r != 0) continue;
            x.correct0 += correct;
            x.incorrect0 += incorrect;
        }
        for (uint256 d = 1; d <= 3; ++d) {
            x.net[d] = int256(token.balanceOf(who[d])) - int256(before[d]);
        }
        assertEq(token.balanceOf(address(escrow)), 0, "escrow empty: in == out");
    }

    /// @dev Keys withheld at depth `w` (1..3) after round 0 said `fail0` and depths 1..w-1 decided by
    /// `k1`, `k2` (PASS, FAIL or no quorum).
    function testFuzz_withheldAtAnyDepthKeepsOnlyADecidedFail(uint8 fail0, uint8 k1, uint8 k2, uint8 w)
        public
    {
        uint256 depth = bound(w, 1, 3);
        uint256[3] memory kinds = [1 + uint256(k1) % 3, 1 + uint256(k2) % 3, 0];
        Life memory a = _life(fail0 % 2, kinds, depth, true);
        Life memory b = _life(fail0 % 2, kinds, depth - 1, false);
        assertEq(a.contested, b.finalOutcome, "the withheld appeal contested the last decided outcome");
        assertTrue(appeals.segmentAppeals(a.sid, 0).closed, "the segment closes");
        bool keeps = b.finalOutcome == FAIL; // at any depth (outside review 3)
        assertEq(a.finalOutcome, keeps ? FAIL : INCONCLUSIVE, "a decided FAIL stands, nothing else");
        uint256 k = AppealMath.panelSeats(1, depth);
        uint256 pv = escrow.perVoteOf(a.sid, depth, 0);
        if (keeps) {
            assertTrue(a.net[depth] == -int256(k * R * MULT / 10_000), "the withheld bond is forfeited");
            assertEq(pv, R, "it pays every locked seat R");
            for (uint256 d = 1; d < depth; ++d) {
                assertTrue(a.net[d] == b.net[d], "an earlier appellant nets what it would have");
                assertEq(escrow.perVoteOf(a.sid, d, 0), escrow.perVoteOf(b.sid, d, 0), "an earlier panel too");
            }
            assertEq(a.correct0, b.correct0, "round 0 scored right as without the withheld appeal");
            assertEq(a.incorrect0, b.incorrect0, "round 0 scored wrong as without the withheld appeal");
        } else {
            assertTrue(a.net[depth] == 0, "bond back whole, no reward");
            assertTrue(pv <= R, "the pot's share, at most R");
            if (b.finalOutcome == INCONCLUSIVE) {
                assertEq(a.correct0, 0, "nobody is right against a decided INCONCLUSIVE");
                return;
            }
            // A withheld PASS is scored as FAIL (adverse inference): round 0 and every earlier appeal settle
            // as if the withheld panel had voted FAIL (`c`), so withholding spares no PASS vote and refunds
            // no lost appeal.
            kinds[depth - 1] = FAIL;
            Life memory c = _life(fail0 % 2, kinds, depth, false);
            assertEq(c.finalOutcome, FAIL, "control: the panel voted FAIL");
            assertEq(a.correct0, c.correct0, "round 0 scored right as against a voted FAIL");
            assertEq(a.incorrect0, c.incorrect0, "round 0 scored wrong as against a voted FAIL");
            for (uint256 d = 1; d < depth; ++d) {
                assertTrue(
                    (a.net[d] < 0) == (c.net[d] < 0), "an earlier appeal lost or won as against a voted FAIL"
                );
                if (a.net[d] < 0) assertTrue(a.net[d] == c.net[d], "a lost earlier appeal costs its bond");
            }
        }
    }
}
