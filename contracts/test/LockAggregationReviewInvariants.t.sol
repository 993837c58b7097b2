// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase, Vm} from "./utils/TestBase.sol";
import {StakingFixture} from "./utils/StakingFixture.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IVotingModule} from "../src/interfaces/IVotingModule.sol";
import {Staking} from "../src/Staking.sol";
import {SeatWord} from "../src/libraries/SeatWord.sol";
import {LedgerPacking} from "../src/libraries/LedgerPacking.sol";

/// @notice Adversarial traffic against the draw's aggregated locks (one `seatQuote` and one `lockSeats`
/// per auditor and draw call): thin stakes (5 to 9 seats of 20 TRUST each), a seat cap of 12, paged
/// draws of 1 to 9 seats interleaved with top-ups, delegations, withdrawal requests and claims,
/// deregistrations, slashes and rewards settled in any order by other sessions, and drains.
contract LockReviewHandler is StakingFixture {
    uint256 internal constant MAX_SESSIONS = 8;
    uint256 public constant LOCK = 20e18;

    uint256[] public sessionIds;
    address[] public delegators;
    uint256[] internal _withdrawalIds;
    address public immutable runner;
    /// @notice Slashes delivered by results (`SessionResolved`) and taken from pools (`SessionApplied`).
    uint256 public ghostSlashOwed;
    uint256 public ghostSlashTaken;
    uint256 public ghostLocks;

    bytes32 internal constant RESOLVED =
        keccak256("SessionResolved(address,uint256,uint256,uint256,uint256,uint256,bool)");
    bytes32 internal constant APPLIED = keccak256("SessionApplied(address,uint256,uint256,uint256,uint256)");
    bytes32 internal constant LOCKED = keccak256("SeatLocked(address,uint256,uint256,uint256)");

    /// @dev Tally the slashes owed and taken, and the locks, from the logs of the action.
    modifier sweep() {
        _;
        Vm.Log[] memory logs = vm.getRecordedLogs();
        for (uint256 i = 0; i < logs.length; ++i) {
            bytes32 t = logs[i].topics[0];
            if (t == RESOLVED) {
                (,,, uint256 slash,) = abi.decode(logs[i].data, (uint256, uint256, uint256, uint256, bool));
                ghostSlashOwed += slash;
            } else if (t == APPLIED) {
                (, uint256 slashed,) = abi.decode(logs[i].data, (uint256, uint256, uint256));
                ghostSlashTaken += slashed;
            } else if (t == LOCKED) {
                ++ghostLocks;
            }
        }
    }

    constructor() {
        runner = msg.sender;
        _deploy();
        IAuditSessions.SessionParams memory p = _sessionParams();
        p.seatCap = 12;
        p.slashAmount = uint96(LOCK);
        vm.prank(owner);
        sessions.setParams(p);
        for (uint256 i = 0; i < 10; ++i) {
            _addAuditors(1, 1, 100e18 + i * 10e18);
        }
        for (uint256 i = 0; i < 2; ++i) {
            address d = address(uint160(0xD000 + i));
            delegators.push(d);
            token.transfer(d, 20_000e18);
            vm.prank(d);
            token.approve(address(staking), type(uint256).max);
        }
        _nextEpoch();
        vm.recordLogs();
    }

    // ------------------------------------------------------------ accessors

    function auditorList() external view returns (address[] memory) {
        return auditorAddrs;
    }

    function sessionList() external view returns (uint256[] memory) {
        return sessionIds;
    }

    function delegatorList() external view returns (address[] memory) {
        return delegators;
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

    function providerAddr() external view returns (address) {
        return provider;
    }

    function seatWordOf(uint256 sid, address a) external view returns (uint256) {
        return _seatWord(sid, a);
    }

    function _pick(uint256 seed) internal view returns (uint256) {
        if (sessionIds.length == 0) return 0;
        return sessionIds[seed % sessionIds.length];
    }

    // ------------------------------------------------------- session actions

    function open(uint256 nSeed) external sweep {
        if (sessionIds.length >= MAX_SESSIONS) return;
        sessionIds.push(_open(_uniform(bound(nSeed, 1, 6), 1), 500e18));
    }

    /// @dev One page of a draw: 1 to 9 seats (whole segments), so pages alternate with stake changes.
    function drawPage(uint256 which, uint256 maxSeats) external sweep {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        try sessions.draw(sid, bound(maxSeats, 1, 9)) {} catch {}
    }

    /// @dev Push one session up to `steps` phases: keys (sometimes withheld), commits and reveals of
    /// random subsets (random verdicts, so some are slashed), then settlement of a random subset.
    function drive(uint256 which, uint256 steps, uint256 mask) external sweep {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        steps = bound(steps, 1, 6);
        for (uint256 i = 0; i < steps; ++i) {
            if (!_step(sid, mask, false)) return;
            mask = uint256(keccak256(abi.encode(mask)));
        }
    }

    function settleSome(uint256 which, uint256 mask) external sweep {
        uint256 sid = _pick(which);
        if (sid == 0) return;
        _settle(sid, uint256(keccak256(abi.encode(mask))), false);
    }

    function passTime(uint256 blocks) external {
        vm.roll(block.number + bound(blocks, 1, 40));
        vm.warp(block.timestamp + bound(blocks, 1, 40) * 12);
    }

    /// @dev The end of the story (called by the test after each run, not by the fuzzer): every session
    /// to its end, every auditor settled, every ledger drained.
    function finishAll() external sweep {
        if (msg.sender != runner && runner != address(0)) return;
        for (uint256 i = 0; i < sessionIds.length; ++i) {
            uint256 sid = sessionIds[i];
            for (uint256 s = 0; s < 64 && _step(sid, uint256(keccak256(abi.encode(sid, s))), true); ++s) {}
        }
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        for (uint256 i = 0; i < sessionIds.length; ++i) {
            _settle(sessionIds[i], type(uint256).max, true);
        }
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            staking.drain(auditorAddrs[i], 2 * staking.LEDGER_CAPACITY());
        }
    }

    function _step(uint256 sid, uint256 mask, bool finishing) internal returns (bool) {
        IAuditSessions.Status st = sessions.statusOf(sid);
        if (st == IAuditSessions.Status.Created || _drawing(sid)) {
            vm.roll(block.number + RANDOMNESS_DELAY + 1);
            try sessions.draw(sid, finishing ? 40 : bound(mask, 1, 9)) {}
            catch {
                // Past its deadline a draw reverts; `advance` records the expiry.
                sessions.advance(sid);
                return sessions.statusOf(sid) != st;
            }
        } else if (st == IAuditSessions.Status.Drawing) {
            if (mask % 8 == 0) {
                vm.roll(block.number + 25); // the provider withholds its keys
            } else {
                vm.prank(provider);
                try sessions.publishKeys(sid, "manifest") {} catch {}
            }
            sessions.advance(sid);
        } else if (st == IAuditSessions.Status.KeysPublished || st == IAuditSessions.Status.Commit) {
            _vote(sid, mask, true);
            vm.roll(block.number + 21);
            sessions.advance(sid);
        } else if (st == IAuditSessions.Status.Reveal) {
            _vote(sid, mask, false);
            vm.roll(block.number + 41);
            sessions.advance(sid);
        } else {
            if (!finishing) {
                vm.roll(block.number + RANDOMNESS_DELAY + 1);
                _settle(sid, mask, false);
            }
            return false;
        }
        return true;
    }

    /// @dev Commit (or reveal) for a random subset; verdict bits follow `mask`, so votes disagree.
    function _vote(uint256 sid, uint256 mask, bool commit) internal {
        address[] memory list = _auditors(sid);
        for (uint256 j = 0; j < list.length; ++j) {
            if ((mask >> j) & 3 == 0) continue; // about a quarter stay silent
            uint256 v = uint256(keccak256(abi.encode(sid, list[j]))) % 4 == 0 ? 1 : 0;
            uint256 verdicts = _verdicts(sid, list[j], v == 1 ? type(uint256).max : 0, false);
            if (commit) {
                bytes32 c = _commitment(sid, list[j], verdicts);
                vm.prank(list[j]);
                try voting.commit(sid, 0, c) {} catch {}
            } else {
                IVotingModule.RevealItem[] memory items = new IVotingModule.RevealItem[](1);
                items[0] = IVotingModule.RevealItem({
                    auditor: list[j], verdicts: verdicts, salt: _salt(sid, list[j])
                });
                try voting.revealBatch(sid, 0, items) {} catch {}
            }
        }
    }

    function _settle(uint256 sid, uint256 mask, bool strictAll) internal {
        address[] memory list = _auditors(sid);
        address[] memory batch = new address[](list.length);
        uint256 k = 0;
        for (uint256 j = 0; j < list.length; ++j) {
            if ((mask >> j) & 1 == 1) batch[k++] = list[list.length - 1 - j]; // any order
        }
        if (k == 0) return;
        assembly ("memory-safe") {
            mstore(batch, k)
        }
        if (strictAll) {
            IAuditSessions.Status st = sessions.statusOf(sid);
            if (
                st == IAuditSessions.Status.Finalized || st == IAuditSessions.Status.Cancelled
                    || st == IAuditSessions.Status.Expired
            ) settlement.settleBatch(sid, 0, batch);
        } else {
            try settlement.settleBatch(sid, 0, batch) {} catch {}
        }
    }

    // ------------------------------------------------------- staking actions

    /// @dev Self top-ups and delegations at any moment, including between two pages of a draw.
    function stakeMore(uint256 who, uint256 to, uint256 amount) external sweep {
        address a = auditorAddrs[to % auditorAddrs.length];
        address holder = who % 3 == 0 ? a : delegators[who % delegators.length];
        amount = bound(amount, 1e18, 300e18);
        if (token.balanceOf(holder) < amount) return;
        vm.prank(holder);
        try staking.stake(a, amount) {} catch {}
    }

    /// @dev The attack of SlashableStakeBacksEverySeat: the seated auditor with the least free stake
    /// tops up (or is delegated to) during a paged draw, and the draw goes on page by page.
    function stakeBetweenPages(uint256 which, uint256 who, uint256 amount, uint256 page) external sweep {
        uint256 sid = _pick(which);
        if (sid == 0 || !_drawing(sid)) return;
        address[] memory seated = _auditors(sid);
        if (seated.length == 0) return;
        address a = seated[0];
        uint256 least = type(uint256).max;
        for (uint256 i = 0; i < seated.length; ++i) {
            Staking.PoolView memory p = staking.poolOf(seated[i]);
            uint256 free = p.backing > p.locked ? p.backing - p.locked : 0;
            if (free < least) (least, a) = (free, seated[i]);
        }
        address holder = who % 2 == 0 ? a : delegators[who % delegators.length];
        amount = bound(amount, 20e18, 200e18);
        if (token.balanceOf(holder) < amount) return;
        vm.prank(holder);
        try staking.stake(a, amount) {} catch {}
        for (uint256 i = 0; i < 4 && _drawing(sid); ++i) {
            try sessions.draw(sid, bound(page, 1, 9)) {} catch {}
        }
    }

    /// @dev Withdrawal requests at any moment, including while the pool backs seats being drawn.
    function withdraw(uint256 who, uint256 from, uint256 fraction) external sweep {
        address a = auditorAddrs[from % auditorAddrs.length];
        address holder = who % 2 == 0 ? a : delegators[who % delegators.length];
        uint256 shares = staking.sharesOf(a, holder) * bound(fraction, 1, 60) / 100;
        if (shares == 0) return;
        vm.prank(holder);
        try staking.requestWithdrawal(a, shares) returns (uint256 id) {
            _withdrawalIds.push(id);
        } catch {}
    }

    function claim(uint256 which) external sweep {
        if (_withdrawalIds.length == 0) return;
        uint256 id = _withdrawalIds[which % _withdrawalIds.length];
        vm.warp(block.timestamp + 1 days);
        (Staking.Withdrawal memory w,,) = staking.withdrawalOf(id);
        vm.prank(w.owner);
        try staking.claimWithdrawal(id) {} catch {}
    }

    /// @dev Deregister, or register again (the snapshot still holds the old weight for a while).
    function toggleRegistration(uint256 who) external sweep {
        address a = auditorAddrs[who % auditorAddrs.length];
        (, bool registered,) = staking.auditorOf(a);
        vm.prank(a);
        if (registered) {
            try registry.deregister() {} catch {}
        } else {
            try registry.register(1, 2, keccak256(abi.encode("x25519", a))) {} catch {}
        }
    }

    function drainAny(uint256 who, uint256 n) external sweep {
        staking.drain(auditorAddrs[who % auditorAddrs.length], bound(n, 1, 8));
    }
}

interface TokenView {
    function balanceOf(address) external view returns (uint256);
    function totalSupply() external view returns (uint256);
}

/// @notice Invariants of the aggregated locks, each over 100 runs x 100 calls (10,000 calls).
contract LockAggregationReviewInvariantsTest is TestBase {
    struct FuzzSelector {
        address addr;
        bytes4[] selectors;
    }

    LockReviewHandler internal handler;
    bool internal _finished;

    function setUp() public {
        handler = new LockReviewHandler();
    }

    function targetContracts() public view returns (address[] memory targets) {
        targets = new address[](1);
        targets[0] = address(handler);
    }

    function targetSelectors() public view returns (FuzzSelector[] memory s) {
        s = new FuzzSelector[](1);
        bytes4[] memory sel = new bytes4[](11);
        sel[0] = LockReviewHandler.open.selector;
        sel[1] = LockReviewHandler.drawPage.selector;
        sel[2] = LockReviewHandler.drive.selector;
        sel[3] = LockReviewHandler.settleSome.selector;
        sel[4] = LockReviewHandler.passTime.selector;
        sel[5] = LockReviewHandler.stakeMore.selector;
        sel[6] = LockReviewHandler.withdraw.selector;
        sel[7] = LockReviewHandler.claim.selector;
        sel[8] = LockReviewHandler.toggleRegistration.selector;
        sel[9] = LockReviewHandler.drainAny.selector;
        sel[10] = LockReviewHandler.stakeBetweenPages.selector;
        s[0] = FuzzSelector({addr: address(handler), selectors: sel});
    }

    function _staking() internal view returns (Staking st) {
        (, address s,,,,,) = handler.contracts();
        st = Staking(s);
    }

    /// @dev A pool's locked stake is exactly the locked stake of its pending SESSION entries (a lock is
    /// released once, when its entry applies), never more than the pool holds, and - walking the ledger
    /// from its head - each SESSION entry's lock never exceeds what is left for its slash when it applies,
    /// every earlier lock slashed in full and every earlier withdrawal redeemed at the price of then
    /// (SlashableStakeBacksEverySeat; a few wei of share rounding).
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_lockedIsPendingEntriesAndWithinStake() public view {
        Staking st = _staking();
        address[] memory list = handler.auditorList();
        for (uint256 i = 0; i < list.length; ++i) {
            Staking.PoolView memory p = st.poolOf(list[i]);
            (uint256 head, uint256 tail) = st.ledgerOf(list[i]);
            assertEq(
                p.locked,
                _walkLedger(st, list[i], p, head, tail),
                "locked stake = the locks of pending entries"
            );
            assertLe(p.locked, p.assets + p.pendingDeposits, "locked stake within the pool's stake");
        }
    }

    /// @dev Applies the pending entries from the head on a copy of the pool, each SESSION entry slashed in
    /// full (the worst case), each FLOW redeeming its withdrawal shares at the price of then and adding its
    /// deposits: every lock must be collectable from what is left when its entry applies. Shares still in the
    /// pool (parked, or queued in a later FLOW) bear every entry ahead of them, as the ledger applies them
    /// (docs/protocol-v2.md 5.1: locks taken ahead of a batch are shared pro rata with it).
    function _walkLedger(Staking st, address a, Staking.PoolView memory p, uint256 head, uint256 tail)
        internal
        view
        returns (uint256 sum)
    {
        uint256 assets = p.assets;
        uint256 shares = p.totalShares;
        for (uint256 e = head; e < tail; ++e) {
            (uint256 word,) = st.entryWordOf(a, e);
            if (LedgerPacking.kind(word) == LedgerPacking.KIND_SESSION) {
                (,, uint256 locked,) = LedgerPacking.openFields(word);
                sum += locked;
                assertLe(locked, assets + 1e6, "SlashableStakeBacksEverySeat: a lock its slash cannot reach");
                assets = assets > locked ? assets - locked : 0;
            } else {
                Staking.Flow memory f = st.flowOf(a, e);
                if (f.withdrawShares != 0 && f.withdrawGeneration == p.generation && shares != 0) {
                    uint256 out = f.withdrawShares >= shares ? assets : assets * f.withdrawShares / shares;
                    assets -= out;
                    shares = f.withdrawShares >= shares ? 0 : shares - f.withdrawShares;
                }
                if (f.deposits != 0) {
                    shares += assets == 0 || shares == 0 ? f.deposits : f.deposits * shares / assets;
                    assets += f.deposits;
                }
            }
        }
    }

    /// @dev Aggregation loses nothing: every seated auditor's pending entry locks exactly seats x lock,
    /// the seat cap holds and no segment seats an auditor twice (k seats per drawn segment, bitmaps).
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_entryLocksEqualPerSeatLocks() public view {
        Staking st = _staking();
        address[] memory list = handler.auditorList();
        uint256[] memory sids = handler.sessionList();
        uint256 lock = handler.LOCK();
        for (uint256 s = 0; s < sids.length; ++s) {
            uint256 seats = 0;
            for (uint256 i = 0; i < list.length; ++i) {
                uint256 w = handler.seatWordOf(sids[s], list[i]);
                if (w == 0) continue;
                uint256 count = SeatWord.count(w);
                seats += count;
                assertLe(count, 12, "seat cap");
                (uint256 word,) = st.entryWordOf(list[i], SeatWord.entry(w));
                if (word == 0) continue; // applied: its lock was released
                (,, uint256 locked,) = LedgerPacking.openFields(word);
                assertEq(locked, count * lock, "entry lock = seats x lock");
            }
            assertEq(seats, IAuditSessionsView(_core()).sessionOf(sids[s]).drawnSeats, "seats = drawn seats");
        }
    }

    /// @dev Every token is somewhere known, and Staking holds exactly what its books say.
    /// forge-config: default.invariant.runs = 100
    /// forge-config: default.invariant.depth = 100
    function invariant_tokenConservation() public view {
        (address tok, address s, address core, address tre, address dm, address vm_, address sm) =
            handler.contracts();
        TokenView t = TokenView(tok);
        Staking st = Staking(s);
        assertEq(
            t.balanceOf(s),
            uint256(st.totalPooled()) + st.storedRewards() + st.pendingDeposits() + st.withdrawalReserve(),
            "Staking holds its books"
        );
        assertEq(t.balanceOf(dm) + t.balanceOf(vm_) + t.balanceOf(sm), 0, "modules hold nothing");
        uint256 sum = t.balanceOf(s) + t.balanceOf(core) + t.balanceOf(tre) + t.balanceOf(address(handler))
            + t.balanceOf(handler.providerAddr());
        address[] memory a = handler.auditorList();
        for (uint256 i = 0; i < a.length; ++i) {
            sum += t.balanceOf(a[i]);
        }
        address[] memory d = handler.delegatorList();
        for (uint256 i = 0; i < d.length; ++i) {
            sum += t.balanceOf(d[i]);
        }
        assertEq(sum, t.totalSupply(), "token conservation");
    }

    /// @dev After every run: each session ends, every auditor is settled, every ledger drains, and then
    /// no stake is locked anywhere (every lock was released, exactly once by the invariants above).
    function afterInvariant() public {
        handler.finishAll();
        Staking st = _staking();
        address[] memory list = handler.auditorList();
        for (uint256 i = 0; i < list.length; ++i) {
            (uint256 head, uint256 tail) = st.ledgerOf(list[i]);
            assertEq(head, tail, "every ledger entry applied");
            assertEq(st.poolOf(list[i]).locked, 0, "every lock released");
        }
        invariant_tokenConservation();
        assertEq(
            handler.ghostSlashTaken(), handler.ghostSlashOwed(), "SlashableStakeBacksEverySeat: slash capped"
        );
    }

    function _core() internal view returns (address core) {
        (,, core,,,,) = handler.contracts();
    }
}

interface IAuditSessionsView {
    function sessionOf(uint256 sid) external view returns (IAuditSessions.Session memory);
}

