// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase, Vm} from "./utils/TestBase.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {StakingFixture} from "./utils/StakingFixture.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IVotingModule} from "../src/interfaces/IVotingModule.sol";
import {IDrawModule} from "../src/interfaces/IDrawModule.sol";
import {Staking} from "../src/Staking.sol";
import {IStaking} from "../src/interfaces/IStaking.sol";
import {ISortition} from "../src/interfaces/ISortition.sol";
import {Verdicts} from "../src/libraries/Verdicts.sol";
import {SegmentWord} from "../src/libraries/SegmentWord.sol";

/// @notice Adversarial protocol traffic for the invariant fuzzer, against the real Staking: sessions
/// through every phase and every way of ending, stake changes while sessions draw, withdrawals while
/// sessions are open, late stakers, relayed batches with front-run items, settlement in any order,
/// drains at any moment.
contract ProtocolHandler is StakingFixture {
    uint256 internal constant MAX_SESSIONS = 6;

    /// @dev A deposit made into an auditor's pool by its dedicated late staker.
    struct LateDeposit {
        uint256 amount;
        uint256 flow;
        uint256 tailAfter;
        bool active;
    }

    uint256[] public sessionIds;
    address[] public delegators;
    uint256[] public withdrawalIds;
    mapping(address => address) public lateStakerOf;
    mapping(address => LateDeposit) internal _late;
    mapping(uint256 => mapping(address => uint256)) public ballotOf;
    mapping(uint256 => mapping(address => bool)) public hasBallot;
    uint256 public ghostFinalized;
    uint256 public ghostSettled;
    /// @dev Per session cancelled by a failed draw: what the provider got back, and the lock refusals
    /// its `DrawFailed` event reported (+1, so 0 means "not cancelled by a draw").
    mapping(uint256 => uint256) public ghostDrawRefund;
    mapping(uint256 => uint256) public ghostRefusalsPlusOne;
    /// @dev Lock refusals of each session's round-0 draw, counted from the exclusion events.
    mapping(uint256 => uint256) public ghostRefusals;
    /// @dev Owner moves (withdrawal request, deregistration) of a pool standing in a readable snapshot
    /// that lowered its seat quote (must stay 0: StakingHolds), and all such moves made.
    uint256 public ghostQuoteLowered;
    uint256 public ghostSnapshotMoves;

    constructor() {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _addAuditors(2, 4, STAKE);
        _addAuditors(0, 3, STAKE);
        for (uint256 i = 0; i < 3; ++i) {
            address d = address(uint160(0xD000 + i));
            delegators.push(d);
            token.transfer(d, 20_000e18);
            vm.prank(d);
            token.approve(address(staking), type(uint256).max);
        }
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            address l = address(uint160(0x1A7E0000 + i));
            lateStakerOf[auditorAddrs[i]] = l;
            token.transfer(l, 10_000e18);
            vm.prank(l);
            token.approve(address(staking), type(uint256).max);
        }
        _nextEpoch();
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

    function lateDeposit(address auditor) external view returns (LateDeposit memory) {
        return _late[auditor];
    }

    function contracts()
        external
        view
        returns (address, address, address, address, address, address, address)
    {
        return (
            address(token),
            address(staking),
            address(sessions),
            address(treasury),
            address(drawModule),
            address(voting),
            address(settlement)
        );
    }

    function auditorsOf(uint256 sid) external view returns (address[] memory) {
        return _auditors(sid);
    }

    function seatsOf(uint256 sid, address a) external view returns (uint256[] memory) {
        return _seats(sid, a);
    }

    function seatWordOf(uint256 sid, address a) external view returns (uint256) {
        return _seatWord(sid, a);
    }

    function _pick(uint256 seed) internal view returns (uint256) {
        if (sessionIds.length == 0) return 0;
        return sessionIds[seed % sessionIds.length];
    }

    function _ballotFor(uint256 sid, address a, uint256 seed) internal view returns (uint256) {
        uint256 count = _seats(sid, a).length;
        uint256 mask = (uint256(1) << count) - 1;
        uint256 fails = seed & mask;
        uint256 abstains = seed % 5 == 0 ? (seed >> 64) & mask & ~fails : 0;
        return Verdicts.pack(fails, abstains);
    }

    // ------------------------------------------------------- session actions

    function open(uint256 nSeed, uint256 tierSeed) external {
        if (sessionIds.length >= MAX_SESSIONS) return;
        uint256 n = bound(nSeed, 1, 6);
        uint8[] memory tiers = new uint8[](n);
        uint16[] memory weights = new uint16[](n);
        for (uint256 i = 0; i < n; ++i) {
            tiers[i] = uint8(uint256(keccak256(abi.encode(tierSeed, i))) % 3);
            weights[i] = uint16(1 + i);
        }
        sessionIds.push(_open(_tiersWeights(tiers, weights), 500e18));
    }

    /// @dev A session on the thinnest tier only (tier 2: 4 auditors for 3 seats per segment).
    function openThin(uint256 nSeed) external {
        if (sessionIds.length >= MAX_SESSIONS) return;
        uint256 n = bound(nSeed, 1, 3);
        uint8[] memory tiers = new uint8[](n);
        uint16[] memory weights = new uint16[](n);
        for (uint256 i = 0; i < n; ++i) {
            tiers[i] = 2;
            weights[i] = 1;
        }
        sessionIds.push(_open(_tiersWeights(tiers, weights), 500e18));
    }

    function drawSome(uint256 which, uint256 maxSeats) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        _draw(sid, bound(maxSeats, 1, 20));
    }

    /// @dev `sessions.draw`, counting the panel's lock refusals from its own `AuditorExcluded` events
    /// (reason 3, every call) and recording a cancellation's refund and its `DrawFailed` count.
    function _draw(uint256 sid, uint256 maxSeats) internal returns (bool ok) {
        uint256 before = token.balanceOf(provider);
        vm.recordLogs();
        try sessions.draw(sid, maxSeats) {
            ok = true;
        } catch {}
        Vm.Log[] memory logs = vm.getRecordedLogs();
        if (!ok) return false;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length == 0) continue;
            if (logs[i].topics[0] == IDrawModule.AuditorExcluded.selector) {
                (uint256 round, uint256 reason) = abi.decode(logs[i].data, (uint256, uint256));
                if (round == 0 && reason == 3) ++ghostRefusals[sid];
            } else if (logs[i].topics[0] == IDrawModule.DrawFailed.selector) {
                (,,,,, uint256 refusals) =
                    abi.decode(logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256));
                ghostRefusalsPlusOne[sid] = refusals + 1;
                ghostDrawRefund[sid] = token.balanceOf(provider) - before;
            }
        }
    }

    /// @dev Push one session through up to `steps` phases from wherever it is, with random subsets of
    /// auditors committing (direct or relayed), revealing (honestly, abstaining or not at all) and
    /// being settled, and sometimes a provider that withholds its keys.
    function drive(uint256 which, uint256 steps, uint256 mask) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        steps = bound(steps, 1, 6);
        for (uint256 i = 0; i < steps; ++i) {
            if (!_step(sid, mask)) return;
            mask = uint256(keccak256(abi.encode(mask)));
        }
    }

    function _step(uint256 sid, uint256 mask) internal returns (bool) {
        IAuditSessions.Status st = sessions.statusOf(sid);
        if (st == IAuditSessions.Status.Created || _drawing(sid)) {
            vm.roll(block.number + RANDOMNESS_DELAY + 1);
            if (!_draw(sid, 40)) return false;
        } else if (st == IAuditSessions.Status.Drawing) {
            if (mask % 8 == 0) {
                vm.roll(block.number + 25); // withhold the keys
            } else {
                vm.prank(provider);
                try sessions.publishKeys(sid, "manifest") {} catch {}
            }
            sessions.advance(sid);
        } else if (st == IAuditSessions.Status.KeysPublished || st == IAuditSessions.Status.Commit) {
            _commitSome(sid, mask);
            vm.roll(block.number + 21);
            sessions.advance(sid);
        } else if (st == IAuditSessions.Status.Reveal) {
            _revealSome(sid, mask);
            vm.roll(block.number + 41);
            if (sessions.advance(sid) == IAuditSessions.Status.Finalized) ++ghostFinalized;
        } else {
            vm.roll(block.number + RANDOMNESS_DELAY + 1);
            _settleSubset(sid, mask);
            return false;
        }
        return true;
    }

    function _commitSome(uint256 sid, uint256 mask) internal {
        address[] memory list = _auditors(sid);
        IVotingModule.SignedCommit[] memory items = new IVotingModule.SignedCommit[](list.length);
        uint256 k = 0;
        for (uint256 j = 0; j < list.length; ++j) {
            if ((mask >> (2 * j)) & 3 == 0) continue; // about a quarter stay silent
            uint256 seed = uint256(keccak256(abi.encode(mask, j)));
            bytes32 c =
                voting.computeCommitment(sid, 0, list[j], _ballotFor(sid, list[j], seed), bytes32(seed));
            ballotOf[sid][list[j]] = seed;
            hasBallot[sid][list[j]] = true;
            if ((mask >> (2 * j)) & 3 == 1) {
                vm.prank(list[j]);
                try voting.commit(sid, 0, c) {} catch {}
            } else {
                items[k++] = _signCommit(sid, list[j], c);
            }
        }
        assembly ("memory-safe") {
            mstore(items, k)
        }
        if (k != 0) try voting.commitBatch(sid, 0, items) {} catch {}
    }

    function _revealSome(uint256 sid, uint256 mask) internal {
        address[] memory list = _auditors(sid);
        IVotingModule.RevealItem[] memory items = new IVotingModule.RevealItem[](list.length);
        uint256 k = 0;
        for (uint256 j = 0; j < list.length; ++j) {
            if (!hasBallot[sid][list[j]] || (mask >> (j + 64)) & 7 == 0) continue;
            uint256 seed = ballotOf[sid][list[j]];
            items[k++] = IVotingModule.RevealItem({
                auditor: list[j], verdicts: _ballotFor(sid, list[j], seed), salt: bytes32(seed)
            });
        }
        assembly ("memory-safe") {
            mstore(items, k)
        }
        if (k != 0) try voting.revealBatch(sid, 0, items) {} catch {}
    }

    function _settleSubset(uint256 sid, uint256 mask) internal {
        address[] memory list = _auditors(sid);
        address[] memory batch = new address[](list.length + 1);
        uint256 k = 0;
        for (uint256 j = 0; j < list.length; ++j) {
            if ((mask >> (j + 128)) & 1 == 1) batch[k++] = list[list.length - 1 - j];
        }
        if (mask % 5 == 0) batch[k++] = provider; // a stranger in the batch
        if (k == 0) return;
        assembly ("memory-safe") {
            mstore(batch, k)
        }
        try settlement.settleBatch(sid, 0, batch) returns (uint256 applied) {
            ghostSettled += applied;
        } catch {}
    }

    /// @dev A relayed batch of every auditor's signed commit, one item of which was copied and landed
    /// first by someone else.
    function commitBatchFrontRun(uint256 which, uint256 copied, uint256 votes) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        IAuditSessions.Status st = sessions.statusOf(sid);
        if (st != IAuditSessions.Status.KeysPublished && st != IAuditSessions.Status.Commit) return;
        address[] memory list = _auditors(sid);
        IVotingModule.SignedCommit[] memory items = new IVotingModule.SignedCommit[](list.length);
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 seed = uint256(keccak256(abi.encode(votes, i)));
            bytes32 c =
                voting.computeCommitment(sid, 0, list[i], _ballotFor(sid, list[i], seed), bytes32(seed));
            items[i] = _signCommit(sid, list[i], c);
        }
        IVotingModule.SignedCommit[] memory one = new IVotingModule.SignedCommit[](1);
        one[0] = items[copied % list.length];
        vm.prank(address(0xBAD));
        try voting.commitBatch(sid, 0, one) {} catch {}
        try voting.commitBatch(sid, 0, items) {
            for (uint256 i = 0; i < list.length; ++i) {
                ballotOf[sid][list[i]] = uint256(keccak256(abi.encode(votes, i)));
                hasBallot[sid][list[i]] = true;
            }
        } catch {}
    }

    /// @dev Reveal a random subset in one batch, after an attacker landed a copy of one item.
    function revealBatchFrontRun(uint256 which, uint256 mask, uint256 copied) external {
        uint256 sid = _pick(which);
        if (sid == 0 || sessions.statusOf(sid) != IAuditSessions.Status.Reveal) return;
        address[] memory list = _auditors(sid);
        IVotingModule.RevealItem[] memory items = new IVotingModule.RevealItem[](list.length);
        uint256 k = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            if ((mask >> i) & 1 == 0 || !hasBallot[sid][list[i]]) continue;
            uint256 seed = ballotOf[sid][list[i]];
            items[k++] = IVotingModule.RevealItem({
                auditor: list[i], verdicts: _ballotFor(sid, list[i], seed), salt: bytes32(seed)
            });
        }
        if (k == 0) return;
        assembly ("memory-safe") {
            mstore(items, k)
        }
        vm.prank(address(0xBAD));
        try voting.reveal(sid, 0, items[copied % k]) {} catch {}
        try voting.revealBatch(sid, 0, items) {} catch {}
    }

    function settleSome(uint256 which, uint256 seed) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        _settleSubset(sid, uint256(keccak256(abi.encode(seed))));
    }

    function passTime(uint256 blocks) external {
        vm.roll(block.number + bound(blocks, 1, 40));
        vm.warp(block.timestamp + bound(blocks, 1, 40) * 12);
    }

    function advanceOne(uint256 which) external {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        if (sessions.advance(sid) == IAuditSessions.Status.Finalized) ++ghostFinalized;
    }

    // ------------------------------------------------------- staking actions

    /// @dev Delegations at any moment, including between paginated draws.
    function delegate(uint256 who, uint256 to, uint256 amount) external {
        address d = delegators[who % delegators.length];
        address a = auditorAddrs[to % auditorAddrs.length];
        amount = bound(amount, 1e18, 2000e18);
        if (token.balanceOf(d) < amount) return;
        vm.prank(d);
        try staking.stake(a, amount) {} catch {}
    }

    /// @dev Withdrawal requests at any moment, including while the pool backs seats of open sessions.
    function withdraw(uint256 who, uint256 from, uint256 fraction) external {
        address a = auditorAddrs[from % auditorAddrs.length];
        address holder = who % 2 == 0 ? a : delegators[who % delegators.length];
        uint256 shares = staking.sharesOf(a, holder) * bound(fraction, 1, 100) / 100;
        if (shares == 0) return;
        vm.prank(holder);
        try staking.requestWithdrawal(a, shares) returns (uint256 id) {
            withdrawalIds.push(id);
        } catch {}
    }

    /// @dev A tier-2 auditor (4 of them for 3 seats per segment) leaves with all its own stake at any
    /// moment: before a snapshot it thins the tier (draws truly short), after one its locks are refused.
    function walkAway(uint256 which) external {
        address a = auditorAddrs[6 + which % 4];
        uint256 shares = staking.sharesOf(a, a);
        if (shares == 0) return;
        vm.prank(a);
        try staking.requestWithdrawal(a, shares) returns (uint256 id) {
            withdrawalIds.push(id);
        } catch {}
    }

    /// @dev An owner that retires at any moment: requests the withdrawal of some of its own stake,
    /// deregisters, or both (or registers again in its tier). While its pool stands in a snapshot some
    /// draw can read, the move must not lower what a lock of it may use.
    function retireAnyTime(uint256 which, uint256 mode, uint256 fraction) external {
        address a = auditorAddrs[which % auditorAddrs.length];
        mode = mode % 4;
        (uint8 tier, bool registered,) = staking.auditorOf(a);
        if (mode == 3) {
            vm.prank(a);
            try registry.register(tier, uint64(1) << tier, keccak256(abi.encode("x25519", a))) {} catch {}
            return;
        }
        bool held = _standsInSnapshot(a, tier);
        IStaking.SeatQuote memory before = staking.seatQuote(a);
        if (mode != 1) {
            uint256 shares = staking.sharesOf(a, a) * bound(fraction, 1, 100) / 100;
            if (shares != 0) {
                vm.prank(a);
                try staking.requestWithdrawal(a, shares) returns (uint256 id) {
                    withdrawalIds.push(id);
                } catch {}
            }
        }
        if (mode != 0 && registered) {
            vm.prank(a);
            registry.deregister();
        }
        if (!held) return;
        ++ghostSnapshotMoves;
        IStaking.SeatQuote memory q = staking.seatQuote(a);
        // 2 wei: the parked shares' value and the backing are rounded down separately.
        if ((before.eligible && !q.eligible) || q.free + 2 < before.free) ++ghostQuoteLowered;
    }

    function _standsInSnapshot(address a, uint8 tier) internal view returns (bool) {
        ISortition so = staking.sortition();
        (bool exists, uint256 leaf) = so.leafOf(tier, a);
        if (!exists) return false;
        uint256 cur = so.currentEpoch();
        for (uint256 e = cur; e + 2 >= cur && e >= 1; --e) {
            if (so.leafWeightAt(tier, e, leaf) != 0) return true;
        }
        return false;
    }

    function claim(uint256 which) external {
        if (withdrawalIds.length == 0) return;
        uint256 id = withdrawalIds[which % withdrawalIds.length];
        vm.warp(block.timestamp + 1 days);
        (Staking.Withdrawal memory w,,) = staking.withdrawalOf(id);
        vm.prank(w.owner);
        try staking.claimWithdrawal(id) {} catch {}
    }

    /// @dev A late staker deposits into a pool behind whatever sessions it backs now.
    function lateStake(uint256 to, uint256 amount) external {
        address a = auditorAddrs[to % auditorAddrs.length];
        if (_late[a].active) return;
        address l = lateStakerOf[a];
        amount = bound(amount, 1e18, 1000e18);
        if (token.balanceOf(l) < amount) return;
        vm.prank(l);
        try staking.stake(a, amount) returns (uint256, uint256 flow) {
            (, uint256 tail) = staking.ledgerOf(a);
            _late[a] = LateDeposit({amount: amount, flow: flow, tailAfter: tail, active: true});
        } catch {}
    }

    function drainAny(uint256 who) external {
        staking.drain(auditorAddrs[who % auditorAddrs.length], 8);
    }

    function commission(uint256 who, uint256 bps) external {
        address a = auditorAddrs[who % auditorAddrs.length];
        vm.prank(a);
        staking.setCommission(bound(bps, 0, 2000));
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

    function _c()
        internal
        view
        returns (
            TokenView t,
            Staking st,
            address core,
            address treasury,
            address draw,
            address vote,
            address settle
        )
    {
        address tokenAddr;
        address stakingAddr;
        (tokenAddr, stakingAddr, core, treasury, draw, vote, settle) = handler.contracts();
        return (TokenView(tokenAddr), Staking(stakingAddr), core, treasury, draw, vote, settle);
    }

    /// @dev Every token is somewhere known, and each contract holds exactly what its books say: the
    /// core the open pools, the modules nothing, Staking its pools, deposits, results and reserve.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_tokenConservation() public view {
        (
            TokenView t,
            Staking st,
            address core,
            address treasury,
            address draw,
            address vote,
            address settle
        ) = _c();
        uint256 sum = t.balanceOf(handler.providerAddr()) + t.balanceOf(address(handler))
            + t.balanceOf(address(st)) + t.balanceOf(core) + t.balanceOf(treasury) + t.balanceOf(draw)
            + t.balanceOf(vote) + t.balanceOf(settle) + _people(t);
        assertEq(sum, t.totalSupply(), "balances + pools + treasury == supply");
        uint256 books = st.totalPooled() + st.pendingDeposits() + st.storedRewards() + st.withdrawalReserve();
        assertEq(t.balanceOf(address(st)), books, "Staking holds its books");
        uint256[] memory sids = handler.sessionList();
        uint256 pools = 0;
        for (uint256 i = 0; i < sids.length; ++i) {
            pools += IAuditSessions(core).sessionOf(sids[i]).pool;
        }
        assertEq(t.balanceOf(core), pools, "core holds the open pools");
        assertEq(t.balanceOf(draw) + t.balanceOf(vote) + t.balanceOf(settle), 0, "modules hold nothing");
    }

    function _people(TokenView t) internal view returns (uint256 sum) {
        address[] memory auditors = handler.auditorList();
        address[] memory delegators = handler.delegatorList();
        for (uint256 i = 0; i < auditors.length; ++i) {
            sum += t.balanceOf(auditors[i]) + t.balanceOf(handler.lateStakerOf(auditors[i]));
        }
        for (uint256 i = 0; i < delegators.length; ++i) {
            sum += t.balanceOf(delegators[i]);
        }
    }

    /// @dev A seat is counted at most once: per segment, votes never exceed k_t, and the votes on record
    /// equal the non-abstaining seats of the auditors that revealed.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_noDoubleVotes() public view {
        (,, address core,,,,) = _c();
        IAuditSessions sessions = IAuditSessions(core);
        uint256[] memory sids = handler.sessionList();
        for (uint256 i = 0; i < sids.length; ++i) {
            IAuditSessions.Session memory s = sessions.sessionOf(sids[i]);
            IAuditSessions.SessionParams memory p = sessions.paramsAt(s.paramsVersion);
            (uint256 revealedCount, uint256[] memory expected) = _revealedSeats(sids[i], s.segmentCount);
            for (uint256 g = 0; g < s.segmentCount; ++g) {
                uint256 lane = SegmentWord.lane(sessions.segmentWord(sids[i], 0, g >> 3), g);
                uint256 votes = SegmentWord.passVotes(lane) + SegmentWord.failVotes(lane);
                assertLe(votes, p.seatsPerTier[SegmentWord.tier(lane)], "votes per segment <= k_t");
                assertEq(votes, expected[g], "votes == revealed, non-abstaining seats");
            }
            assertEq(s.revealedCount, revealedCount, "revealed count");
        }
    }

    function _revealedSeats(uint256 sid, uint256 n)
        internal
        view
        returns (uint256 revealedCount, uint256[] memory perSegment)
    {
        (,,,,, address vote,) = _c();
        address[] memory list = handler.auditorsOf(sid);
        uint256[] memory words = new uint256[](list.length);
        for (uint256 j = 0; j < list.length; ++j) {
            words[j] = handler.seatWordOf(sid, list[j]);
        }
        perSegment = new uint256[](n);
        (uint256[] memory ballots, bool[] memory revealed) = IVotingModule(vote).ballotsOf(sid, list, words);
        for (uint256 j = 0; j < list.length; ++j) {
            if (!revealed[j]) continue;
            ++revealedCount;
            uint256[] memory segs = handler.seatsOf(sid, list[j]);
            for (uint256 k = 0; k < segs.length; ++k) {
                if (!Verdicts.abstains(ballots[j], k)) ++perSegment[segs[k]];
            }
        }
    }

    /// @dev Share solvency, and locks that match the seats: redeeming every share never yields more than
    /// the pool holds; locked stake never exceeds what backs it, covers every seat of a session not yet
    /// settled for the auditor, and never exceeds every seat it ever took.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_sharesAndLocks() public view {
        (, Staking st,,,,, address settle) = _c();
        address[] memory auditors = handler.auditorList();
        uint256[] memory sids = handler.sessionList();
        for (uint256 i = 0; i < auditors.length; ++i) {
            Staking.PoolView memory p = st.poolOf(auditors[i]);
            assertLe(st.previewRedeem(auditors[i], p.totalShares), p.assets + 1, "full redemption <= assets");
            assertLe(p.locked, p.backing + p.pendingDeposits + p.assets, "locks are backed");
            uint256 unsettled = 0;
            uint256 all = 0;
            for (uint256 k = 0; k < sids.length; ++k) {
                uint256 seats = handler.seatsOf(sids[k], auditors[i]).length * 8e18;
                all += seats;
                if (!SettleView(settle).isSettled(sids[k], 0, auditors[i])) unsettled += seats;
            }
            assertLe(unsettled, p.locked, "every unsettled seat is locked");
            assertLe(p.locked, all, "no lock without a seat");
        }
    }

    /// @dev A session's rewards and slashes land only on shares that existed at its draw: a late staker
    /// whose deposit waited behind every session drawn before it, and behind which no session was drawn,
    /// holds exactly what it deposited once its deposit became shares.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_resultsLandOnDrawTimeSharesOnly() public view {
        (, Staking st,,,,,) = _c();
        address[] memory auditors = handler.auditorList();
        for (uint256 i = 0; i < auditors.length; ++i) {
            ProtocolHandler.LateDeposit memory d = handler.lateDeposit(auditors[i]);
            if (!d.active) continue;
            (, uint256 tail) = st.ledgerOf(auditors[i]);
            if (tail != d.tailAfter) continue; // a session was drawn behind the deposit: it shares that one
            address l = handler.lateStakerOf(auditors[i]);
            (uint256 shares, uint256 pending,) = st.positionOf(auditors[i], l);
            if (pending != 0) continue; // still waiting behind earlier sessions
            uint256 value = st.previewRedeem(auditors[i], shares);
            uint256 diff = value > d.amount ? value - d.amount : d.amount - value;
            assertLe(diff, 1e9, "untouched by sessions drawn before the deposit");
        }
    }

    /// @dev Once every deadline has passed, `advance` alone (callable by anyone) brings every session to
    /// a terminal state.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_sessionsAlwaysTerminate() public {
        (,, address core,,,,) = _c();
        uint256[] memory sids = handler.sessionList();
        vm.roll(block.number + 1000);
        for (uint256 i = 0; i < sids.length; ++i) {
            for (uint256 step = 0; step < 3; ++step) {
                vm.prank(address(0xDEAD));
                AdvanceView(core).advance(sids[i]);
            }
            IAuditSessions.Status st = IAuditSessions(core).statusOf(sids[i]);
            assertTrue(
                st == IAuditSessions.Status.Finalized || st == IAuditSessions.Status.Expired
                    || st == IAuditSessions.Status.Cancelled,
                "terminal"
            );
        }
    }

    /// @dev A draw that fails is refunded (the pool minus R per drawn seat) only when nobody refused a
    /// stake lock anywhere in its panel; after refusals (withdrawals while the session draws) the
    /// provider gets nothing back (`RefusedLocksBuyNoRefund`).
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_drawRefundOnlyWhenTheSnapshotIsShort() public view {
        (,, address core,,,,) = _c();
        uint256[] memory sids = handler.sessionList();
        for (uint256 i = 0; i < sids.length; ++i) {
            uint256 r = handler.ghostRefusalsPlusOne(sids[i]);
            if (r == 0) continue;
            IAuditSessions.Session memory s = IAuditSessions(core).sessionOf(sids[i]);
            uint256 refund = handler.ghostDrawRefund(sids[i]);
            assertEq(r - 1, handler.ghostRefusals(sids[i]), "every refusal of the panel counted");
            if (r > 1) {
                assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.DrawRefused), "refused");
                assertEq(refund, 0, "no refund after refused locks");
            } else {
                assertEq(uint256(s.termination), uint256(IAuditSessions.Termination.DrawFailed), "short");
                assertTrue(refund > 0, "a short snapshot is refunded");
            }
        }
    }

    /// @dev Settled auditors never exceed drawn ones, every settlement is counted once, and a fully
    /// settled session has an empty pool.
    /// @dev No owner move of snapshot stake lowered its seat quote, so no lock a draw of that snapshot
    /// asks is refused because of its owner's own withdrawal or deregistration (docs/protocol-v2.md,
    /// 5.1; Staking and the draw decide every lock from the quote). Token conservation, share solvency
    /// and draw-time results are checked above with the same traffic.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_snapshotStakeNeverRefusedByItsOwner() public view {
        assertEq(handler.ghostQuoteLowered(), 0, "an owner's move lowered the quote of snapshot stake");
    }

    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_settlementBooks() public view {
        (,, address core,,,,) = _c();
        uint256[] memory sids = handler.sessionList();
        uint256 settled = 0;
        for (uint256 i = 0; i < sids.length; ++i) {
            IAuditSessions.Session memory s = IAuditSessions(core).sessionOf(sids[i]);
            assertLe(s.settledCount, s.auditorCount, "settled <= drawn");
            if (s.auditorCount != 0 && s.settledCount == s.auditorCount) assertEq(s.pool, 0, "pool emptied");
            settled += s.settledCount;
        }
        assertEq(settled, handler.ghostSettled(), "every settlement counted once");
    }
}

/// @notice The handler must reach every phase, or the invariants above prove little.
contract ProtocolHandlerReachTest is TestBase {
    function test_handlerReachesEveryEnding() public {
        uint256[9] memory byStatus;
        uint256 settled = 0;
        for (uint256 run = 0; run < 6; ++run) {
            ProtocolHandler h = new ProtocolHandler();
            for (uint256 i = 0; i < 100; ++i) {
                uint256 r = uint256(keccak256(abi.encode(run, i)));
                uint256 f = r % 10;
                if (f == 0) h.open(r >> 8, r >> 80);
                else if (f == 1) h.drawSome(r >> 8, r >> 80);
                else if (f == 2) h.delegate(r >> 8, r >> 80, r >> 160);
                else if (f == 3) h.withdraw(r >> 8, r >> 80, r >> 160);
                else if (f == 4) h.lateStake(r >> 8, r >> 80);
                else if (f == 5) h.passTime(r >> 8);
                else if (f == 6 && r % 3 == 0) h.walkAway(r >> 8);
                else h.drive(r >> 8, r >> 80, r >> 160);
            }
            (,, address core,,,,) = h.contracts();
            uint256[] memory sids = h.sessionList();
            for (uint256 i = 0; i < sids.length; ++i) {
                byStatus[uint256(IAuditSessions(core).statusOf(sids[i]))]++;
            }
            settled += h.ghostSettled();
        }
        assertTrue(byStatus[uint256(IAuditSessions.Status.Finalized)] > 0, "some sessions finalize");
        assertTrue(byStatus[uint256(IAuditSessions.Status.Expired)] > 0, "some sessions are abandoned");
        assertTrue(settled > 0, "auditors get settled");
    }

    /// @dev `retireAnyTime` moves stake that stands in a readable snapshot (else its invariant is void).
    function test_handlerRetiresSnapshotStake() public {
        ProtocolHandler h = new ProtocolHandler();
        for (uint256 i = 0; i < 60; ++i) {
            uint256 r = uint256(keccak256(abi.encode("retire", i)));
            if (r % 3 == 0) h.retireAnyTime(r >> 8, r >> 80, r >> 160);
            else if (r % 3 == 1) h.open(r >> 8, r >> 80);
            else h.drawSome(r >> 8, r >> 80);
        }
        assertTrue(h.ghostSnapshotMoves() > 5, "snapshot stake moved");
        assertEq(h.ghostQuoteLowered(), 0, "quote kept");
    }

    /// @dev Another session's result (an entry of key 0xB0B0 + tail, resolved at once) slashes all of
    /// `a`'s pool.
    function _slashOut(ProtocolHandler h, address a) internal {
        (, address stakingAddr,,, address draw,, address settle) = h.contracts();
        Staking st = Staking(stakingAddr);
        (, uint256 tail) = st.ledgerOf(a);
        (uint8 tier,,) = st.auditorOf(a);
        vm.prank(draw);
        (bool ok,, uint256 entry) = st.lockSeat(a, tier, 0xB0B0 + tail, 0, 0);
        assertTrue(ok, "setup: entry");
        IStaking.SessionResult[] memory r = new IStaking.SessionResult[](1);
        r[0] = IStaking.SessionResult({
            auditor: a,
            entry: uint32(entry),
            reward: 0,
            slash: uint96(st.poolOf(a).assets),
            repMul: 1e18,
            repAdd: 0
        });
        vm.prank(settle);
        st.resolve(0xB0B0 + tail, r);
    }

    /// @dev The handler's own actions reach both failed-draw endings `invariant_drawRefundOnlyWhen...`
    /// tells apart: refused locks (walk away after the opening) and a short snapshot (before it).
    function test_handlerReachesBothFailedDraws() public {
        ProtocolHandler h = new ProtocolHandler();
        h.openThin(1);
        // Owners walking away can no longer refuse snapshot stake (docs/protocol-v2.md 5.1): the
        // refusals come from two tier-2 auditors slashed out by other sessions after the snapshot.
        address[] memory list = h.auditorList();
        _slashOut(h, list[6]);
        _slashOut(h, list[7]);
        h.drawSome(0, 20);
        vm.roll(10_000); // a later epoch: its snapshot has the slashed-out pools at weight 0
        h.openThin(1);
        h.drawSome(1, 20);
        uint256[] memory sids = h.sessionList();
        assertTrue(h.ghostRefusalsPlusOne(sids[0]) > 1, "refused locks");
        assertEq(h.ghostDrawRefund(sids[0]), 0, "no refund");
        assertEq(h.ghostRefusalsPlusOne(sids[1]), 1, "short snapshot");
        assertTrue(h.ghostDrawRefund(sids[1]) > 0, "refunded");
    }
}

interface TokenView {
    function balanceOf(address) external view returns (uint256);
    function totalSupply() external view returns (uint256);
}

interface SettleView {
    function isSettled(uint256 sessionId, uint256 round, address auditor) external view returns (bool);
}

interface AdvanceView {
    function advance(uint256 sessionId) external returns (IAuditSessions.Status);
}
