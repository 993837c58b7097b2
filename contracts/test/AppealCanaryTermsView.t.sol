// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "./utils/AppealsFixture.sol";
import {IAppealModule} from "../src/interfaces/IAppealModule.sol";

/// @title AppealCanaryTermsView
/// @notice `canaryRateOf` / `canaryTermsOf` (the canary module's cheap read of a session's pinned canary
/// terms) equal `paramsOf`'s fields for sessions under several parameter versions, through the settlement
/// and through the appeal module, and cost a fraction of `paramsOf` (which recomputes `maxRounds`).
contract AppealCanaryTermsView is AppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256[] internal _sids;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 6, STAKE);
        _nextEpoch();
    }

    function _version(uint16 rateBps, uint16 refundBps) internal {
        IAppealModule.AppealParams memory p = _appealParams();
        p.canaryRateBps = rateBps;
        p.canaryRefundBps = refundBps;
        vm.prank(owner);
        escrow.setParams(p);
    }

    function _check(uint256 sid) internal view {
        IAppealModule.AppealParams memory p = escrow.paramsOf(sid);
        assertEq(escrow.canaryRateOf(sid), p.canaryRateBps, "settlement: rate");
        assertEq(appeals.canaryRateOf(sid), p.canaryRateBps, "module: rate");
        (uint256 rate, uint256 refund) = escrow.canaryTermsOf(sid);
        assertEq(rate, p.canaryRateBps, "settlement terms: rate");
        assertEq(refund, p.canaryRefundBps, "settlement terms: refund");
        (rate, refund) = appeals.canaryTermsOf(sid);
        assertEq(rate, p.canaryRateBps, "module terms: rate");
        assertEq(refund, p.canaryRefundBps, "module terms: refund");
    }

    function test_CanaryRateOfEqualsParamsOfUnderEveryVersion() public {
        uint16[4] memory rates = [uint16(0), 3000, 1000, 250];
        uint16[4] memory refunds = [uint16(2500), 0, 1234, 2500];
        _sids.push(_open(_uniform(3, 1), FEE)); // version 0 (the fixture's: 1000 bps, 2500 bps)
        for (uint256 v = 0; v < rates.length; ++v) {
            _version(rates[v], refunds[v]);
            _sids.push(_open(_uniform(3, 1), FEE));
            _sids.push(_open(_uniform(5, 1), FEE));
        }
        for (uint256 i = 0; i < _sids.length; ++i) {
            _check(_sids[i]);
        }
        assertEq(escrow.canaryRateOf(_sids[0]), 1000, "version 0 pinned");
        assertEq(escrow.canaryRateOf(_sids[1]), 0, "version 1 pinned");
        assertEq(escrow.canaryRateOf(_sids[3]), 3000, "version 2 pinned");
        assertEq(escrow.canaryRateOf(_sids[_sids.length - 1]), 250, "latest version");
        _check(_sids[_sids.length - 1] + 1); // not opened yet: the version it would open under
    }

    /// @notice The figure behind the view: gas of `paramsOf` and of `canaryRateOf` through the appeal module.
    function test_CanaryRateOfIsCheaperThanParamsOf() public {
        uint256 sid = _open(_uniform(3, 1), FEE);
        uint256 g = gasleft();
        appeals.canaryRateOf(sid); // first: its slots cold, paramsOf's warm after it
        uint256 cheap = g - gasleft();
        g = gasleft();
        appeals.paramsOf(sid);
        uint256 full = g - gasleft();
        g = gasleft();
        appeals.canaryTermsOf(sid);
        uint256 terms = g - gasleft();
        emit log_named_uint("gas: appeals.paramsOf(sid)", full);
        emit log_named_uint("gas: appeals.canaryRateOf(sid)", cheap);
        emit log_named_uint("gas: appeals.canaryTermsOf(sid)", terms);
        assertTrue(cheap * 4 < full, "canaryRateOf costs under a quarter of paramsOf");
    }
}
