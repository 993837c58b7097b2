// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

interface VmSkipReview28Gas {
    function skip(bool) external;
}

/// @title Review28LeaversGasScaling (outside review 28 of 59b8d36: proven leavers, admission gas)
/// @notice Property: admission with a leavers list stays within a block for every round it can admit.
/// Attack: `_proven` reads (d + 1) seat words per (leaver, named segment): a round of S segments with L
/// leavers costs about S x L x (d + 1) cross-contract reads, not S + L. Measured here (seat cap 64, 80
/// auditors, 256 one-tier segments, depth 1, 128 gone accounts that sat nowhere - the cheapest case of a
/// full walk; real round-0 auditors with seats >= 128 add a `highSeats` call each): see the logs of
/// `test_Review28LeaversGasGrowsWithSegmentsTimesLeavers` (quote gas, 256 segments: no list vs 128 leavers).
/// Measured: 256 segments, quote 1,931,009 gas without a list, 56,424,714 with 128 leavers (1,663 gas per
/// segment x leaver); the 5-argument `appeal` 62,994,739 gas: over a 30M block, and over geth's default
/// 50M eth_call cap for the quote. Break-even at depth 1: about 17,000 segment x leaver pairs (128 leavers:
/// about 130 segments). Control: 128 leavers over 64 segments: appeal
/// 16,374,860 gas, fits a 30M block.
/// Who pays: only the appellant, who chooses the list; a defender cannot lengthen it (an honest appellant
/// needs only the named segments' earlier-panel leavers, and may split the round). So no veto: severity
/// INFO. At depth 2-3 the reads double/triple. Fix proposal (optional): read each leaver's seat words once
/// per panel key (one `seatWordOf` per leaver and round, then test every named segment's bit), making it
/// L x (d + 1) reads + S x L bit tests; or bound S x L.
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review28*' -vv`
contract Review28LeaversGasScaling is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal constant N = 256;

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatCap = 64;
        p.slashAmount = 0.25e18;
    }

    /// @dev KNOWN (LOW): a 256-segment round with 128 leavers cannot be mined in a 30M block.
    function test_Review28LargeRoundWithLeaversFitsABlock_KNOWN() public {
        VmSkipReview28Gas(address(vm)).skip(true);
        uint256 sid = _setUpPassedSession(80, N, 20_000e18);
        vm.prank(appellant);
        uint256 g = gasleft();
        appeals.appeal(sid, _range(N), type(uint256).max, false, _many(128));
        assertTrue(g - gasleft() < 30_000_000, "fits a 30M block");
    }

    /// @dev Control: 128 leavers over 64 segments fit a 30M block (16.4M).
    function test_Review28ControlLeaversOverFewSegmentsFit() public {
        uint256 sid = _setUpPassedSession(80, N, 20_000e18);
        vm.prank(appellant);
        uint256 g = gasleft();
        appeals.appeal(sid, _range(64), type(uint256).max, false, _many(128));
        uint256 used = g - gasleft();
        emit log_named_uint("appeal gas, 64 segments, 128 leavers", used);
        assertTrue(used < 30_000_000, "fits a 30M block");
    }

    function _many(uint256 n) internal pure returns (address[] memory many) {
        many = new address[](n);
        for (uint256 i = 0; i < n; ++i) {
            many[i] = address(uint160(0x1000 + i));
        }
    }

    function _range(uint256 n) internal pure returns (uint256[] memory segs) {
        segs = new uint256[](n);
        for (uint256 i = 0; i < n; ++i) {
            segs[i] = i;
        }
    }

    function test_Review28LeaversGasGrowsWithSegmentsTimesLeavers() public {
        uint256 sid = _setUpPassedSession(80, N, 20_000e18);
        address[] memory many = new address[](128);
        for (uint256 i = 0; i < many.length; ++i) {
            many[i] = address(uint160(0x1000 + i));
        }
        uint256[] memory all = new uint256[](N);
        for (uint256 i = 0; i < N; ++i) {
            all[i] = i;
        }
        uint256 g = gasleft();
        appeals.quote(sid, all);
        uint256 g0 = g - gasleft();
        g = gasleft();
        appeals.quote(sid, all, many);
        uint256 g1 = g - gasleft();
        emit log_named_uint("quote gas, 256 segments, no leavers", g0);
        emit log_named_uint("quote gas, 256 segments, 128 leavers", g1);
        emit log_named_uint("extra gas per (segment x leaver)", (g1 - g0) / (N * 128));
        vm.prank(appellant);
        g = gasleft();
        appeals.appeal(sid, all, type(uint256).max, false, many);
        emit log_named_uint("appeal gas, 256 segments, 128 leavers", g - gasleft());
    }
}
