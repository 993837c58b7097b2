// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";

/// @title CommissionFixedAtDraw (issue 12, attack 4: retroactive commission)
/// @notice Property: the commission in force when the auditor was drawn applies to that
/// session's reward.
/// @dev The only tier-0 auditor (1,000 TRUST of its own, 1,000 delegated) works a session at 0%
/// commission and earns 8 x 6 = 48 TRUST. Once the outcome is final it raises its commission to
/// the 20% maximum and lets the session wait, unsettled, until the raise is in force.
/// Measured (`forge test --match-path 'contracts/test/attacks/*' -vv`):
/// v1 (130a947) the raise to 20% took 9.6 TRUST of the 48 TRUST reward earned at 0%; v2 0 TRUST
/// (the delegator gained 24 TRUST, its half of the 48).
contract CommissionFixedAtDraw is AttackBase {
    address internal auditor;
    address internal delegator;

    function setUp() public {
        _deployProtocol();
        auditor = _newAuditor(0, 1000e18);
        delegator = _newAccount();
        _stake(delegator, auditor, 1000e18);
    }

    function test_commissionRaisedAfterTheWorkDoesNotApply() public {
        uint256 sid = _openUniform(8, 0, 0);
        _drawAll(sid);
        assertEq(_seatsOf(sid, auditor).length, 8, "setup: the auditor holds every seat");
        _publishKeys(sid);
        _castVotes(sid, address(0), 0, false);
        _finalize(sid);

        uint256 raised = _config().maxCommissionBps;
        _setCommission(auditor, raised);
        _waitSeconds(_config().commissionDelay);
        uint256 walletBefore = _balance(auditor);
        uint256 delegatorBefore = _valueOf(delegator, auditor);
        _settleAll(sid);
        uint256 commission = _balance(auditor) - walletBefore;
        uint256 reward = results[sid][auditor].reward;
        _logTrust("reward earned at 0% commission", reward);
        emit log_named_uint("commission raised to (bps) after the work", raised);
        _logTrust("commission paid to the auditor", commission);
        _logTrust("delegator's gain", _valueOf(delegator, auditor) - delegatorBefore);
        assertEq(
            commission,
            0,
            string.concat(
                "CommissionFixedAtDraw: a commission raise to ",
                _pct(raised * 1e14),
                " in force only after the work took ",
                _trust(commission),
                " of a ",
                _trust(reward),
                " reward earned at 0%"
            )
        );
    }
}
