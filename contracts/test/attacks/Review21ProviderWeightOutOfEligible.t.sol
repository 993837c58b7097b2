// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review21ProviderWeightOutOfEligible (outside review 21 of 29b4b57, DrawModule `_fail`)
/// @notice Property (rule R): W_E excludes the provider's snapshot weight exactly once, whether or not the draw
/// sampled the provider, so a provider staked in the tier neither dilutes the refusers (defender side) nor,
/// subtracted twice, shrinks W_E (appellant side).
/// Attack tried: a provider holding 5,000 TRUST in the tier (far more than the rest) - if `_fail` counted it
/// in W_E the refusing majority would need 2,500 TRUST more; if it took it out twice (reason 1 and leafOf)
/// W_E would saturate to 0 and any refusal would void the PASS. Set-up: 9 honest auditors of X TRUST, a
/// 2-segment PASS session, 8 refusers of 100 TRUST (busy elsewhere), a one-segment appeal (6 honest seated,
/// then the draw fails); W_R = 800, W_E = 6 X + 800.
/// Measured (command below): X = 133: W_E 1,598 < 1,600, REFUSED; X = 134: W_E 1,604, UNFILLABLE. The
/// boundary is exact with the provider's 5,000 out of W_E once: HELD.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review21*' -vv`.
contract Review21ProviderWeightOutOfEligible is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    function _refuser(uint256 i) internal pure returns (address) {
        return address(uint160(0x21B00000 + i));
    }

    function _join(address a, uint256 amount) internal {
        _joinTier(a, 1, amount);
    }

    function _run(uint256 honestStake) internal returns (IAppealModule.Round memory rd) {
        _deployAppeals();
        _join(provider, 5000e18);
        _addAuditors(1, 9, honestStake);
        _nextEpoch();
        uint256 sid = _passedSession(2, FEE);
        for (uint256 i = 0; i < 8; ++i) {
            _join(_refuser(i), 100e18);
        }
        _nextEpoch();
        uint256[] memory named = new uint256[](1);
        assertTrue(appeals.quote(sid, named).refusalsCharged, "setup: charged");
        uint256 round = _appeal(sid, named);
        for (uint256 i = 0; i < 8; ++i) {
            _busyElsewhere(_refuser(i), 0);
        }
        _drawRound(sid, round);
        rd = appeals.roundOf(sid, round);
        emit log_named_uint("drawn seats", rd.drawnSeats);
        emit log_named_uint("refused", rd.refused ? 1 : 0);
        assertTrue(
            rd.status == IAuditSessions.Status.Cancelled && rd.refusalsCharged, "setup: charged, failed"
        );
        assertEq(rd.drawnSeats, 6, "setup: 6 honest seated");
    }

    function test_ProviderOutOnceRefused() public {
        assertTrue(_run(133e18).refused, "W_R 800 > W_E / 2 = 799: REFUSED");
    }

    function test_ProviderOutOnceUnfillable() public {
        assertTrue(!_run(134e18).refused, "W_R 800 < W_E / 2 = 802: UNFILLABLE");
    }
}
