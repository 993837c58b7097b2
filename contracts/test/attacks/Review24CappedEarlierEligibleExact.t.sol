// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Review24DrawProbe} from "./Review24DrawProbe.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review24CappedEarlierEligibleExact (outside review 24 of 9aecdcc, DrawModule `_fail`/`_cappedEarlier`)
/// @notice Property (rule R, docs/appeals-canaries.md; `consensus/appeal_draw.py` `DrawCandidate`): when an
/// appeal round's draw fails on segment s, the `DrawResult.eligibleWeight` the appeal module compares with
/// 2 x refusedWeight is exactly W_E = the tier's snapshot weight at the round's epoch less the provider's
/// and less every auditor that sat on s in an earlier panel (round 0 here), each taken out once, whatever
/// the paging of the draw calls, and whatever those earlier-panel auditors did between the snapshot and the
/// draw (top up, withdraw, deregister); and refusedWeight is exactly the snapshot weight of s's refusers.
/// Attack tried (all hold): double subtraction of a capped earlier-panel auditor (panel-wide entry walked
/// by `_cappedEarlier` AND a reason-4 entry of s), under-subtraction of one that stops being cappable (it
/// withdraws or deregisters after the snapshot, so its appeal locks are refused: reason 3 on the earlier
/// segments, reason 4 on s), W_E drift across calls (maxSeats 1, 7, 64; and s resumed mid-segment after
/// MAX_REJECTIONS_PER_CALL with 80 refusers, so `_resumeWeights` carries s's reason-4 weight), the
/// provider's leaf in the tier (a panel-wide entry the walk must skip: its weight is already out).
/// World: Review21CappedEarlierAuditorInflatesEligible's admitted re-shape (tier 1: D0 100 TRUST + 9 honest
/// of 300, a 20-segment PASS session, 9 named segments with s last, D0 on s in round 0 and capped (8 appeal
/// seats) before s; refusers' free stake locked elsewhere). The `DrawResult` of the failing call is read
/// with `Review24DrawProbe` (the same call replayed as the appeal module, then reverted).
/// Measured (command below): D0 topped up 2,900 TRUST, 20 refusers of 125 TRUST: W_E 4,600 TRUST of weight
/// (contract = rule, D0's 3,000 out once), W_R 2,500, with maxSeats 1, 7 and 64 alike; fuzzed top-ups and
/// refuser stakes: equal in every run; 80 refusers of 100 TRUST (s resumed mid-segment): equal; D0 withdraws
/// all or deregisters after the snapshot: equal, and D0 still takes its 8 appeal seats (snapshot stake sticks,
/// as Review22LeavingSybilsStillSit found); the provider with a 5,000-TRUST leaf in the tier: equal (4,600,
/// its leaf walked but skipped by address, its weight out once); H1 (honest, not on s's round-0 panel) tops
/// up 20,000 TRUST after the appeal: W_E still 4,600, REFUSED (the memory port counts the top-up and ends
/// UNFILLABLE: tests/consensus/test_review24_port_eligible_weight.py).
/// Severity: none (property holds).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review24CappedEarlier*' -vv`.
contract Review24CappedEarlierEligibleExact is Review24DrawProbe {
    /// @dev Review 21's world (20 segments of a tier at the fixture's 100 TRUST minimum) opens a session the
    /// stake premise (outside review 22) refuses: this world measures W_E, not the premise (see the
    /// fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    uint256 internal constant SEGMENTS = 20;
    uint256 internal sid;
    uint256 internal round;

    event log_named_uint(string key, uint256 val);

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _refuser(uint256 i) internal pure returns (address) {
        return address(uint160(0x24CA0000 + i));
    }

    /// @dev Review21's choice: 8 named segments below s with neither d0 nor h1 on their round-0 panel, then s.
    function _pick(uint256 sessionId) internal view returns (uint256[] memory named, address d0, address h1) {
        d0 = auditorAddrs[0];
        uint256[] memory d0Segs = drawModule.seatsOf(sessionId, 0, d0);
        for (uint256 si = d0Segs.length; si > 0; --si) {
            uint256 s = d0Segs[si - 1];
            for (uint256 h = 1; h < auditorAddrs.length; ++h) {
                named = new uint256[](9);
                uint256 n = 0;
                for (uint256 g = 0; g < s && n < 8; ++g) {
                    if (!_seatedOn(sessionId, d0, g) && !_seatedOn(sessionId, auditorAddrs[h], g)) {
                        named[n++] = g;
                    }
                }
                if (n == 8) {
                    named[8] = s;
                    return (named, d0, auditorAddrs[h]);
                }
            }
        }
        revert("setup: no segment choice");
    }

    /// @dev What D0 does after the appeal's snapshot and before the draw.
    enum After {
        Nothing,
        WithdrawAll,
        Deregister,
        /// Not D0: the provider staked 5,000 TRUST in the tier before the appeal's snapshot.
        ProviderInTier,
        /// Not D0: H1 (honest, not on s's round-0 panel) tops up 20,000 TRUST after the appeal.
        HonestTopsUp
    }

    /// @dev The world, the appeal, the paged draw; returns the round and rule R's W_E and W_R.
    function _run(uint256 topUp, uint256 refusers, uint256 stake, uint256 maxSeats, After d0After)
        internal
        returns (IAppealModule.Round memory rd, uint256 ruleWE, uint256 ruleWR, uint256 s)
    {
        _deployAppeals();
        _addAuditors(1, 1, 100e18); // D0
        _addAuditors(1, 9, 300e18); // honest
        _nextEpoch();
        sid = _passedSession(SEGMENTS, FEE);
        (uint256[] memory named, address d0, address h1) = _pick(sid);
        if (topUp != 0) {
            token.transfer(d0, topUp);
            vm.prank(d0);
            staking.stake(d0, topUp);
        }
        for (uint256 i = 0; i < refusers; ++i) {
            _joinTier(_refuser(i), 1, stake);
        }
        if (d0After == After.ProviderInTier) _joinTier(provider, 1, 5000e18);
        _nextEpoch();
        round = _appeal(sid, named);
        for (uint256 i = 0; i < refusers; ++i) {
            _busyElsewhere(_refuser(i), 0);
        }
        if (d0After == After.WithdrawAll) {
            vm.startPrank(d0);
            staking.requestWithdrawal(d0, staking.sharesOf(d0, d0));
            vm.stopPrank();
        } else if (d0After == After.Deregister) {
            vm.prank(d0);
            registry.deregister();
        } else if (d0After == After.HonestTopsUp) {
            token.transfer(h1, 20_000e18);
            vm.prank(h1);
            staking.stake(h1, 20_000e18);
        }
        _drawProbing(sid, round, maxSeats);
        rd = appeals.roundOf(sid, round);
        s = named[8];
        uint256 epoch = rd.epoch;
        ruleWE = _sortition().totalWeightAt(1, epoch) - _weightAt(1, provider, epoch);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (_seatedOn(sid, auditorAddrs[i], s)) ruleWE -= _weightAt(1, auditorAddrs[i], epoch);
        }
        for (uint256 i = 0; i < refusers; ++i) {
            ruleWR += _weightAt(1, _refuser(i), epoch);
        }
        emit log_named_uint("draw calls", drawCalls);
        emit log_named_uint("failed call gas", failedCallGas);
        emit log_named_uint("drawn seats", rd.drawnSeats);
        emit log_named_uint("D0 appeal seats", drawModule.seatsOf(sid, round, d0).length);
        emit log_named_uint("D0 snapshot weight", _weightAt(1, d0, epoch));
        emit log_named_uint("rule R's W_E", ruleWE);
        emit log_named_uint("contract's W_E (probed)", probed.eligibleWeight);
        emit log_named_uint("rule R's W_R", ruleWR);
        emit log_named_uint("contract's W_R (probed)", probed.refusedWeight);
        emit log_named_uint("refused", rd.refused ? 1 : 0);
        assertTrue(rd.status == IAuditSessions.Status.Cancelled, "setup: the draw failed");
        assertTrue(probed.failed, "setup: the failed call probed");
        assertEq(probed.cursor, s, "setup: failed on s");
    }

    function _exact(uint256 topUp, uint256 refusers, uint256 stake, uint256 maxSeats, After d0After)
        internal
        returns (IAppealModule.Round memory rd)
    {
        uint256 we;
        uint256 wr;
        (rd, we, wr,) = _run(topUp, refusers, stake, maxSeats, d0After);
        assertEq(probed.eligibleWeight, we, "W_E is rule R's: each earlier-panel auditor of s out once");
        assertEq(probed.refusedWeight, wr, "W_R is the refusers' snapshot weight");
        assertTrue(rd.refused == (rd.refusalsCharged && 2 * wr > we), "the round ends as rule R says");
    }

    /// @dev Review21's attack figures, one segment per call.
    function test_EligibleExactOneSegmentPerCall() public {
        _exact(2900e18, 20, 125e18, 1, After.Nothing);
        assertEq(drawModule.seatsOf(sid, round, auditorAddrs[0]).length, 8, "setup: D0 at the cap before s");
    }

    function test_EligibleExactSevenSeatCalls() public {
        _exact(2900e18, 20, 125e18, 7, After.Nothing);
    }

    function test_EligibleExactOneCall() public {
        _exact(2900e18, 20, 125e18, 64, After.Nothing);
    }

    /// @dev 80 refusers: more than MAX_REJECTIONS_PER_CALL rejections on s, so s resumes mid-segment.
    function test_EligibleExactResumedMidSegment() public {
        _exact(2900e18, 80, 100e18, 1, After.Nothing);
        emit log_named_uint("seats drawn before the failed call (8 segments x 7 = 56)", seatsBeforeFailedCall);
        assertTrue(seatsBeforeFailedCall > 56, "setup: the failed call resumed s mid-segment");
    }

    /// @dev D0 withdraws everything after the snapshot: its appeal locks fail (or not, while the snapshot can
    /// draw it); either way W_E is exact.
    function test_EligibleExactEarlierAuditorWithdraws() public {
        _exact(2900e18, 20, 125e18, 1, After.WithdrawAll);
    }

    /// @dev D0 deregisters after the snapshot: its locks are barred (reason 3 on the 8 earlier segments), it is
    /// never capped, and s takes it out as a reason-4 entry: W_E exact.
    function test_EligibleExactEarlierAuditorDeregisters() public {
        _exact(2900e18, 20, 125e18, 1, After.Deregister);
    }

    /// @dev The provider has a leaf in the tier (sampled, reason 1, a panel-wide entry the walk skips by
    /// address): its weight is out of W_E once.
    function test_EligibleExactProviderInTier() public {
        _exact(2900e18, 20, 125e18, 1, After.ProviderInTier);
        assertTrue(_weightAt(1, provider, appeals.roundOf(sid, round).epoch) != 0, "setup: provider leaf");
    }

    /// @dev The contract side of tests/consensus/test_review24_port_eligible_weight.py: a sitting non-earlier
    /// auditor's top-up after the appeal moves neither W_E nor the end (REFUSED); the memory port counts it.
    function test_TopUpAfterTheAppealMovesNothing() public {
        IAppealModule.Round memory rd = _exact(2900e18, 20, 125e18, 1, After.HonestTopsUp);
        assertEq(probed.eligibleWeight, 4600e6, "W_E the snapshot's 4,600 TRUST");
        assertTrue(rd.refused, "REFUSED as without the top-up");
    }

    /// forge-config: default.fuzz.runs = 12
    function testFuzz_EligibleExact(uint256 topUp, uint256 stake, uint256 page) public {
        topUp = bound(topUp, 100e18, 5000e18);
        stake = bound(stake, 100e18, 400e18);
        uint256[3] memory pages = [uint256(1), 3, 64];
        _exact(topUp, 20, stake, pages[page % 3], After.Nothing);
    }
}
