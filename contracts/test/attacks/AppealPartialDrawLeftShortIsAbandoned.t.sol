// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title AppealPartialDrawLeftShortIsAbandoned (consistency with round 0's DrawAbandoned)
/// @notice Property (docs/appeals-canaries.md, ABANDONED; outside review 6's "looking at the seed and walking
/// away is never free"): an appeal round whose draw was started and then left short past its draw deadline
/// costs the appellant its bond, as a round nobody drew does, and as round 0's DrawAbandoned costs the
/// provider its fee. Only a draw that fails (the tier ran out of eligible weight) is refunded.
/// Attack (on main 481282f): `AppealModule._sync` ended a Drawing round left short past its deadline
/// Cancelled (UNFILLABLE: bond back minus R per drawn seat). Once the seed is public the whole panel can be
/// simulated; an appellant who dislikes it draws one call's worth (a call completes whole segments) and
/// walks away. Measured (`scripts/forge test --match-path
/// 'contracts/test/attacks/AppealPartialDrawLeftShort*' -vv`): two segments appealed (bond 84 TRUST, 14
/// seats), one call drew segment 0's 7 seats, the round lapsed: on 481282f the appellant lost 42 TRUST (7 R)
/// of its 84 and the contested PASSes stood; now the round reads Expired drawn short (ABANDONED), the
/// appellant loses the whole 84 (R per drawn seat to those seats, the rest to the pot), and the PASSes
/// stand, as they did.
contract AppealPartialDrawLeftShortIsAbandoned is AppealsFixture {
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);
    event log_named_uint(string key, uint256 val);

    uint256 internal constant PASS = 1;
    uint256 internal sid;

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.canaryRateBps = 0;
    }

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        sid = _open(_uniform(2, 1), FEE);
        _commitCanaries(sid, new bytes32[](0));
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 0, 0, 0); // both PASS
        vm.roll(block.number + 1);
        _toAppealWindow(sid);
    }

    function test_DrawLeftShortForfeitsTheBond() public {
        uint256 before = token.balanceOf(appellant);
        uint256 round = _appeal(sid, _segs(0, 1));
        uint256 bond = before - token.balanceOf(appellant);
        emit log_named_decimal_uint("bond (TRUST)", bond, 18);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        appeals.drawPanel(sid, round, 1); // one call: segment 0's 7 seats
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        emit log_named_uint("seats drawn before walking away", rd.drawnSeats);
        assertTrue(rd.drawnSeats == 7 && rd.status == IAuditSessions.Status.Drawing, "setup: drawn short");
        vm.roll(uint256(rd.drawDeadline) + 1);
        appeals.advance(sid);
        rd = appeals.roundOf(sid, round);
        assertTrue(
            rd.status == IAuditSessions.Status.Expired && !rd.refused, "Expired drawn short: ABANDONED"
        );
        assertEq(_outcomeOf(sid, 0), PASS, "the contested PASS stands");
        assertEq(_outcomeOf(sid, 1), PASS, "the contested PASS stands");
        _closeAndSettle(sid);
        uint256 lost = before - token.balanceOf(appellant);
        emit log_named_decimal_uint("appellant's net loss (TRUST)", lost, 18);
        assertEq(lost, bond, "walking away after a glimpse costs the whole bond");
    }
}
