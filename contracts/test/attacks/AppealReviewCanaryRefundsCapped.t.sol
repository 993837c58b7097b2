// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";

/// @notice Property: canary refunds never take more from the Treasury than the allowance its owner gave the
/// canary module, go to the session's provider (never to the operator that reveals), and never block a
/// reveal when the allowance is spent. Attack: reveal canaries (as a relayer holding the salts, or as the
/// operator) to drain the Treasury, or to have the refund paid to oneself. A relayer cannot reveal at all:
/// only the committing operator may.
contract AppealReviewCanaryRefundsCappedTest is AppealsFixture {
    /// @dev Opens sessions the stake premise (outside review 22) refuses at the fixture's minimum: this world
    /// measures something else (see the fixture's `stakePremiseWaived`).
    constructor() {
        stakePremiseWaived = true;
    }

    uint256 internal constant ALLOWANCE = 5e18;
    address internal constant RELAYER = address(0xBEEF);

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
        vm.prank(owner);
        treasury.setSpender(address(canaries), ALLOWANCE);
    }

    function test_CanaryRefundsCappedByAllowance() public {
        uint256 sid = sessions.sessionCount() + 1;
        bytes32[] memory c = new bytes32[](2); // 20 segments at 10%
        c[0] = _canaryCommitment(sid, 3, 2);
        c[1] = _canaryCommitment(sid, 11, 1);
        _openReady(20, 1, c);
        _voteRound0(sid, 1 << 3, 0, 0);
        vm.roll(block.number + 1);
        uint256 treasuryBefore = token.balanceOf(address(treasury));
        uint256 providerBefore = token.balanceOf(provider);
        vm.prank(RELAYER);
        vm.expectRevert(abi.encodeWithSelector(ICanaryModule.NotCanaryOperator.selector, RELAYER));
        canaries.revealCanary(
            sid, ICanaryModule.CanaryReveal({slot: 0, index: 3, verdict: 2, salt: _canarySalt(sid, 3)})
        );
        _revealCanary(sid, 0, 3, 2); // due 3 R / 4 = 4.5: paid 4.5
        _revealCanary(sid, 1, 11, 1); // due 4.5: paid 0.5, the rest of the allowance; the reveal stands
        ICanaryModule.CanaryState memory st = canaries.canariesOf(sid);
        assertEq(st.revealed, 2, "both revealed");
        assertEq(st.refundDue, 3 * R / 2, "due k R * 25% each");
        assertEq(st.refundPaid, ALLOWANCE, "paid no more than the allowance");
        assertEq(
            token.balanceOf(address(treasury)), treasuryBefore - ALLOWANCE, "treasury lost the allowance"
        );
        assertEq(token.balanceOf(provider), providerBefore + ALLOWANCE, "to the provider");
        assertEq(token.balanceOf(RELAYER), 0, "nothing to the relayer");
        assertEq(token.balanceOf(canaryOperator), 0, "nothing to the operator");
        assertEq(treasury.allowanceOf(address(canaries)), 0, "allowance spent");
        _closeAndSettle(sid);
    }

    /// @dev Review finding 3: `setParams` refuses a refund above 2500 bps of k R (the Treasury's 20% share of
    /// the least fee that covers the canary's seats), and accepts 2500.
    function test_RefundAbove2500BpsRefused() public {
        IAppealModule.AppealParams memory p = _appealParams();
        p.canaryRefundBps = 2501;
        assertTrue(!escrow.validParams(p), "2501 invalid");
        vm.prank(owner);
        vm.expectRevert(IAppealModule.InvalidParams.selector);
        escrow.setParams(p);
        p.canaryRefundBps = 2500;
        vm.prank(owner);
        escrow.setParams(p);
    }

    /// @dev The refund of a revealed canary never exceeds what it cost a provider whose own auditors hold its
    /// seats (they get k R back): the least fee covering k seats minus k R, whatever k, R and the rate.
    function testFuzz_RefundNeverAboveCanaryCost(uint8 k, uint96 reward, uint16 bps) public pure {
        uint256 seats = bound(k, 1, 31);
        uint256 r = bound(reward, 1, 1e24);
        uint256 rate = bound(bps, 0, 2500);
        uint256 fee = (seats * r * 10_000 + 7999) / 8000; // the least fee whose 80% pool covers the seats
        assertTrue(fee * 8000 / 10_000 >= seats * r, "fee covers the seats");
        assertTrue(seats * r * rate / 10_000 <= fee - seats * r, "refund within the canary's cost");
    }
}
