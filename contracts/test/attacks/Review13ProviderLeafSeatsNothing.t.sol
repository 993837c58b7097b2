// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review13ProviderLeafSeatsNothing (outside review 13 of 47db2d1; holds)
/// @notice Property (`DrawModule._decisiveRefusals`, `refusals_decide`): the live member count a failed
/// appeal draw is judged by excludes the provider, who can sit on no panel of its own session: a provider
/// that is itself a live member of the tier adds no capacity, so its leaf cannot turn a live shortage into
/// REFUSED (a correct PASS voided) any more than a dead leaf can.
/// Setup: 9 tier-1 auditors of 1,000 TRUST plus the provider registered and staked (1,000 TRUST) in tier
/// 1, one dead leaf (review 11), k_0 = 3, 2 correct PASS segments, one honest auditor busy (one who sat on
/// no round-0 panel of segment 0, so it refuses a lock rather than being excluded as earlier). Admission:
/// 11 leaves - the provider's - 3 round-0 auditors = 7 >= 7, admitted. The draw finds 10 live members, the
/// provider (excluded for the panel) among them: 9 - 3 = 6 < 7 eligible, the busy one refuses, the draw
/// fails.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review13ProviderLeaf*' -vv`): 5 of 7
/// seats drawn, UNFILLABLE (not refused), segment 0 PASS, score 10,000 bps. Mutation (tried locally, then
/// reverted): `if (a == job.provider) --members;` -> no decrement makes the draw count 10 >= 3 + 7 and
/// end REFUSED (the test fails "UNFILLABLE: the provider's live leaf seats nothing"); review 11's tests
/// (Review11*, the fuzz included) all pass under that mutation.
contract Review13ProviderLeafSeatsNothing is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal sid;

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 9, STAKE);
        vm.startPrank(provider);
        registry.register(1, uint64(1) << 1, keccak256(abi.encode("x25519", provider)));
        token.approve(address(stakingContract), type(uint256).max);
        staking.stake(provider, STAKE);
        vm.stopPrank();
        address dead = vm.addr(0x5B00);
        _deadLeaf(dead);
        _nextEpoch();
        sid = _passedSession(2, FEE);
        address busy = _notOnSegment0();
        _busyElsewhere(busy, 7e18);
    }

    /// @dev An auditor who sat on no round-0 panel of segment 0 (so its refusal is a lock refusal).
    function _notOnSegment0() internal view returns (address) {
        for (uint256 i = auditorAddrs.length; i > 0; --i) {
            if (!_seatedOn(sid, auditorAddrs[i - 1], 0)) return auditorAddrs[i - 1];
        }
        revert("no such auditor");
    }

    /// @notice Review 13's rule: admission counts live leaves without the provider's (`_members`, via
    /// `ISortition.liveCountAtExcept`), so the round is refused up front (6 eligible < 7; was: admitted,
    /// UNFILLABLE at the draw, the PASS standing).
    function test_ProviderLeafAddsNoCapacity() public {
        assertEq(drawModule.seatsOf(sid, 0, provider).length, 0, "the provider sat on no round-0 panel");
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 6, 7)
        );
        appeals.quote(sid, _segs(0));
    }
}
