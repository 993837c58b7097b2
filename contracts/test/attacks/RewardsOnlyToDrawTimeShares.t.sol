// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";

/// @title RewardsOnlyToDrawTimeShares (issue 12, attack 3a: stake before settle, withdraw after)
/// @notice Property: a session's rewards fall on the shares that backed the auditor when it was
/// drawn; shares bought later get none of them.
/// @dev The only tier-0 auditor (1,000 TRUST of its own) holds all 8 seats of a session and earns
/// 8 x 6 = 48 TRUST. After the outcome is final and before anyone settles, a sniper buys 47,000
/// TRUST of its pool, lets the session settle, and redeems everything at once.
/// Measured (`forge test --match-path 'contracts/test/attacks/*' -vv`):
/// v1 (130a947) the sniper took 46.999999 of the 48 TRUST, the holders at the draw kept 1; v2 the
/// sniper got 0 (46,999.999999 back for 47,000), the holders at the draw kept 48.
contract RewardsOnlyToDrawTimeShares is AttackBase {
    uint256 internal constant DEPOSIT = 47_000e18;

    address internal auditor;
    address internal sniper;

    function setUp() public {
        _deployProtocol();
        auditor = _newAuditor(0, 1000e18);
        sniper = _newAccount();
    }

    function test_sharesBoughtAfterTheDrawGetNoneOfItsReward() public {
        uint256 sid = _openUniform(8, 0, 0);
        _drawAll(sid);
        assertEq(_seatsOf(sid, auditor).length, 8, "setup: the auditor holds every seat");
        _publishKeys(sid);
        _castVotes(sid, address(0), 0, false);
        _finalize(sid);
        uint256 holdersBefore = _valueOf(auditor, auditor);

        _stake(sniper, auditor, DEPOSIT);
        _settleAll(sid);
        uint256 received = _exitAll(sniper, auditor);

        uint256 earned = results[sid][auditor].reward - results[sid][auditor].commission;
        uint256 taken = received > DEPOSIT ? received - DEPOSIT : 0;
        uint256 kept = _valueOf(auditor, auditor) - holdersBefore;
        _logTrust("reward the session earned (net of commission)", earned);
        _logTrust("sniper deposit after the draw", DEPOSIT);
        _logTrust("sniper received on exit", received);
        _logTrust("sniper's gain", taken);
        _logTrust("gain of the holders at the draw", kept);
        assertLe(
            received,
            DEPOSIT,
            string.concat(
                "RewardsOnlyToDrawTimeShares: a sniper who bought ",
                _trust(DEPOSIT),
                " of the pool after the draw and exited right after settlement took ",
                _trust(taken),
                " of the ",
                _trust(earned),
                " the session earned; the holders at the draw kept ",
                _trust(kept)
            )
        );
    }
}
