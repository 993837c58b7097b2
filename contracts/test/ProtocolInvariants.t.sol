// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./utils/TestBase.sol";
import {ProtocolFixture} from "./utils/ProtocolFixture.sol";
import {AuditSessions} from "../src/AuditSessions.sol";

/// @notice Random protocol traffic for the invariant fuzzer: staking, delegation, withdrawals,
/// sessions through every phase (including abandoned ones), votes and settlements.
contract ProtocolHandler is ProtocolFixture {
    address[] public delegators;
    uint256[] public sessionIds;
    uint256[] public withdrawalIds;
    mapping(uint256 => mapping(address => uint256)) public openingOf;
    uint256 public calls;
    uint256 public ghostReveals;
    uint256 public ghostFinalized;
    uint256 public ghostSettled;

    constructor() {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _addAuditors(2, 4, STAKE);
        _addAuditors(0, 2, STAKE);
        for (uint256 i = 0; i < 3; ++i) {
            address d = address(uint160(0xD000 + i));
            delegators.push(d);
            token.transfer(d, 10_000e18);
            vm.prank(d);
            token.approve(address(staking), type(uint256).max);
        }
    }

    // ------------------------------------------------------------ accessors

    function auditorList() external view returns (address[] memory) {
        return auditorAddrs;
    }

    function delegatorList() external view returns (address[] memory) {
        return delegators;
    }

    function sessionList() external view returns (uint256[] memory) {
        return sessionIds;
    }

    function providerAddr() external view returns (address) {
        return provider;
    }

    function contracts() external view returns (address, address, address, address) {
        return (address(token), address(staking), address(sessions), address(treasury));
    }

    // -------------------------------------------------------------- actions

    function delegate(uint256 who, uint256 to, uint256 amount) external {
        ++calls;
        address d = delegators[who % delegators.length];
        address a = auditorAddrs[to % auditorAddrs.length];
        amount = bound(amount, 1e18, 2000e18);
        if (token.balanceOf(d) < amount || !registry.isRegistered(a)) return;
        vm.prank(d);
        staking.stake(a, amount);
    }

    function withdraw(uint256 who, uint256 from, uint256 fraction) external {
        ++calls;
        bool isAuditor = who % 2 == 0;
        address a = auditorAddrs[from % auditorAddrs.length];
        address holder = isAuditor ? a : delegators[who % delegators.length];
        uint256 shares = staking.sharesOf(a, holder) * bound(fraction, 1, 100) / 100;
        if (shares == 0) return;
        (uint256 assets, uint256 locked,,,,,) = staking.poolOf(a);
        if (staking.previewRedeem(a, shares) > assets - locked) return;
        vm.prank(holder);
        withdrawalIds.push(staking.requestWithdrawal(a, shares));
    }

    function claim(uint256 which) external {
        ++calls;
        if (withdrawalIds.length == 0) return;
        uint256 id = withdrawalIds[which % withdrawalIds.length];
        vm.warp(block.timestamp + 1 days);
        if (staking.withdrawalOf(id).claimed) return;
        vm.prank(staking.withdrawalOf(id).owner);
        staking.claimWithdrawal(id);
    }

    function open(uint256 nSeed, uint256 tierSeed) external {
        ++calls;
        if (sessionIds.length >= 4) return;
        uint256 n = bound(nSeed, 1, 6);
        uint8[] memory tiers = new uint8[](n);
        uint16[] memory weights = new uint16[](n);
        for (uint256 i = 0; i < n; ++i) {
            tiers[i] = uint8(uint256(keccak256(abi.encode(tierSeed, i))) % 3);
            weights[i] = uint16(1 + i);
        }
        sessionIds.push(_open(_tiersWeights(tiers, weights), 500e18));
    }

    function _pickSession(uint256 seed) internal view returns (uint256) {
        if (sessionIds.length == 0) return 0;
        return sessionIds[seed % sessionIds.length];
    }

    function drawSome(uint256 which, uint256 maxSeats) external {
        ++calls;
        uint256 sid = _pickSession(which);
        if (sid == 0) return;
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        if (
            s.status != AuditSessions.Status.Created
                && !(s.status == AuditSessions.Status.Drawing && s.drawnSeats < s.totalSeats)
        ) return;
        try sessions.draw(sid, bound(maxSeats, 1, 20)) {} catch {}
    }

    function publish(uint256 which) external {
        ++calls;
        uint256 sid = _pickSession(which);
        if (sid == 0) return;
        vm.prank(provider);
        try sessions.publishKeys(sid, "manifest") {} catch {}
    }

    function commitOne(uint256 which, uint256 who, uint256 votes) external {
        ++calls;
        uint256 sid = _pickSession(which);
        if (sid == 0) return;
        address[] memory list = sessions.auditorsOf(sid);
        if (list.length == 0) return;
        address a = list[who % list.length];
        uint256 count = sessions.seatsOf(sid, a).length;
        uint256 verdicts = votes & ((uint256(1) << count) - 1);
        bytes32 c = sessions.computeCommitment(sid, a, verdicts, bytes32(votes));
        vm.prank(a);
        try sessions.commit(sid, c) {
            openingOf[sid][a] = votes;
        } catch {}
    }

    function revealOne(uint256 which, uint256 who) external {
        ++calls;
        uint256 sid = _pickSession(which);
        if (sid == 0) return;
        address[] memory list = sessions.auditorsOf(sid);
        if (list.length == 0) return;
        address a = list[who % list.length];
        uint256 votes = openingOf[sid][a];
        uint256 count = sessions.seatsOf(sid, a).length;
        AuditSessions.RevealItem[] memory items = new AuditSessions.RevealItem[](1);
        items[0] = AuditSessions.RevealItem({
            auditor: a, verdicts: votes & ((uint256(1) << count) - 1), salt: bytes32(votes)
        });
        try sessions.revealBatch(sid, items) {
            ++ghostReveals;
        } catch {}
    }

    /// @dev Push one session through up to `steps` phases from wherever it is, with random
    /// subsets of auditors committing, revealing (honestly or not) and being settled.
    function drive(uint256 which, uint256 steps, uint256 mask) external {
        ++calls;
        uint256 sid = _pickSession(which);
        if (sid == 0) return;
        steps = bound(steps, 1, 6);
        for (uint256 i = 0; i < steps; ++i) {
            if (!_step(sid, mask)) return;
            mask = uint256(keccak256(abi.encode(mask)));
        }
    }

    function _step(uint256 sid, uint256 mask) internal returns (bool) {
        AuditSessions.Status st = sessions.statusOf(sid);
        if (st == AuditSessions.Status.Created || _drawing(sid)) {
            vm.roll(block.number + RANDOMNESS_DELAY + 1);
            try sessions.draw(sid, 40) {}
            catch {
                return false;
            }
        } else if (st == AuditSessions.Status.Drawing) {
            _publish(sid);
        } else if (st == AuditSessions.Status.KeysPublished || st == AuditSessions.Status.Commit) {
            address[] memory list = sessions.auditorsOf(sid);
            for (uint256 j = 0; j < list.length; ++j) {
                if ((mask >> j) & 3 == 0) continue; // about a quarter stay silent
                uint256 votes = uint256(keccak256(abi.encode(mask, j)));
                uint256 count = sessions.seatsOf(sid, list[j]).length;
                bytes32 c = sessions.computeCommitment(
                    sid, list[j], votes & ((uint256(1) << count) - 1), bytes32(votes)
                );
                vm.prank(list[j]);
                sessions.commit(sid, c);
                openingOf[sid][list[j]] = votes;
            }
            vm.roll(block.number + 21);
            sessions.advance(sid);
        } else if (st == AuditSessions.Status.Reveal) {
            address[] memory list = sessions.auditorsOf(sid);
            for (uint256 j = 0; j < list.length; ++j) {
                uint256 w = sessions.voteWord(sid, list[j]);
                if ((w >> 200) & 3 != 1 || (mask >> (j + 64)) & 7 == 0) continue;
                uint256 votes = openingOf[sid][list[j]];
                AuditSessions.RevealItem[] memory items = new AuditSessions.RevealItem[](1);
                items[0] = AuditSessions.RevealItem({
                    auditor: list[j],
                    verdicts: votes & ((uint256(1) << ((w >> 192) & 0xff)) - 1),
                    salt: bytes32(votes)
                });
                sessions.revealBatch(sid, items);
                ++ghostReveals;
            }
            vm.roll(block.number + 41);
            if (sessions.advance(sid) == AuditSessions.Status.Finalized) ++ghostFinalized;
        } else {
            address[] memory list = sessions.auditorsOf(sid);
            for (uint256 j = 0; j < list.length; ++j) {
                if ((sessions.voteWord(sid, list[j]) >> 200) & 4 != 0 || (mask >> (j + 128)) & 1 == 0) {
                    continue;
                }
                address[] memory one = new address[](1);
                one[0] = list[j];
                sessions.settleBatch(sid, one);
                ++ghostSettled;
            }
            return false;
        }
        return true;
    }

    function passTime(uint256 blocks) external {
        ++calls;
        vm.roll(block.number + bound(blocks, 1, 30));
    }

    function advanceOne(uint256 which) external {
        ++calls;
        uint256 sid = _pickSession(which);
        if (sid == 0) return;
        if (sessions.advance(sid) == AuditSessions.Status.Finalized) ++ghostFinalized;
    }

    function settleOne(uint256 which, uint256 who) external {
        ++calls;
        uint256 sid = _pickSession(which);
        if (sid == 0) return;
        address[] memory list = sessions.auditorsOf(sid);
        if (list.length == 0) return;
        address[] memory one = new address[](1);
        one[0] = list[who % list.length];
        try sessions.settleBatch(sid, one) {
            ++ghostSettled;
        } catch {}
    }
}

contract ProtocolInvariantsTest is TestBase {
    ProtocolHandler internal handler;

    function setUp() public {
        handler = new ProtocolHandler();
    }

    function targetContracts() public view returns (address[] memory targets) {
        targets = new address[](1);
        targets[0] = address(handler);
    }

    function _holders() internal view returns (address[] memory all) {
        address[] memory auditors = handler.auditorList();
        address[] memory delegators = handler.delegatorList();
        (, address staking, address sessions, address treasury) = handler.contracts();
        all = new address[](auditors.length + delegators.length + 5);
        uint256 k = 0;
        for (uint256 i = 0; i < auditors.length; ++i) {
            all[k++] = auditors[i];
        }
        for (uint256 i = 0; i < delegators.length; ++i) {
            all[k++] = delegators[i];
        }
        all[k++] = handler.providerAddr();
        all[k++] = address(handler);
        all[k++] = staking;
        all[k++] = sessions;
        all[k++] = treasury;
    }

    /// @dev Every token is somewhere known: wallets, pools (Staking), audit pools (AuditSessions)
    /// or the treasury; and each contract holds exactly what its books say.
    function invariant_tokenConservation() public view {
        (address tokenAddr, address stakingAddr, address sessionsAddr,) = handler.contracts();
        ProtocolFixtureView v = ProtocolFixtureView(tokenAddr);
        address[] memory all = _holders();
        uint256 sum = 0;
        for (uint256 i = 0; i < all.length; ++i) {
            sum += v.balanceOf(all[i]);
        }
        assertEq(sum, v.totalSupply(), "balances + pools + treasury == supply");
        StakingView st = StakingView(stakingAddr);
        assertEq(v.balanceOf(stakingAddr), st.totalPooled() + st.pendingWithdrawals(), "staking books");
        uint256[] memory sids = handler.sessionList();
        uint256 pools = 0;
        for (uint256 i = 0; i < sids.length; ++i) {
            pools += AuditSessions(sessionsAddr).sessionOf(sids[i]).pool;
        }
        assertEq(v.balanceOf(sessionsAddr), pools, "session books");
    }

    /// @dev A seat is counted at most once: per segment, votes never exceed k_t, and the votes
    /// on record equal the seats of the auditors who revealed.
    function invariant_noDoubleVotes() public view {
        (,, address sessionsAddr,) = handler.contracts();
        AuditSessions sessions = AuditSessions(sessionsAddr);
        uint256[] memory sids = handler.sessionList();
        for (uint256 i = 0; i < sids.length; ++i) {
            AuditSessions.Session memory s = sessions.sessionOf(sids[i]);
            AuditSessions.SessionParams memory p = sessions.paramsAt(s.paramsVersion);
            uint256 votes = 0;
            for (uint256 g = 0; g < s.segmentCount; ++g) {
                uint256 seg = sessions.segmentWord(sids[i], g >> 3) >> ((g & 7) * 32);
                uint256 cast = ((seg >> 6) & 63) + (seg & 63);
                assertLe(cast, p.seatsPerTier[(seg >> 14) & 3], "votes per segment <= k_t");
                votes += cast;
            }
            address[] memory list = sessions.auditorsOf(sids[i]);
            uint256 revealedSeats = 0;
            uint256 revealedCount = 0;
            for (uint256 j = 0; j < list.length; ++j) {
                uint256 w = sessions.voteWord(sids[i], list[j]);
                if ((w >> 200) & 2 != 0) {
                    revealedSeats += (w >> 192) & 0xff;
                    ++revealedCount;
                }
            }
            assertEq(votes, revealedSeats, "votes == revealed seats");
            assertEq(s.revealedCount, revealedCount, "revealed count");
        }
    }

    /// @dev Redeeming every share of a pool never yields more than the pool holds, and the
    /// holders' shares add up to the pool's total.
    function invariant_sharesNeverExceedPool() public view {
        (, address stakingAddr,,) = handler.contracts();
        StakingView st = StakingView(stakingAddr);
        address[] memory auditors = handler.auditorList();
        address[] memory delegators = handler.delegatorList();
        for (uint256 i = 0; i < auditors.length; ++i) {
            (uint256 assets, uint256 locked, uint256 totalShares,,,,) = st.poolOf(auditors[i]);
            assertLe(st.previewRedeem(auditors[i], totalShares), assets, "full redemption <= assets");
            assertLe(locked, assets, "locked <= assets");
            uint256 held = st.sharesOf(auditors[i], auditors[i]);
            for (uint256 j = 0; j < delegators.length; ++j) {
                held += st.sharesOf(auditors[i], delegators[j]);
            }
            assertEq(held, totalShares, "shares add up");
        }
    }

    /// @dev Once every deadline has passed, `advance` alone (callable by anyone) brings every session
    /// to a terminal state: Finalized, Expired, or Cancelled (provider cancel / too few auditors).
    function invariant_sessionsCanAlwaysTerminate() public {
        (,, address sessionsAddr,) = handler.contracts();
        AuditSessions sessions = AuditSessions(sessionsAddr);
        uint256[] memory sids = handler.sessionList();
        vm.roll(block.number + 1000);
        vm.prank(address(0xDEAD));
        for (uint256 i = 0; i < sids.length; ++i) {
            for (uint256 step = 0; step < 3; ++step) {
                sessions.advance(sids[i]);
            }
            AuditSessions.Status st = sessions.statusOf(sids[i]);
            assertTrue(
                st == AuditSessions.Status.Finalized || st == AuditSessions.Status.Expired
                    || st == AuditSessions.Status.Cancelled,
                "terminal"
            );
        }
    }
}

interface ProtocolFixtureView {
    function balanceOf(address) external view returns (uint256);
    function totalSupply() external view returns (uint256);
}

interface StakingView {
    function totalPooled() external view returns (uint256);
    function pendingWithdrawals() external view returns (uint256);
    function poolOf(address) external view returns (uint256, uint256, uint256, uint256, uint256, uint8, bool);
    function previewRedeem(address, uint256) external view returns (uint256);
    function sharesOf(address, address) external view returns (uint256);
}
