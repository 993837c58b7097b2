// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";

/// @title NoRerollAfterRandomnessFixed (issue 12, attack 5: provider re-roll)
/// @notice Property: once a session's randomness target is fixed, cancelling or abandoning it
/// costs the provider the whole fee, and the auditors drawn into it are paid for their locked time.
/// @dev Sixteen tier-0 auditors of 1,000 TRUST; one of them is the provider's friend (1/16 of the
/// weight). The provider opens one-segment sessions for a 100 TRUST fee and wants its friend on
/// the seat. It re-rolls every session whose draw does not seat the friend, either by simulating
/// the draw once its randomness is determined and cancelling (falling back to abandoning when the
/// protocol refuses the cancel), or by letting the draw happen and withholding the keys.
/// Measured (`forge test --match-path 'contracts/test/attacks/*' -vv`):
/// cancel: v1 (130a947) 3 re-rolls cost 60 of 300 TRUST (240 refunded); v2 there is no cancel (the
/// call reverts), so the provider abandons: 18 re-rolls cost 1,800 of 1,800 TRUST (0 refunded), 18 of 18
/// drawn auditors paid. Withheld keys: v1 7 re-rolls cost 140 of 700 TRUST (560 refunded), 7 of 7 drawn
/// auditors paid nothing; v2 18 re-rolls cost 1,800 of 1,800 TRUST (0 refunded), 0 of 18 unpaid.
contract NoRerollAfterRandomnessFixed is AttackBase {
    uint256 internal constant FEE = 100e18;
    uint256 internal constant MAX_TRIES = 100;

    address internal friend;
    uint256 internal rerolls;
    uint256 internal refunded; // tokens the provider got back from re-rolled sessions
    uint256 internal auditorsUnpaid; // drawn auditors of abandoned sessions paid nothing
    uint256 internal auditorsDrawn; // drawn auditors of abandoned sessions

    function setUp() public {
        _deployProtocol();
        friend = _newAuditor(0, 1000e18);
        for (uint256 i = 0; i < 15; ++i) {
            _newAuditor(0, 1000e18);
        }
    }

    function _openOne() internal returns (uint256) {
        return _openUniform(1, 0, FEE);
    }

    function _friendSeated(uint256 sid) internal view returns (bool) {
        return _seatsOf(sid, friend).length > 0;
    }

    /// @dev The provider's simulation of a draw whose randomness is determined.
    function _friendWouldBeDrawn(uint256 sid) internal returns (bool seated) {
        _simulate();
        _drawAll(sid);
        seated = _friendSeated(sid);
        _endSimulation();
    }

    /// @dev Abandon `sid`, settle whoever was drawn, and count refunds and unpaid seats.
    function _dropSession(uint256 sid, bool tryCancelFirst) internal {
        uint256 before = _balance(_provider());
        if (!tryCancelFirst || !_tryCancel(sid)) _abandon(sid);
        refunded += _balance(_provider()) - before;
        _settleAll(sid);
        address[] memory drawn = _auditorsOf(sid);
        for (uint256 i = 0; i < drawn.length; ++i) {
            ++auditorsDrawn;
            if (results[sid][drawn[i]].reward == 0) ++auditorsUnpaid;
        }
        ++rerolls;
    }

    function _verdict(string memory how) internal {
        emit log_named_uint("re-rolls until the friend was drawn", rerolls);
        _logTrust("fee per session", FEE);
        _logTrust("refunded to the provider", refunded);
        _logTrust("cost of all re-rolls", rerolls * FEE - refunded);
        emit log_named_uint("auditors drawn into abandoned sessions", auditorsDrawn);
        emit log_named_uint("of them paid nothing", auditorsUnpaid);
        assertTrue(
            refunded == 0 && auditorsUnpaid == 0,
            string.concat(
                "NoRerollAfterRandomnessFixed: ",
                how,
                " ",
                _u(rerolls),
                " times until its friend was drawn; the re-rolls cost it ",
                _trust(rerolls * FEE - refunded),
                " of ",
                _trust(rerolls * FEE),
                " in fees (",
                _trust(refunded),
                " refunded); ",
                _u(auditorsUnpaid),
                " of ",
                _u(auditorsDrawn),
                " auditors drawn into abandoned sessions were paid nothing"
            )
        );
    }

    /// @notice Simulate the draw after the randomness is determined, cancel, re-open.
    function test_cancelAfterTheSeedIsKnownCostsTheWholeFee() public {
        bool friendly = false;
        for (uint256 i = 0; i < MAX_TRIES && !friendly; ++i) {
            uint256 sid = _openOne();
            _waitForRandomness(sid);
            friendly = _friendWouldBeDrawn(sid);
            if (!friendly) _dropSession(sid, true);
        }
        assertTrue(friendly, "setup: the friend was never drawn");
        _verdict("the provider simulated each draw once its randomness was fixed and cancelled");
    }

    /// @notice Let the draw happen, withhold the keys when the friend is not drawn, re-open.
    function test_withholdingKeysCostsTheWholeFeeAndPaysTheDrawn() public {
        bool friendly = false;
        for (uint256 i = 0; i < MAX_TRIES && !friendly; ++i) {
            uint256 sid = _openOne();
            _drawAll(sid);
            friendly = _friendSeated(sid);
            if (!friendly) _dropSession(sid, false);
        }
        assertTrue(friendly, "setup: the friend was never drawn");
        _verdict("the provider withheld the keys after the draw");
    }
}
