// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Review24DrawProbe} from "./Review24DrawProbe.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";

/// @title Review24EligibleExactRandomWorlds (outside review 24 of 9aecdcc, DrawModule `_fail`/`_cappedEarlier`)
/// @notice Property: in every failed appeal draw, whatever the world, `DrawResult.eligibleWeight` is rule R's
/// W_E for the segment f it failed on: the tier's snapshot weight at the round's epoch less the provider's and
/// less every round-0 auditor of f, each once (capped on the round's earlier segments or sampled on f).
/// Attack tried (seeded and fuzzed worlds): seat caps 3 to 8 with a round naming cap + 1 segments (so the cap
/// binds before the last), 10 or 11 round-0 auditors of random stake (100 to 1,000 TRUST; 7 or 8 can sit on
/// each segment, so the cap fills), 20 to 40 refusers of random stake 100 to 300 TRUST (their free stake
/// locked elsewhere), a random round-0 auditor topped up by up to 5,000 TRUST before the snapshot (heavy
/// accounts reach the cap first) or after it, the provider staked in the tier (2,000 TRUST) one time in four,
/// and draw calls of 1, 5 or 64 seats. Worlds refused up front (`PanelTooLarge`) or whose draw completes are
/// counted, not checked.
/// Measured (command below): seeds 1 to 36: 20 failed draws, all with W_E = rule R's (16 REFUSED, 4
/// UNFILLABLE, each as rule R says), 7 of them with a round-0 auditor of the failed segment at the cap (the
/// walk had it to find); 16 draws completed, none refused up front. Plus 16 fuzzed worlds (not counted).
/// Severity: none (property holds).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review24EligibleExactRandom*' -vv`.
contract Review24EligibleExactRandomWorlds is Review24DrawProbe {
    event log_named_uint(string key, uint256 val);

    function _appealParams() internal pure override returns (IAppealModule.AppealParams memory p) {
        p = super._appealParams();
        p.appealBlocks = uint32(3 * EPOCH_BLOCKS);
    }

    struct World {
        uint256 cap;
        uint256 honest;
        uint256 refusers;
        uint256 seed;
        uint256 topUp;
        bool topUpAfter;
        bool providerIn;
        uint256 page;
    }

    function _refuser(uint256 i) internal pure returns (address) {
        return address(uint160(0x24EE0000 + i));
    }

    function _rand(uint256 seed, uint256 i, uint256 lo, uint256 hi) internal pure returns (uint256) {
        return bound(uint256(keccak256(abi.encode(seed, i))), lo, hi);
    }

    /// @dev Worlds per test: about 66M gas each, under the test's gas limit (2^30).
    uint256 internal constant WORLDS = 12;

    function test_EligibleExactInSeededWorlds1to12() public {
        _seeded(1);
    }

    function test_EligibleExactInSeededWorlds13to24() public {
        _seeded(13);
    }

    function test_EligibleExactInSeededWorlds25to36() public {
        _seeded(25);
    }

    /// @dev WORLDS seeded worlds from `first`, each from a clean state: counts the failed draws checked.
    function _seeded(uint256 first) internal {
        uint256[4] memory kinds;
        uint256 withCapped = 0;
        for (uint256 seed = first; seed < first + WORLDS; ++seed) {
            uint256 snap = vm.snapshotState();
            uint256 kind = _world(seed);
            vm.revertToState(snap);
            ++kinds[kind & 3];
            if (kind >> 2 != 0) ++withCapped;
        }
        emit log_named_uint("worlds", WORLDS);
        emit log_named_uint("failed draws checked (W_E exact)", kinds[0] + kinds[3]);
        emit log_named_uint("of them REFUSED", kinds[3]);
        emit log_named_uint("of them with a round-0 auditor of f at the cap (walked)", withCapped);
        emit log_named_uint("refused up front (PanelTooLarge)", kinds[1]);
        emit log_named_uint("draws completed", kinds[2]);
        assertTrue(kinds[0] + kinds[3] >= WORLDS / 4, "setup: a quarter of the worlds fail their draw");
    }

    /// forge-config: default.fuzz.runs = 16
    function testFuzz_EligibleExactInRandomWorlds(uint256 seed) public {
        _world(seed);
    }

    /// @dev One world: 0 failed draw checked (UNFILLABLE), 3 (REFUSED), 1 refused up front, 2 draw completed;
    /// plus 4 if a round-0 auditor of the failed segment was at the cap (the walk had one to find).
    function _world(uint256 seed) internal returns (uint256) {
        World memory w;
        w.cap = _rand(seed, 1, 3, 8);
        w.honest = _rand(seed, 2, 10, 11);
        w.refusers = _rand(seed, 3, 20, 40);
        w.topUp = _rand(seed, 4, 0, 5000) * 1e18;
        w.topUpAfter = _rand(seed, 5, 0, 1) == 1;
        w.providerIn = _rand(seed, 6, 0, 3) == 0;
        uint256[3] memory pages = [uint256(1), 5, 64];
        w.page = pages[_rand(seed, 7, 0, 2)];
        w.seed = seed;
        _deployAppeals();
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.seatCap = uint8(w.cap);
        vm.prank(owner);
        sessions.setParams(p);
        for (uint256 i = 0; i < w.honest; ++i) {
            _addAuditors(1, 1, _rand(seed, 100 + i, 100, 1000) * 1e18);
        }
        _nextEpoch();
        uint256 sid = _passedSession(w.cap + 2, FEE);
        address topped = auditorAddrs[_rand(seed, 8, 0, w.honest - 1)];
        if (w.topUp != 0 && !w.topUpAfter) _stakeMore(topped, w.topUp);
        for (uint256 i = 0; i < w.refusers; ++i) {
            _joinTier(_refuser(i), 1, _rand(seed, 200 + i, 100, 300) * 1e18);
        }
        if (w.providerIn) _joinTier(provider, 1, 2000e18);
        _nextEpoch();
        uint256[] memory named = new uint256[](w.cap + 1);
        for (uint256 i = 0; i <= w.cap; ++i) {
            named[i] = i;
        }
        try appeals.quote(sid, named) returns (IAppealModule.Quote memory) {}
        catch {
            return 1;
        }
        vm.prank(appellant);
        uint256 round = appeals.appeal(sid, named, type(uint256).max);
        if (w.topUp != 0 && w.topUpAfter) _stakeMore(topped, w.topUp);
        for (uint256 i = 0; i < w.refusers; ++i) {
            _busyElsewhere(_refuser(i), 0);
        }
        _drawProbing(sid, round, w.page);
        IAppealModule.Round memory rd = appeals.roundOf(sid, round);
        if (rd.status != IAuditSessions.Status.Cancelled) return 2;
        uint256 f = probed.cursor;
        uint256 epoch = rd.epoch;
        uint256 we = _sortition().totalWeightAt(1, epoch) - _weightAt(1, provider, epoch);
        uint256 capped = 0;
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (!_seatedOn(sid, auditorAddrs[i], f)) continue;
            we -= _weightAt(1, auditorAddrs[i], epoch);
            if (drawModule.seatsOf(sid, round, auditorAddrs[i]).length >= w.cap) capped = 4;
        }
        assertEq(probed.eligibleWeight, we, "W_E is rule R's");
        assertTrue(
            rd.refused == (rd.refusalsCharged && 2 * probed.refusedWeight > we), "the end follows rule R"
        );
        return (rd.refused ? 3 : 0) | capped;
    }

    function _stakeMore(address a, uint256 amount) internal {
        token.transfer(a, amount);
        vm.prank(a);
        staking.stake(a, amount);
    }
}
