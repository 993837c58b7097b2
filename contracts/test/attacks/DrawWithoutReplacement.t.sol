// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";

/// @title DrawWithoutReplacement (issue 12, attack 6: spurious cancels)
/// @notice Property: ineligible weight leaves the draw, so a session is cancelled only when the
/// eligible weight truly cannot fill its seats.
/// @dev Tier 1 (3 seats per segment) has one whale of 15,000 TRUST and three auditors of 100
/// TRUST: four eligible auditors for three seats, so every one-segment session can be filled. Once
/// the whale holds a seat, each draw attempt that lands on it again is a rejection.
/// Measured (`forge test --match-path 'contracts/test/attacks/*' -vv`):
/// v1 (130a947) 5 of 5 one-segment sessions cancelled (whale 98.03% of the weight); v2 0 of 5.
contract DrawWithoutReplacement is AttackBase {
    uint256 internal constant SESSIONS = 5;

    address internal whale;

    function setUp() public {
        _deployProtocol();
        whale = _newAuditor(1, 15_000e18);
        for (uint256 i = 0; i < 3; ++i) {
            _newAuditor(1, 100e18);
        }
    }

    function test_fourEligibleAuditorsAlwaysFillThreeSeats() public {
        uint256 share = _weightShare(whale);
        uint256 cancelled = 0;
        for (uint256 i = 0; i < SESSIONS; ++i) {
            uint256 sid = _openUniform(1, 1, 0);
            _drawAll(sid);
            if (_drawFailed(sid)) ++cancelled;
            else _abandon(sid);
            _settleAll(sid); // frees the locked stake
        }
        emit log_named_string("whale's weight share", _pct(share));
        emit log_named_uint("one-segment sessions", SESSIONS);
        emit log_named_uint("cancelled by the draw", cancelled);
        assertEq(
            cancelled,
            0,
            string.concat(
                "DrawWithoutReplacement: with 4 eligible auditors for 3 seats (whale ",
                _pct(share),
                " of the weight), ",
                _u(cancelled),
                " of ",
                _u(SESSIONS),
                " one-segment sessions were cancelled for lack of auditors"
            )
        );
    }
}
