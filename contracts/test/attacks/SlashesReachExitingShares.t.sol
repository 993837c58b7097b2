// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";

/// @title SlashesReachExitingShares (issue 12, attack 3b: the auditor redeems before its slash)
/// @notice Property: a withdrawal cannot leave before the slashes it is exposed to are applied, so
/// each holder at the draw bears its pro-rata part of the session's slash.
/// @dev The only tier-0 auditor stakes 1,000 TRUST and a delegator 3,100 TRUST. The auditor holds
/// all 8 seats and never votes, so all 8 are slashed (8 x 8 = 64 TRUST). Knowing it, the auditor
/// redeems 900 TRUST of its shares before settlement, keeping the 100 TRUST minimum stake.
/// Measured (`forge test --match-path 'contracts/test/attacks/*' -vv`):
/// v1 (130a947) the delegator absorbed 62 of the 64 TRUST slash (pro rata 48.390243); v2
/// 48.390243902439024391 TRUST (pro rata 48.390243902439024390), and the auditor's early
/// redemption paid 885.951219 TRUST for 900 TRUST of shares (it bore its part).
contract SlashesReachExitingShares is AttackBase {
    uint256 internal constant OWN = 1000e18;
    uint256 internal constant DELEGATED = 3100e18;
    uint256 internal constant TOLERANCE = 1e9; // wei of share rounding

    address internal auditor;
    address internal delegator;

    function setUp() public {
        _deployProtocol();
        auditor = _newAuditor(0, OWN);
        delegator = _newAccount();
        _stake(delegator, auditor, DELEGATED);
    }

    function test_exitingSharesBearTheSlashTheyWereExposedTo() public {
        uint256 sid = _openUniform(8, 0, 0);
        _drawAll(sid);
        assertEq(_seatsOf(sid, auditor).length, 8, "setup: the auditor holds every seat");
        _publishKeys(sid);
        uint256 delegatorAtDraw = _valueOf(delegator, auditor);
        uint256 auditorAtDraw = _valueOf(auditor, auditor);

        assertTrue(
            _requestWithdrawal(auditor, auditor, auditorAtDraw - _config().minStake),
            "setup: the auditor's withdrawal request was refused"
        );
        _castVotes(sid, auditor, 0, true);
        _finalize(sid);
        _settleAll(sid);
        uint256 auditorOut = _claimWithdrawals(auditor);

        uint256 slashed = results[sid][auditor].slashed;
        uint256 delegatorLoss = delegatorAtDraw - _valueOf(delegator, auditor);
        uint256 fair = slashed * delegatorAtDraw / (delegatorAtDraw + auditorAtDraw);
        _logTrust("slash", slashed);
        _logTrust("auditor's redemption requested before settlement", auditorOut);
        _logTrust("delegator's loss", delegatorLoss);
        _logTrust("delegator's pro-rata part at the draw", fair);
        assertLe(
            delegatorLoss,
            fair + TOLERANCE,
            string.concat(
                "SlashesReachExitingShares: the auditor redeemed ",
                _trust(auditorOut),
                " before its ",
                _trust(slashed),
                " slash was applied; its delegator absorbed ",
                _trust(delegatorLoss),
                " (pro rata at the draw: ",
                _trust(fair),
                ")"
            )
        );
    }
}
