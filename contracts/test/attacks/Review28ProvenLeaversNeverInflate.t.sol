// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {AppealMath} from "../../src/libraries/AppealMath.sol";

/// @title Review28ProvenLeaversNeverInflate (outside review 28 of 59b8d36: proven leavers at admission)
/// @notice Property (AppealAdmission `_checkOne`, docs/appeals-canaries.md "Who counts"): whatever the
/// leavers list, a segment's E_s = members - max(0, earlierSeats - proven_s) never exceeds the live auditors
/// (weight in the round's snapshot, not the provider) that sat on no earlier panel of the segment, and
/// naming every earlier-panel auditor of the segment (the over-inclusive list) makes E exactly that count.
/// Why it holds (read from the code): a tier has one leaf per account for ever (SnapshotSumTree `set`; a
/// re-registration reuses it), so `_gone` (no weight at the snapshot epoch) and `_members` (leaves with
/// weight at that epoch) partition the same accounts; the draw never seats an auditor twice on one segment
/// (DrawModule `_satBefore`: REASON_EARLIER_PANEL) and every opened round raises the depth, so the distinct
/// earlier-panel auditors are at most earlierSeats; `_proven` counts a leaver once (`break`).
/// Attacks tried, each HOLDS here (E read exactly from `appeal(.., requireCharged = true, ..)`'s
/// RefusalsNotCharged / NotEnoughEligibleAuditors, state reverted):
/// (1) depth 2: leavers of round 0 AND round 1 named (an auditor on two panels of the segment): 30 members,
/// 2 round-0 + 3 round-1 auditors leave: E 15 without a list, 17 naming the round-0 ones, 20 naming all 10
/// earlier auditors = the brute-force true count 20; the admitted depth-2 round draws 15 of 15.
/// (2) a round-0 auditor deregistered mid-epoch (weight in the snapshot) named: not counted (E 14, as
/// without); next epoch counted (E 14 with it, 13 without). So a list computed in epoch e that names every
/// earlier-panel auditor stays right when the appeal is mined in e + 1; a list filtered to "no weight now"
/// at quote time misses it (E 13 < 2 k: RefusalsNotCharged) - a client rule, see the report.
/// (3) left then re-registered: same leaf; gone (counted) while its snapshot weight is 0, live (not
/// counted, members + 1) from the next epoch: E 14 either way = the true count.
/// (4) the provider (a tier-1 auditor here), a tier-2 auditor, address(0): never proven (no seat).
/// (5) flip side: one segment's earlier-panel auditors are <= 62 < MAX_LEAVERS (128) at every admissible
/// depth, so a defender cannot make a single-segment appeal's leavers unnameable.
/// (gas) 128 leavers: quote 1,055,247 gas on 1 segment (98,486 without), 2,002,352 on 8 (139,668 without);
/// see Review28LeaversGasScaling for many segments.
/// Severity: none (holds). Command:
/// `scripts/forge test --match-path 'contracts/test/attacks/Review28*' -vv`
contract Review28ProvenLeaversNeverInflate is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal constant CHARGED = type(uint256).max;

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    // ------------------------------------------------------------------------------------------ helpers

    /// @dev The round's E as admission computes it with `named`: decoded from the requireCharged appeal's
    /// refusal (CHARGED if it would open: E >= 2 k); the state is put back.
    function _eOf(uint256 sid, uint256[] memory segs, address[] memory named) internal returns (uint256 e) {
        uint256 snap = vm.snapshotState();
        vm.prank(appellant);
        try appeals.appeal(sid, segs, type(uint256).max, true, named) {
            e = CHARGED;
        } catch (bytes memory err) {
            bytes4 sel = bytes4(err);
            uint256 at;
            if (sel == IAppealModule.RefusalsNotCharged.selector) at = 36;
            else if (sel == IAppealModule.NotEnoughEligibleAuditors.selector) at = 68;
            else revert("unexpected refusal");
            assembly ("memory-safe") {
                e := mload(add(err, add(32, at)))
            }
        }
        vm.revertToState(snap);
    }

    /// @dev Whether `a` holds a seat of `seg` on round `round`'s panel.
    function _satOn(uint256 sid, uint256 round, address a, uint256 seg) internal view returns (bool) {
        uint256[] memory segs = drawModule.seatsOf(sid, round, a);
        for (uint256 j = 0; j < segs.length; ++j) {
            if (segs[j] == seg) return true;
        }
        return false;
    }

    /// @dev Whether `a` has weight in tier `tier`'s snapshot of the current epoch.
    function _live(uint8 tier, address a) internal view returns (bool) {
        uint256 epoch = block.number / EPOCH_BLOCKS + 1;
        (bool exists, uint256 leaf) = _sortition().leafOf(tier, a);
        return exists && _sortition().leafWeightAt(tier, epoch, leaf) != 0;
    }

    /// @dev Brute force: live tier-1 auditors, not the provider, on none of `rounds`' panels of `seg`.
    function _truth(uint256 sid, uint256 seg, uint256[] memory rounds) internal view returns (uint256 n) {
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address a = auditorAddrs[i];
            if (!_live(1, a) || a == provider) continue;
            bool sat = false;
            for (uint256 r = 0; r < rounds.length; ++r) {
                if (_satOn(sid, rounds[r], a, seg)) sat = true;
            }
            if (!sat) ++n;
        }
    }

    /// @dev The auditors of `auditorAddrs` seated on `seg` in round `round`, up to `max`, sorted.
    function _seatedList(uint256 sid, uint256 round, uint256 seg, uint256 max)
        internal
        view
        returns (address[] memory l)
    {
        l = new address[](auditorAddrs.length);
        uint256 n = 0;
        for (uint256 i = 0; i < auditorAddrs.length && n < max; ++i) {
            if (_satOn(sid, round, auditorAddrs[i], seg)) l[n++] = auditorAddrs[i];
        }
        assembly ("memory-safe") {
            mstore(l, n)
        }
        l = _sorted(l);
    }

    function _concat(address[] memory a, address[] memory b) internal pure returns (address[] memory c) {
        c = new address[](a.length + b.length);
        for (uint256 i = 0; i < a.length; ++i) {
            c[i] = a[i];
        }
        for (uint256 i = 0; i < b.length; ++i) {
            c[a.length + i] = b[i];
        }
        c = _sorted(c);
    }

    function _sorted(address[] memory a) internal pure returns (address[] memory) {
        for (uint256 i = 1; i < a.length; ++i) {
            for (uint256 j = i; j > 0 && a[j] < a[j - 1]; --j) {
                (a[j], a[j - 1]) = (a[j - 1], a[j]);
            }
        }
        return a;
    }

    function _deregister(address[] memory l, uint256 count) internal {
        for (uint256 i = 0; i < count; ++i) {
            vm.prank(l[i]);
            registry.deregister();
        }
    }

    // ------------------------------------------------------------------------------------------ (1) depth 2

    /// @dev (1) HOLDS: leavers of round 0 and of the depth-1 panel, named together at depth 2: E = truth.
    function test_Review28DepthTwoLeaversOfBothPanelsExact() public {
        uint256 sid = _setUpPassedSession(30, 1, FEE);
        uint256 r1 = _appeal(sid, _segs(0));
        _drawRound(sid, r1);
        _publishRound(sid, r1);
        _voteRound(sid, r1, 0, 0, 0); // PASS upheld: depth 1, a new window
        address[] memory p0 = _seatedList(sid, 0, 0, 3);
        address[] memory p1 = _seatedList(sid, r1, 0, 7);
        assertEq(p0.length + p1.length, 10, "3 + 7 earlier seats");
        for (uint256 i = 0; i < p1.length; ++i) {
            assertTrue(!_satOn(sid, 0, p1[i], 0), "no auditor on two panels of the segment");
        }
        _deregister(p0, 2);
        _deregister(p1, 3);
        _nextEpoch();
        uint256[] memory rounds = new uint256[](2);
        rounds[1] = r1;
        uint256 truth = _truth(sid, 0, rounds);
        assertEq(truth, 20, "25 live - 5 live earlier auditors");
        uint256 eNone = _eOf(sid, _segs(0), new address[](0));
        uint256 eP0 = _eOf(sid, _segs(0), p0);
        address[] memory all = _concat(p0, p1);
        uint256 eAll = _eOf(sid, _segs(0), all);
        emit log_named_uint("depth 2 E, no list", eNone);
        emit log_named_uint("depth 2 E, round-0 auditors named", eP0);
        emit log_named_uint("depth 2 E, all 10 earlier auditors named", eAll);
        emit log_named_uint("depth 2 true count", truth);
        assertEq(eNone, 15, "25 - 10");
        assertEq(eP0, 17, "two proven of round 0");
        assertEq(eAll, truth, "exact with the over-inclusive list");
        // Every subset of the 10 (a few masks) stays at or below the truth.
        for (uint256 mask = 1; mask < 1024; mask += 97) {
            address[] memory some = new address[](10);
            uint256 n = 0;
            for (uint256 i = 0; i < 10; ++i) {
                if ((mask >> i) & 1 == 1) some[n++] = all[i];
            }
            assembly ("memory-safe") {
                mstore(some, n)
            }
            assertLe(_eOf(sid, _segs(0), some), truth, "subset: E <= truth");
        }
        vm.prank(appellant);
        uint256 r2 = appeals.appeal(sid, _segs(0), type(uint256).max, false, all);
        _drawRound(sid, r2);
        assertEq(appeals.roundOf(sid, r2).drawnSeats, 15, "the depth-2 panel is drawn in full");
    }

    // ------------------------------------------------------------------------------------------ (2) epochs

    /// @dev (2) HOLDS: a round-0 auditor deregistered mid-epoch still has snapshot weight: not counted; next
    /// epoch counted. The over-inclusive list is right in both epochs.
    function test_Review28MidEpochLeaverCountsFromItsSnapshotOnly() public {
        uint256 sid = _setUpPassedSession(17, 1, FEE);
        address[] memory p0 = _seatedList(sid, 0, 0, 3);
        vm.prank(p0[0]);
        registry.deregister();
        assertEq(_eOf(sid, _segs(0), new address[](0)), CHARGED, "epoch e: E 14 = 2 k, charged");
        assertEq(_eOf(sid, _segs(0), p0), CHARGED, "epoch e: named but in the snapshot: not counted");
        // A quote in epoch e with the list filtered to "no weight now": empty.
        uint256 filtered = 0;
        for (uint256 i = 0; i < p0.length; ++i) {
            if (!_live(1, p0[i])) ++filtered;
        }
        assertEq(filtered, 0, "nobody gone yet in epoch e");
        _nextEpoch();
        uint256 eNone = _eOf(sid, _segs(0), new address[](0));
        emit log_named_uint("epoch e+1 E, filtered (empty) list", eNone);
        assertEq(eNone, 13, "the filtered list de-charges the appeal in e + 1");
        assertEq(_eOf(sid, _segs(0), p0), CHARGED, "the over-inclusive list keeps E 14 in e + 1");
        uint256[] memory rounds = new uint256[](1);
        assertEq(_truth(sid, 0, rounds), 14, "14 live auditors on no panel of the segment");
    }

    /// @dev (3) HOLDS: left, then re-registered (same leaf): counted while its snapshot weight is 0, live and
    /// not counted from the next epoch; E stays the true 14.
    function test_Review28ReRegisteredLeaverCountedOnce() public {
        uint256 sid = _setUpPassedSession(17, 1, FEE);
        address[] memory p0 = _seatedList(sid, 0, 0, 3);
        address a = p0[0];
        (, uint256 leafBefore) = _sortition().leafOf(1, a);
        vm.prank(a);
        registry.deregister();
        _nextEpoch();
        assertEq(_eOf(sid, _segs(0), new address[](0)), 13, "gone, unnamed: 16 - 3");
        vm.prank(a);
        registry.register(1, uint64(1) << 1, keccak256(abi.encode("x25519", a)));
        (, uint256 leafAfter) = _sortition().leafOf(1, a);
        assertEq(leafAfter, leafBefore, "one leaf per account and tier");
        assertTrue(!_live(1, a), "no weight in this epoch's snapshot yet");
        assertEq(_eOf(sid, _segs(0), p0), CHARGED, "proven: 16 - 3 + 1 = 14");
        _nextEpoch();
        assertTrue(_live(1, a), "live again");
        assertEq(_eOf(sid, _segs(0), p0), CHARGED, "17 - 3 + 0 = 14: not counted twice");
        uint256[] memory rounds = new uint256[](1);
        assertEq(_truth(sid, 0, rounds), 14, "truth 14");
        // Charged reads E >= 14 only; E = members - 3 + proven with proven = 0 here (live): 17 - 3 = 14.
        assertEq(_sortition().liveCountAtExcept(1, block.number / EPOCH_BLOCKS + 1, provider), 17, "members");
    }

    /// @dev (4) HOLDS: the provider (registered as a tier-1 auditor, then gone), a tier-2 auditor and
    /// address(0) named: never proven (they hold no seat of the segment), E unchanged.
    function test_Review28ProviderOtherTierAndZeroNeverProven() public {
        _deployAppeals();
        _addAuditors(1, 17, STAKE);
        _joinTier(provider, 1, STAKE);
        address t2 = address(0x7702);
        _joinTier(t2, 2, STAKE);
        _nextEpoch();
        uint256 sid = _passedSession(1, FEE);
        assertTrue(!_satOn(sid, 0, provider, 0), "the provider never sits on its session");
        vm.prank(provider);
        registry.deregister();
        vm.prank(t2);
        registry.deregister();
        address[] memory p0 = _seatedList(sid, 0, 0, 3);
        vm.prank(p0[0]);
        registry.deregister();
        _nextEpoch();
        assertEq(_eOf(sid, _segs(0), new address[](0)), 13, "16 - 3");
        address[] memory odd = new address[](3);
        (odd[0], odd[1], odd[2]) = (address(0), provider, t2);
        odd = _sorted(odd);
        assertEq(_eOf(sid, _segs(0), odd), 13, "provider, tier-2 auditor, zero: not proven");
        address[] memory withReal = new address[](4);
        (withReal[0], withReal[1], withReal[2], withReal[3]) = (address(0), provider, t2, p0[0]);
        withReal = _sorted(withReal);
        assertEq(_eOf(sid, _segs(0), withReal), CHARGED, "only the real leaver counts: 14");
    }

    // ------------------------------------------------------------------------------------------ gas

    /// @dev Gas of admission with MAX_LEAVERS (128) gone accounts that sat nowhere (every seat read runs:
    /// the worst case of `_proven`), 1 and 8 segments, depth 1.
    function test_Review28MaxLeaversGas() public {
        uint256 sid = _setUpPassedSession(40, 8, FEE);
        address[] memory many = new address[](128);
        for (uint256 i = 0; i < many.length; ++i) {
            many[i] = address(uint160(0x1000 + i));
        }
        uint256[] memory eight = new uint256[](8);
        for (uint256 i = 0; i < 8; ++i) {
            eight[i] = i;
        }
        uint256 g = gasleft();
        appeals.quote(sid, _segs(0));
        uint256 g0 = g - gasleft();
        g = gasleft();
        appeals.quote(sid, _segs(0), many);
        uint256 g1 = g - gasleft();
        g = gasleft();
        appeals.quote(sid, eight);
        uint256 g8n = g - gasleft();
        g = gasleft();
        appeals.quote(sid, eight, many);
        uint256 g8 = g - gasleft();
        emit log_named_uint("quote gas, 1 segment, no leavers", g0);
        emit log_named_uint("quote gas, 1 segment, 128 leavers", g1);
        emit log_named_uint("quote gas, 8 segments, no leavers", g8n);
        emit log_named_uint("quote gas, 8 segments, 128 leavers", g8);
        assertTrue(g1 < 3_000_000, "128 leavers on one segment fit easily");
    }

    // ------------------------------------------------------------------------------------------ flip side

    /// @dev (5) HOLDS: one segment's earlier-panel auditors always fit one list, so a defender cannot make a
    /// single-segment appeal's leavers unnameable: every admissible depth has k_{d+1} <= 63 (AppealSettlement
    /// `_safeRounds`), hence earlierSeats(k_0, d + 1) = (2^(d+1) - 1)(k_0 + 1) - (d + 1) <= 62 < MAX_LEAVERS.
    /// (A round of many segments may need more than 128 leavers: the appellant splits it; no veto.)
    function testFuzz_Review28OneSegmentsLeaversFitOneList(uint8 k0, uint8 depth) public pure {
        uint256 d = bound(depth, 1, AppealMath.MAX_ROUNDS);
        uint256 k = bound(k0, 1, 63);
        if (AppealMath.panelSeats(k, d) > AppealMath.MAX_PANEL_SEATS) return;
        assertLe(AppealMath.earlierSeats(k, d), 62, "<= 62 earlier seats");
        assertTrue(AppealMath.earlierSeats(k, d) < AppealMath.MAX_LEAVERS, "fits one leavers list");
    }
}
