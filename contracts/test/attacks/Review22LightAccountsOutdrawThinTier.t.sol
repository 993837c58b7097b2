// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {SeatWord} from "../../src/libraries/SeatWord.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";

interface VmSkipReview22Light {
    function skip(bool) external;
}

/// @title Review22CapForcesSeatsOntoLightAccounts (outside review 22 of 0f4112d, open)
/// @notice Property (docs "Round size": the bound keeps a capped round drawable "unless more than half of the
/// auditors who can sit refuse"; the protocol's honesty assumption is stake-weighted, rule R): a capped round an
/// appellant gets admitted is seated in proportion to stake, so a stake minority cannot take a panel majority
/// by the round's shape.
/// Attack: the capacity counts accounts. The appellant stakes many light accounts: E and the capacity grow, a
/// round the honest auditors alone cannot seat is admitted (without them PanelTooLarge(91, 0): control), the
/// draw seats the heavy honest auditors first (stake-weighted) until they reach the seat cap, and every later
/// seat goes to the light accounts: their seat share exceeds their stake share and sits on the last segments.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review22CapForces*' -vv`), seat cap 4,
/// k_0 = 3, tau 60% (7-seat panels: 3 wrong votes spoil, 5 flip), 10 honest tier-1 auditors of 1,000 TRUST,
/// PASS sessions (correct), the appellant's accounts of 100 TRUST (the fixture's min stake) vote FAIL, the
/// honest PASS:
/// (1) 13 segments, 48 accounts (4,800 of 14,800 TRUST, 32% of the tier, 40.7% of a segment's eligible
///     weight): admitted (E 55, 91 seats); the accounts hold 51 of 91 seats (56%); outcomes 2 PASS, 3 FAIL,
///     8 INCONCLUSIVE, score 10,000 -> 1,538 bps; appellant bond loss 58.8 TRUST, its accounts +84 TRUST
///     (4,884 after settlement): net +25.2 TRUST.
/// (2) 7 segments, 28 accounts (2,800 of 12,800 TRUST, 21.9%; 28.6% of eligible weight): 19 of 49 seats
///     (38.8%); 3 PASS, 0 FAIL, 4 INCONCLUSIVE, score 4,285 bps; bond loss 126, accounts -24: net -150 TRUST.
/// For scale, stake-proportional 7-seat panels (binomial, by arithmetic, not run): 40.7% spoils 59.5% of
/// panels (7.7 of 13 expected, 1.3 flipped) and 28.6% spoils 32.1% (2.2 of 7): the capped round roughly
/// doubles the damage, and the baseline itself is the small-panel risk the escalation is meant to absorb
/// (a depth-2 re-appeal here meets the same accounts with the same cap). Without the skip (1) fails at
/// "the correct PASSes stand: 2 != 13", (2) at "3 != 7".
/// Severity: MEDIUM-HIGH (a stake minority buys a seat majority on the round's late segments and voids or
/// flips correct PASSes at a profit in (1); the same seat-cap mechanics apply to round 0 of a many-segment
/// session - not measured here).
/// Fix proposal: do not admit appeal rounds where the seat cap can bind - `cappedCapacity` 0, i.e.
/// `if (segments.length > c.seatCap) revert PanelTooLarge(sessionId, q.totalSeats, 0)` (appellants split into
/// rounds of at most seatCap segments; rounds are bounded by min(maxRounds x segmentCount, 255) anyway), so
/// every seat is drawn stake-proportionally; or size the capped bound in stake (the seats the heavy auditors'
/// caps leave to the rest must stay below a spoiling share of every panel), which needs per-auditor weights at
/// admission.
contract Review22CapForcesSeatsOntoLightAccounts is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal constant MIN = 100e18;
    uint256 internal constant SEGMENTS = 13;
    uint256 internal constant SYBILS = 48;

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
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
    function test_ControlWithoutLightAccountsRefused() public {
        uint256 sid = _setUp(SEGMENTS, 0);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.PanelTooLarge.selector, sid, 91, 0));
        appeals.quote(sid, _segsN(SEGMENTS));
    }

    /// @dev Runs the attack; returns the PASSes left of `segments` correct ones.
    function _run(uint256 segments, uint256 sybils) internal returns (uint256 pass) {
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
        uint256 mine = 0;
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

    function test_LightAccountsCaptureTheCappedRound_KNOWN() public {
        VmSkipReview22Light(address(vm)).skip(true);
        assertEq(_run(SEGMENTS, SYBILS), SEGMENTS, "the correct PASSes stand");
    }

    function test_SmallerCapture_KNOWN() public {
        VmSkipReview22Light(address(vm)).skip(true);
        assertEq(_run(7, 28), 7, "the correct PASSes stand");
    }
}
