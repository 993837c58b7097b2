// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";

/// @title Review22EarlierAuditorsLeaveToVeto (outside review 22 of 0f4112d, open)
/// @notice Property (docs/appeals-canaries.md "Who counts": "A segment's eligible is that live count minus
/// every seat of its earlier panels, as if every earlier auditor were still live, so a provider's round-0
/// accounts cannot veto an appeal by leaving"; `_checkOne`'s comment says the same).
/// Attack: E = members - earlierSeats(k_0, d). An earlier-panel auditor of the segment that leaves (deregisters;
/// its round-0 locks stay) before the appeal's snapshot epoch lowers `members` by one while earlierSeats stays,
/// so E drops by one per leaver although the auditors who can sit on the segment (live, not on its earlier
/// panels) are exactly as many as before. Whoever holds round-0 seats of a contested PASS - the accounts that
/// voted it - can so (1) make a marginal tier's appeal NotEnoughEligibleAuditors (a veto: the wrong PASS
/// cannot be appealed at all), (2) turn a charged appeal uncharged (the honest appellant's requireCharged call
/// reverts RefusalsNotCharged; with the 3-argument call a busy honest minority then ends it UNFILLABLE),
/// (3) lower a capped round's capacity by about seatCap / 2 per leaver.
/// Measured (`scripts/forge test --match-path 'contracts/test/attacks/Review22EarlierAuditors*' -vv`), k_0 = 3,
/// one-segment PASS sessions, the leavers two of segment 0's three round-0 auditors (deregistered, next
/// epoch): (1) 10 members: before, quote E 7 = k_1, admitted; after, members 8, NotEnoughEligibleAuditors(sid,
/// 0, 5, 7) while 7 live auditors sat on no panel of the segment (the control draws them: 7 of 7). (2) 17
/// members: before E 14, charged; after members 15, appeal(.., requireCharged) reverts RefusalsNotCharged(sid,
/// 12, 14) while 14 live auditors are eligible. The leavers' cost: none measurable here (their round-0 seats
/// keep their locks and rewards; they may rejoin after the window).
/// Severity: MEDIUM in thin tiers (the accounts behind a wrong PASS veto or de-charge its appeal for free),
/// nil in tiers with slack. The admission error is conservative for (a): E never exceeds the true count.
/// Fix proposal: count the earlier-panel auditors still live instead of assuming all are: for each named
/// segment E_s = members - (its earlier-panel auditors with weight in the round's snapshot), bounded reads
/// (k_0 + ... + k_d <= 120 seat words per segment, the draw's `_satBefore` data), round E = min over the
/// named segments; or, if that gas is unwanted, drop the claim from the doc and `_checkOne`'s comment and
/// state the veto as a trade-off.
contract Review22EarlierAuditorsLeaveToVeto is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    /// @dev `members` auditors, a 1-segment PASS session; `leavers` of segment 0's round-0 auditors leave
    /// (live count from the next epoch, which this moves to).
    function _setUp(uint256 members, uint256 leavers) internal returns (uint256 sid) {
        (sid,) = _setUpGone(members, 1, leavers);
    }

    /// @dev `_setUp` with `segments` segments; returns the leavers, sorted (seated on segment 0, and on no
    /// other segment when there are several).
    function _setUpGone(uint256 members, uint256 segments, uint256 leavers)
        internal
        returns (uint256 sid, address[] memory gone)
    {
        sid = _setUpPassedSession(members, segments, FEE);
        gone = new address[](leavers);
        uint256 n = 0;
        for (uint256 i = 0; i < auditorAddrs.length && n < leavers; ++i) {
            address a = auditorAddrs[i];
            if (!_seatedOn(sid, a, 0) || (segments > 1 && _seatedOn(sid, a, 1))) continue;
            vm.prank(a);
            registry.deregister();
            gone[n++] = a;
        }
        assertEq(n, leavers, "setup: leavers");
        _nextEpoch();
        uint256 epoch = block.number / EPOCH_BLOCKS + 1;
        assertEq(_sortition().liveCountAtExcept(1, epoch, provider), members - leavers, "setup: live count");
        gone = _sorted(gone);
    }

    function _sorted(address[] memory a) internal pure returns (address[] memory) {
        for (uint256 i = 1; i < a.length; ++i) {
            for (uint256 j = i; j > 0 && a[j] < a[j - 1]; --j) {
                (a[j], a[j - 1]) = (a[j - 1], a[j]);
            }
        }
        return a;
    }

    function _two(address a, address b) internal pure returns (address[] memory l) {
        l = new address[](2);
        (l[0], l[1]) = a < b ? (a, b) : (b, a);
    }

    /// @dev A round-0 auditor of segment 0 still live (weight in the current snapshot).
    function _liveSeated(uint256 sid) internal view returns (address) {
        uint256 epoch = block.number / EPOCH_BLOCKS + 1;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            (, uint256 leaf) = _sortition().leafOf(1, a);
            if (_seatedOn(sid, a, 0) && _sortition().leafWeightAt(1, epoch, leaf) != 0) return a;
        }
        revert("no live seated auditor");
    }

    /// @dev Fixed: the two proven leavers keep E at 7 = k_1; the round is admitted and draws 7 of 7.
    function test_ProvenLeaversCannotVetoTheAppeal() public {
        (uint256 sid, address[] memory gone) = _setUpGone(10, 1, 2);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0), gone);
        assertEq(q.totalSeats, 7, "7 live auditors sat on no panel of segment 0: admitted");
        vm.prank(appellant);
        uint256 round = appeals.appeal(sid, _segs(0), type(uint256).max, false, gone);
        _drawRound(sid, round);
        assertEq(appeals.roundOf(sid, round).drawnSeats, 7, "drawn in full");
    }

    /// @dev Fixed: 17 members, two proven leavers: E 14 = 2 k_1, charged; the requireCharged appeal opens.
    function test_ProvenLeaversCannotUnchargeTheAppeal() public {
        (uint256 sid, address[] memory gone) = _setUpGone(17, 1, 2);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0), gone);
        assertTrue(q.refusalsCharged, "14 live eligible auditors = 2 k_1: charged");
        vm.prank(appellant);
        uint256 round = appeals.appeal(sid, _segs(0), type(uint256).max, true, gone);
        assertTrue(appeals.roundOf(sid, round).refusalsCharged, "round charged");
    }

    /// @dev Attack: naming a round-0 auditor still live (weight in the snapshot) does not raise E.
    function test_LiveLeaverNotCounted() public {
        (uint256 sid, address[] memory gone) = _setUpGone(10, 1, 2);
        address[] memory named = _two(gone[0], _liveSeated(sid));
        // members 8: E = 8 - 3 + 1 = 6 (the live one is not a leaver), not 7.
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 6, 7)
        );
        appeals.quote(sid, _segs(0), named);
    }

    /// @dev Attack: naming addresses that never sat on the segment (no weight, or a deregistered auditor of
    /// no panel) does not raise E.
    function test_NeverSeatedLeaverNotCounted() public {
        (uint256 sid, address[] memory gone) = _setUpGone(10, 1, 2);
        address other;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (!_seatedOn(sid, auditorAddrs[i], 0)) other = auditorAddrs[i];
        }
        vm.prank(other);
        registry.deregister();
        _nextEpoch();
        // members 7: E = 7 - 3 + 1 = 5 with the one real leaver, never 6 or 7.
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 5, 7)
        );
        appeals.quote(sid, _segs(0), _two(gone[0], other));
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 5, 7)
        );
        appeals.quote(sid, _segs(0), _two(gone[0], address(0xDEAD)));
    }

    /// @dev Attack: duplicates, unsorted, too many: refused.
    function test_BadLeaverListsRevert() public {
        (uint256 sid, address[] memory gone) = _setUpGone(10, 1, 2);
        address[] memory dup = new address[](2);
        (dup[0], dup[1]) = (gone[0], gone[0]);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.LeaversNotAscending.selector, gone[0]));
        appeals.quote(sid, _segs(0), dup);
        address[] memory down = new address[](2);
        (down[0], down[1]) = (gone[1], gone[0]);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.LeaversNotAscending.selector, gone[0]));
        appeals.quote(sid, _segs(0), down);
        vm.prank(appellant);
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.LeaversNotAscending.selector, gone[0]));
        appeals.appeal(sid, _segs(0), type(uint256).max, false, down);
        address[] memory many = new address[](129);
        for (uint256 i = 0; i < many.length; ++i) {
            many[i] = address(uint160(i + 1));
        }
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.TooManyLeavers.selector, 129, 128));
        appeals.quote(sid, _segs(0), many);
    }

    /// @dev Attack: leavers proven for segment 0 (seated on 0, not on 1) do not inflate segment 1's E.
    function test_LeaversOfOneSegmentDoNotCountForAnother() public {
        (uint256 sid, address[] memory gone) = _setUpGone(10, 2, 2);
        IAppealModule.Quote memory q = appeals.quote(sid, _segs(0), gone);
        assertEq(q.totalSeats, 7, "segment 0: E 7");
        uint256[] memory both = new uint256[](2);
        both[1] = 1;
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 1, 5, 7)
        );
        appeals.quote(sid, both, gone);
    }

    /// @dev Gas of admission (`quote`) with 0 and 2 leavers (same session, 17 members, 2 left).
    function test_AdmissionGasWithLeavers() public {
        (uint256 sid, address[] memory gone) = _setUpGone(17, 1, 2);
        uint256 g = gasleft();
        appeals.quote(sid, _segs(0));
        emit log_named_uint("quote gas, no leavers", g - gasleft());
        g = gasleft();
        appeals.quote(sid, _segs(0), gone);
        emit log_named_uint("quote gas, 2 leavers", g - gasleft());
    }

    /// @dev Property: whatever the leavers list, E never exceeds the live auditors (weight in the snapshot,
    /// the provider excluded) that sat on no earlier panel of the segment (brute force). E is read from the
    /// refusal (NotEnoughEligibleAuditors: E < 7, RefusalsNotCharged: E < 14), else E >= 14.
    function testFuzz_ProvenLeaversNeverExceedTheTrueCount(uint256 leaveMask, uint256 nameMask, bool stranger)
        public
    {
        uint256 sid = _setUpPassedSession(14, 1, FEE);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if ((leaveMask >> i) & 1 == 1) {
                vm.prank(auditorAddrs[i]);
                registry.deregister();
            }
        }
        _nextEpoch();
        uint256 epoch = block.number / EPOCH_BLOCKS + 1;
        address[] memory named = new address[](auditorAddrs.length + 1);
        uint256 n = 0;
        uint256 truth = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            if ((nameMask >> i) & 1 == 1) named[n++] = a;
            (bool exists, uint256 leaf) = _sortition().leafOf(1, a);
            bool live = exists && _sortition().leafWeightAt(1, epoch, leaf) != 0;
            if (live && a != provider && !_seatedOn(sid, a, 0)) ++truth;
        }
        if (stranger) named[n++] = address(0xDEAD);
        assembly ("memory-safe") {
            mstore(named, n)
        }
        named = _sorted(named);
        uint256 e = 14;
        try appeals.quote(sid, _segs(0), named) {
            vm.prank(appellant);
            try appeals.appeal(sid, _segs(0), type(uint256).max, true, named) {}
            catch (bytes memory err) {
                e = _decodeEligible(err, IAppealModule.RefusalsNotCharged.selector, 36);
            }
        } catch (bytes memory err) {
            e = _decodeEligible(err, IAppealModule.NotEnoughEligibleAuditors.selector, 68);
        }
        assertLe(e, truth, "E <= live auditors on no earlier panel");
    }

    function _decodeEligible(bytes memory err, bytes4 sel, uint256 at) internal pure returns (uint256 e) {
        assertEq(bytes4(err), sel, "expected refusal");
        assembly ("memory-safe") {
            e := mload(add(err, add(32, at)))
        }
    }

    /// @dev Control: today's figures, and the 7 live eligible auditors the vetoed round would have drawn.
    function test_ControlLeaversShrinkEligible() public {
        uint256 sid = _setUp(10, 2);
        vm.expectRevert(
            abi.encodeWithSelector(IAppealModule.NotEnoughEligibleAuditors.selector, sid, 0, 5, 7)
        );
        appeals.quote(sid, _segs(0));
        uint256 fresh = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (!_seatedOn(sid, auditorAddrs[i], 0)) ++fresh;
        }
        emit log_named_uint("live auditors on no panel of segment 0", fresh);
        assertEq(fresh, 7, "7 could sit");

        uint256 sid2 = _setUp(17, 2);
        IAppealModule.Quote memory q = appeals.quote(sid2, _segs(0));
        assertTrue(!q.refusalsCharged, "E 12 < 14: uncharged");
        vm.expectRevert(abi.encodeWithSelector(IAppealModule.RefusalsNotCharged.selector, sid2, 12, 14));
        vm.prank(appellant);
        appeals.appeal(sid2, _segs(0), type(uint256).max, true);
    }

    /// @dev Control: nobody leaves, 10 members: admitted (E 7) and drawn 7 of 7.
    function test_ControlWithoutLeaversDrawsInFull() public {
        uint256 sid = _setUp(10, 0);
        uint256 round = _appeal(sid, _segs(0));
        _drawRound(sid, round);
        assertEq(appeals.roundOf(sid, round).drawnSeats, 7, "drawn in full");
    }
}
