// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "./StakingFixture.sol";
import {AppealModule} from "../../src/modules/AppealModule.sol";
import {AppealSettlement} from "../../src/modules/AppealSettlement.sol";
import {CanaryModule} from "../../src/modules/CanaryModule.sol";
import {AppealDeploy} from "./AppealDeploy.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IVotingModule} from "../../src/interfaces/IVotingModule.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";
import {SeatWord} from "../../src/libraries/SeatWord.sol";
import {SegmentWord} from "../../src/libraries/SegmentWord.sol";

/// @notice The protocol with issue 15's modules (appeals, appeal settlement, canaries) on the real
/// Staking, and helpers that drive appeal rounds and canaries through their phases.
abstract contract AppealsFixture is StakingFixture {
    uint256 internal constant FEE = 1000e18;
    uint256 internal constant R = 6e18;
    uint256 internal constant P = 8e18;
    uint256 internal constant BUDGET = 200e18;
    uint256 internal constant TREASURY_FUNDS = 10_000e18;
    uint256 internal constant APPEAL_BLOCKS = 10;
    uint256 internal constant CANARY_BLOCKS = 5;

    AppealModule internal appeals;
    AppealSettlement internal escrow;
    CanaryModule internal canaries;
    address internal appellant = address(0xA99E);
    /// @dev The canary operator governance authorized (never a provider).
    address internal canaryOperator = address(0xCA4A);

    function _appealParams() internal pure virtual returns (IAppealModule.AppealParams memory p) {
        p.appealBlocks = uint32(APPEAL_BLOCKS);
        p.maxRounds = 2;
        p.appealBondMultiplierBps = 10_000;
        p.appealRewardBps = 2000;
        p.appealBudget = uint96(BUDGET);
        p.canaryRateBps = 1000;
        p.canaryRevealBlocks = uint32(CANARY_BLOCKS);
        p.canaryGamma = 0.2e18;
        p.canaryRefundBps = 2500;
    }

    function _deployAppeals() internal {
        _deploy();
        (appeals, escrow) = AppealDeploy.deploy(sessions, owner, _appealParams());
        canaries = new CanaryModule(sessions);
        vm.startPrank(owner);
        sessions.setExtensions(address(appeals), address(canaries));
        treasury.setSpender(address(escrow), type(uint256).max);
        treasury.setSpender(address(canaries), type(uint256).max);
        canaries.setCanaryOperator(canaryOperator, true);
        vm.stopPrank();
        token.transfer(address(treasury), TREASURY_FUNDS);
        token.transfer(appellant, 100_000e18);
        vm.prank(appellant);
        token.approve(address(appeals), type(uint256).max);
    }

    // ------------------------------------------------------------------ round 0

    /// @dev Open (n segments of `tier`), commit `canaryList` as canaries, draw, publish.
    function _openReady(uint256 n, uint8 tier, bytes32[] memory commitments) internal returns (uint256 sid) {
        sid = _open(_uniform(n, tier), FEE);
        _commitCanaries(sid, commitments);
        _drawAll(sid);
        _publish(sid);
    }

    /// @dev Everyone votes `failMask`; those in `invertMask` (auditor index bits) the opposite; then finalize.
    function _voteRound0(uint256 sid, uint256 failMask, uint256 invertMask, uint256 skipMask) internal {
        _commitAll(sid, failMask, invertMask);
        _revealAll(sid, failMask, invertMask, skipMask);
        if (skipMask != 0) vm.roll(block.number + 41);
        sessions.finalize(sid);
    }

    function _canaryCommitment(uint256 sid, uint256 index, uint8 verdict) internal pure returns (bytes32) {
        return keccak256(abi.encode(sid, index, verdict, _canarySalt(sid, index)));
    }

    function _canarySalt(uint256 sid, uint256 index) internal pure returns (bytes32) {
        return keccak256(abi.encode("canary", sid, index));
    }

    /// @dev The operator commits a session's canaries.
    function _commitCanaries(uint256 sid, bytes32[] memory commitments) internal {
        vm.prank(canaryOperator);
        canaries.commitCanaries(sid, commitments);
    }

    /// @dev The committing operator reveals one canary.
    function _revealCanary(uint256 sid, uint256 slot, uint256 index, uint8 verdict) internal {
        vm.prank(canaryOperator);
        canaries.revealCanary(
            sid,
            ICanaryModule.CanaryReveal({
                slot: slot, index: index, verdict: verdict, salt: _canarySalt(sid, index)
            })
        );
    }

    // ------------------------------------------------------------------ appeal rounds

    function _segs(uint256 a) internal pure returns (uint256[] memory s) {
        s = new uint256[](1);
        s[0] = a;
    }

    function _segs(uint256 a, uint256 b) internal pure returns (uint256[] memory s) {
        s = new uint256[](2);
        s[0] = a;
        s[1] = b;
    }

    /// @dev Move past the canary window (the first appeal window opens then).
    function _toAppealWindow(uint256 sid) internal {
        uint256 end = appeals.sessionAppeals(sid).canaryEnd;
        if (block.number <= end) vm.roll(end + 1);
    }

    function _appeal(uint256 sid, uint256[] memory segments) internal returns (uint256 round) {
        vm.prank(appellant);
        round = appeals.appeal(sid, segments, type(uint256).max);
    }

    function _drawRound(uint256 sid, uint256 round) internal {
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        for (uint256 i = 0; i < 64; ++i) {
            IAppealModule.Round memory rd = appeals.roundOf(sid, round);
            bool open = rd.status == IAuditSessions.Status.Created
                || (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats < rd.totalSeats);
            if (!open) break;
            appeals.drawPanel(sid, round, 16);
        }
    }

    function _publishRound(uint256 sid, uint256 round) internal {
        vm.prank(provider);
        appeals.publishPanelKeys(sid, round, "bafy-round");
    }

    /// @dev The auditors of a round, in draw order.
    function _roundAuditors(uint256 sid, uint256 round) internal view returns (address[] memory list) {
        uint256 key = PanelKey.keyOf(sid, round);
        uint256 n =
            round == 0 ? sessions.sessionOf(sid).auditorCount : appeals.roundOf(sid, round).auditorCount;
        list = new address[](n);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            uint256 w = drawModule.seatWordOf(key, auditorAddrs[i]);
            if (w != 0) list[SeatWord.index(w)] = auditorAddrs[i];
        }
    }

    function _roundVerdicts(uint256 sid, uint256 round, address a, uint256 failMask, bool invert)
        internal
        view
        returns (uint256 v)
    {
        uint256[] memory segs = drawModule.seatsOf(sid, round, a);
        for (uint256 j = 0; j < segs.length; ++j) {
            bool fail = (failMask >> segs[j]) & 1 == 1;
            if (invert) fail = !fail;
            if (fail) v |= uint256(1) << j;
        }
    }

    /// @dev Every auditor of the round commits and (unless in `skipMask`) reveals `failMask`, those in
    /// `invertMask` the opposite; then the round is finalized.
    function _voteRound(uint256 sid, uint256 round, uint256 failMask, uint256 invertMask, uint256 skipMask)
        internal
    {
        address[] memory list = _roundAuditors(sid, round);
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 v = _roundVerdicts(sid, round, list[i], failMask, (invertMask >> i) & 1 == 1);
            bytes32 c = voting.computeCommitment(sid, round, list[i], v, _salt(sid, list[i]));
            vm.prank(list[i]);
            voting.commit(sid, round, c);
        }
        uint256 n = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            if ((skipMask >> i) & 1 == 0) ++n;
        }
        IVotingModule.RevealItem[] memory items = new IVotingModule.RevealItem[](n);
        uint256 k = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            if ((skipMask >> i) & 1 == 1) continue;
            items[k++] = IVotingModule.RevealItem({
                auditor: list[i],
                verdicts: _roundVerdicts(sid, round, list[i], failMask, (invertMask >> i) & 1 == 1),
                salt: _salt(sid, list[i])
            });
        }
        if (n > 0) voting.revealBatch(sid, round, items);
        if (skipMask != 0) vm.roll(block.number + 41);
        appeals.finalizeRound(sid, round);
    }

    /// @dev Close every window, fix the slash seed, resolve the appeal money and settle every round.
    function _closeAndSettle(uint256 sid) internal {
        uint256 end = appeals.sessionAppeals(sid).lastWindowEnd;
        if (block.number <= end) vm.roll(end + 1);
        assertTrue(appeals.advance(sid), "outcome final");
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        escrow.settleAppeals(sid, 1024);
        uint256 rounds = appeals.sessionAppeals(sid).roundCount;
        for (uint256 r = 0; r <= rounds; ++r) {
            address[] memory list = _roundAuditors(sid, r);
            if (list.length != 0) settlement.settleBatch(sid, r, list);
        }
    }

    function _outcomeOf(uint256 sid, uint256 segment) internal view returns (uint256) {
        return appeals.outcomeOf(sid, segment);
    }

    function _round0Outcome(uint256 sid, uint256 segment) internal view returns (uint256) {
        return SegmentWord.outcome(SegmentWord.lane(sessions.segmentWord(sid, 0, segment >> 3), segment));
    }
}
