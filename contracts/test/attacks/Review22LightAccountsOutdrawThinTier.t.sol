// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {SeatWord} from "../../src/libraries/SeatWord.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";

interface VmSkipReview22Outdraw {
    function skip(bool) external;
}

/// @title Review22LightAccountsOutdrawThinTier (outside review 22 of 0f4112d, open; NOT the capacity bound)
/// @notice Property (the protocol's honesty assumption is stake-weighted: docs "Who counts", rule R): a stake
/// minority of a tier cannot take a seat majority of an appeal panel by splitting its stake into accounts.
/// Attack: the appellant splits its stake into many minimum-stake accounts. The draw seats distinct auditors
/// per segment (without replacement), so in a thin tier - here exactly k = 7 honest auditors eligible per
/// segment - every honest auditor drawn leaves the pool of that segment and the later seats go to the light
/// accounts far above their stake share. (Admission only lets the round in: without the accounts a 13-segment
/// round is PanelTooLarge(91, 0), control; a 1-segment round is admitted anyway at E 7 = k.)
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review22LightAccounts*' -vv`), k_0 = 3,
/// tau 60% (7-seat panels: 3 wrong votes spoil, 5 flip), 10 honest tier-1 auditors of 1,000 TRUST, correct PASS
/// sessions, the appellant's accounts of 100 TRUST (the fixture's min stake) vote FAIL, the honest PASS:
/// (1) seat cap 4, 13 segments, 48 accounts (4,800 of 14,800 TRUST: 32% of the tier, 40.7% of a segment's
///     eligible weight): admitted (E 55, 91 seats, capped); the accounts hold 51 of 91 seats (56%; the 10
///     honest at the cap of 4); outcomes 2 PASS, 3 FAIL, 8 INCONCLUSIVE, score 10,000 -> 1,538 bps; appellant
///     bond loss 58.8 TRUST, its accounts +84 TRUST after settlement: net +25.2 TRUST.
/// (2) seat cap 4, 7 segments, 28 accounts (21.9% of the tier, 28.6% of eligible weight): 19 of 49 seats
///     (38.8%); 3 PASS, 0 FAIL, 4 INCONCLUSIVE, score 4,285 bps; bond loss 126, accounts -24: net -150 TRUST.
/// (3) baseline, seat cap 64 (no cap binds, no capped bound; contract ...Baseline, passing): the same 48
///     accounts take 52 of 91 seats; 1 PASS, 4 FAIL, 8 INCONCLUSIVE, score 769 bps; bond loss 8.4, accounts
///     +104: net +95.6 TRUST. So the seat cap and `cappedCapacity` are not the cause: the without-replacement
///     draw in a tier with few eligible auditors per segment is. Stake-proportional 7-seat panels would spoil
///     59.5% (40.7%) and 32.1% (28.6%) of panels (binomial, arithmetic): the split does worse than that.
/// Without the skip (1) fails at "the correct PASSes stand: 2 != 13", (2) at "3 != 7".
/// Severity: MEDIUM in thin tiers (few eligible auditors per segment relative to k; the gap closes as the tier
/// grows), outside this review's target (the draw and the tier's admission, not the round's capacity); a
/// depth-2 re-appeal meets the same accounts (not run).
/// Fix proposal (design, not a one-liner): a minimum eligible weight per seat at admission (E counted in
/// stake: e.g. admit only if the eligible weight excluding the heaviest k auditors still exceeds a multiple of
/// k x minStake), or raise the minimum stake so splitting is costly; the draw itself is sound per segment.
contract Review22LightAccountsOutdrawThinTier is NoCanaryAppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    event log_named_uint(string key, uint256 val);

    uint256 internal constant MIN = 100e18;
    uint256 internal constant SEGMENTS = 13;
    uint256 internal constant SYBILS = 48;

    function _sessionParams() internal pure virtual override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 4;
    }

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _segsN(uint256 n) internal pure returns (uint256[] memory s) {
        s = new uint256[](n);
        for (uint256 i = 0; i < n; ++i) {
            s[i] = i;
        }
    }

    function _setUp(uint256 segments, uint256 sybils) internal returns (uint256 sid) {
        sid = _setUpPassedSession(10, segments, FEE);
        for (uint256 i = 0; i < sybils; ++i) {
            address a = vm.addr(0xD5B000 + i);
            _joinTier(a, 1, MIN);
            auditorAddrs.push(a); // so the fixture's round helpers list them
            auditorKeys.push(0xD5B000 + i);
        }
        _nextEpoch();
    }

    /// @dev Control: without the appellant's accounts the 13-segment round is refused up front (E 7).
    function test_ControlWithoutLightAccountsRefused() public virtual {
        uint256 sid = _setUp(SEGMENTS, 0);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 91, 0));
        appeals.quote(sid, _segsN(SEGMENTS));
    }

    /// @dev Runs the attack; returns the PASSes left of `segments` correct ones.
    function _run(uint256 segments, uint256 sybils) internal returns (uint256 pass, uint256 mine) {
        uint256 sid = _setUp(segments, sybils);
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segsN(segments));
        _drawRound(sid, round);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats drawn", rd.drawnSeats);
        _publishRound(sid, round);
        // The appellant's accounts vote FAIL everywhere, the honest auditors PASS (the correct verdict).
        uint256 key = PanelKey.keyOf(sid, round);
        uint256 invert = 0;
        for (uint256 i = 0; i < sybils; ++i) {
            uint256 w = drawModule.seatWordOf(key, vm.addr(0xD5B000 + i));
            if (w != 0) invert |= uint256(1) << SeatWord.index(w);
            mine += drawModule.seatsOf(sid, round, vm.addr(0xD5B000 + i)).length;
        }
        emit log_named_uint("seats on the appellant's accounts", mine);
        _voteRound(sid, round, 0, invert, 0);
        uint256 fail = 0;
        uint256 inconclusive = 0;
        for (uint256 j = 0; j < segments; ++j) {
            uint256 o = _outcomeOf(sid, j);
            if (o == 1) ++pass;
            else if (o == 2) ++fail;
            else ++inconclusive;
        }
        emit log_named_uint("PASS", pass);
        emit log_named_uint("FAIL", fail);
        emit log_named_uint("INCONCLUSIVE", inconclusive);
        (, uint256 score,,,) = escrow.verdictOf(sid);
        emit log_named_uint("score bps", score);
        _closeAndSettle(sid);
        uint256 stakeAfter = 0;
        for (uint256 i = 0; i < sybils; ++i) {
            stakeAfter += _backing(vm.addr(0xD5B000 + i)) + token.balanceOf(vm.addr(0xD5B000 + i));
        }
        emit log_named_uint("appellant bond loss (wei)", before - token.balanceOf(appellant));
        emit log_named_uint("accounts' backing + wallets after (wei)", stakeAfter);
        emit log_named_uint("accounts' stake before (wei)", sybils * MIN);
    }

    function test_LightAccountsCaptureTheCappedRound_KNOWN() public virtual {
        VmSkipReview22Outdraw(address(vm)).skip(true);
        (uint256 pass,) = _run(SEGMENTS, SYBILS);
        assertEq(pass, SEGMENTS, "the correct PASSes stand");
    }

    function test_SmallerCapture_KNOWN() public virtual {
        VmSkipReview22Outdraw(address(vm)).skip(true);
        (uint256 pass,) = _run(7, 28);
        assertEq(pass, 7, "the correct PASSes stand");
    }
}

/// @notice Baseline for Review22LightAccountsOutdrawThinTier (3): the same tier, accounts, session and votes with
/// seat cap 64 (above the 13 segments: the cap never binds and no capped bound applies). One seed: one sample.
contract Review22LightAccountsOutdrawThinTierBaseline is Review22LightAccountsOutdrawThinTier {
    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 64;
    }

    /// @dev Pins that the cap is not the cause: uncapped, the accounts take at least the capped round's 51 seats.
    function test_UncappedDrawFavoursTheSplitToo() public {
        (, uint256 mine) = _run(SEGMENTS, SYBILS);
        assertGe(mine, 51, "uncapped: at least the capped round's 51 seats (measured 52)");
    }

    /// @dev The capped contract's test: not run in the baseline.
    function test_ControlWithoutLightAccountsRefused() public override {
        VmSkipReview22Outdraw(address(vm)).skip(true);
    }

    /// @dev The capped contract's test: not run in the baseline.
    function test_LightAccountsCaptureTheCappedRound_KNOWN() public override {
        VmSkipReview22Outdraw(address(vm)).skip(true);
    }

    /// @dev The capped contract's test: not run in the baseline.
    function test_SmallerCapture_KNOWN() public override {
        VmSkipReview22Outdraw(address(vm)).skip(true);
    }
}
