// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";

/// @title Review11LiveCountDecidesRefusal (fuzz of the outside-review-11 fix, restated for review 13's rule)
/// @notice Property (docs/appeals-canaries.md "Round size", "Dead leaves"): admission counts exactly the
/// tier's leaves with weight in the round's snapshot (`ISortition.liveCountAt`), so an admitted round is never
/// re-judged at the draw; a failed appeal draw ends REFUSED (bond back, a contested PASS voided) exactly when
/// admission found the margin, `eligible >= 2 k` with `eligible` = live members (provider excluded) minus
/// every earlier panel's seats (`Round.refusalsCharged`, also in the quote), and (rule R, since
/// Review17SybilsBuyTheRefusalMargin) the counted refusers of the failed segment hold more than half of its
/// eligible snapshot weight, 2 W_R > W_E (computed here from the snapshot). Otherwise UNFILLABLE (the PASS stands, R per drawn seat). Trade-off: with k <= eligible < 2k a
/// refusing minority ends the round UNFILLABLE; the quote says so before the bond is paid.
/// Inputs: `live` registered auditors, `dead` leaves (staked once, left before the session), `busy` auditors
/// whose free stake another panel holds (they refuse every lock), 1-4 named segments (seat cap 2, k_0 = 1,
/// so k_1 = 3), and optionally segment 0's round-0 auditor leaving before the appeal's snapshot (churn: it
/// lowers the live count; its earlier seat is still subtracted).
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review11LiveCount*' -vv`, 256 runs):
/// passes. Its review-11 version failed on main 2c2ae4f (every failed draw with a refusal was REFUSED, the dead
/// leaves included); this version reads `refusalsCharged`, so it was not run on c9c6de4 (which lacks it).
/// Conversely the review-11 assertion (REFUSED whenever the live tier could seat the round) fails on this code,
/// as intended: below 2k a failed draw is now UNFILLABLE.
contract Review11LiveCountDecidesRefusal is NoCanaryAppealsFixture {
    uint256 internal constant K1 = 3;
    uint256 internal constant CAP = 2;
    uint256 internal _live;
    uint256 internal _busy;
    uint256 internal _epoch;

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

    /// @dev Leaves of tier 1 with weight at the start of `epoch`, counted one by one.
    function _liveLeaves(uint256 epoch) internal view returns (uint256 n) {
        uint256 leaves = _sortition().leafCount(1);
        for (uint256 i = 0; i < leaves; ++i) {
            if (_sortition().leafWeightAt(1, epoch, i) != 0) ++n;
        }
    }

    /// forge-config: default.fuzz.runs = 256
    function testFuzz_RefusedOnlyWithAnHonestMajorityMargin(
        uint8 liveIn,
        uint8 deadIn,
        uint8 busyIn,
        uint8 segmentsIn,
        bool leaves
    ) public {
        uint256 live = bound(liveIn, 3, 16);
        uint256 dead = bound(deadIn, 0, 8);
        uint256 busy = bound(busyIn, 0, 8);
        uint256 m = bound(segmentsIn, 1, 4);
        (_live, _busy) = (live, busy);
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
        if (leaves) {
            vm.prank(_seats0Of(sid, 0));
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
        uint256 epoch = _sortition().currentEpoch();
        _epoch = epoch;
        uint256 members = _liveLeaves(epoch); // the provider holds no leaf here
        assertEq(
            _sortition().liveCountAt(1, epoch), members, "the live count is the leaves with snapshot weight"
        );
        assertEq(members, live - (leaves ? 1 : 0), "dead and departed leaves are not live");
        uint256 eligible = members > 1 ? members - 1 : 0; // minus k_0 = 1 earlier seat
        // outside review 17: the capacity counts the eligible (who can sit), not every live member; outside
        // review 20: the auditors at the cap on earlier segments out of the draw; review 22: exact,
        // k + seatCap (E - E / 2 - k + 1) - 1
        uint256 free = eligible - eligible / 2;
        bool admissible =
            eligible >= K1 && (m <= CAP || (free >= K1 && m * K1 <= K1 + CAP * (free - K1 + 1) - 1));
        IAppealModule.Quote memory q;
        try appeals.quote(sid, named) returns (IAppealModule.Quote memory got) {
            q = got;
        } catch {
            assertTrue(!admissible, "refused only below the live count");
            return;
        }
        assertTrue(admissible, "admitted only within the live count");
        assertTrue(q.refusalsCharged == (eligible >= 2 * K1), "quote: refusals charged iff eligible >= 2k");
        uint256 round = _appeal(sid, named);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        assertEq(rd.epoch, epoch, "the round draws from the snapshot admission counted");
        assertTrue(rd.refusalsCharged == q.refusalsCharged, "the round keeps the quote's rule");
        vm.recordLogs();
        _drawRound(sid, round);
        rd = appeals.roundOf(sid, round);
        (bool failed, uint256 segment, uint256 refusals) = _drawFailed();
        if (!failed) {
            assertTrue(!rd.refused, "a draw that did not fail is never REFUSED");
            return;
        }
        bool expected = eligible >= 2 * K1 && _refusersHoldTheMajority(sid, round, segment, refusals);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled, "a failed draw cancels the round");
        assertTrue(rd.refused == expected, "REFUSED iff eligible >= 2k at admission and 2 W_R > W_E");
        if (!expected) assertEq(_outcomeOf(sid, segment), 1, "an unfillable round leaves the PASS standing");
    }

    /// @dev Rule R's weights of the failed `segment`, from the snapshot: E = every live leaf but the segment's
    /// round-0 auditor (kept if at the seat cap of this round: the draw cannot tell it apart, see
    /// `DrawModule._fail`); R = the busy auditors in E (they refuse every lock, reason 3). True iff 2 W_R > W_E.
    function _refusersHoldTheMajority(uint256 sid, uint256 round, uint256 segment, uint256 refusals)
        internal
        view
        returns (bool)
    {
        uint256 epoch = _epoch;
        uint256 wr;
        uint256 we;
        uint256 leaves = _sortition().leafCount(1);
        for (uint256 i = 0; i < leaves; ++i) {
            we += _sortition().leafWeightAt(1, epoch, i);
        }
        address early = _seats0Of(sid, segment);
        if (drawModule.seatsOf(sid, round, early).length < CAP) we -= _weightOf(early, epoch);
        for (uint256 i = 0; i < _busy && i < _live; ++i) {
            address a = auditorAddrs[_live - 1 - i];
            if (a != early) wr += _weightOf(a, epoch);
        }
        if (wr != 0) assertTrue(refusals != 0, "refused weight comes with counted refusals");
        return 2 * wr > we;
    }

    function _weightOf(address a, uint256 epoch) internal view returns (uint256) {
        (bool exists, uint256 leaf) = _sortition().leafOf(1, a);
        return exists ? _sortition().leafWeightAt(1, epoch, leaf) : 0;
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
