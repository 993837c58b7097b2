// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {Vm} from "../utils/TestBase.sol";
import {AttackKit} from "./AttackKit.sol";
import {TrustToken} from "../../src/TrustToken.sol";
import {Treasury} from "../../src/Treasury.sol";
import {Staking} from "../../src/Staking.sol";
import {StakingLedger} from "../../src/StakingLedger.sol";
import {AuditorRegistry} from "../../src/AuditorRegistry.sol";
import {LookaheadRandomness} from "../../src/LookaheadRandomness.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";
import {DrawModule} from "../../src/modules/DrawModule.sol";
import {VotingModule} from "../../src/modules/VotingModule.sol";
import {SettlementModule} from "../../src/modules/SettlementModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";
import {IVotingModule} from "../../src/interfaces/IVotingModule.sol";
import {ISettlementModule} from "../../src/interfaces/ISettlementModule.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {ISortition} from "../../src/interfaces/ISortition.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";
import {SeatWord} from "../../src/libraries/SeatWord.sol";
import {SegmentWord} from "../../src/libraries/SegmentWord.sol";

/// @title AttackBase
/// @notice The adapter between the attack tests and protocol v2 (docs/protocol-v2.md): the session
/// core with its draw, voting and settlement modules, Staking v2 (epoch snapshots, per-auditor FIFO
/// ledger) and lookahead randomness. Every protocol call the attacks make, and nothing else; the
/// attacks and their property assertions do not change with the protocol version.
/// @dev Deployment mirrors contracts/test/utils/SessionsFixture.sol and StakingFixture.sol (lookahead
/// randomness with delay 2, epochs of 50 blocks). Honest-operation choices, none of which helps or
/// hinders an attacker:
/// - sessions open at the first block of the next epoch, so every stake change made before the
///   opening is in the snapshot the session draws from (a provider opening mid-epoch would draw from
///   an older snapshot: the same property, with stale weights);
/// - `_finalize` also fixes the slash randomness as soon as its target block is sealed (anyone may);
/// - values are read after draining the pool's ledger (anyone may), so they include every applied
///   result, and the adapter records each result's slash when its ledger entry is applied.
abstract contract AttackBase is AttackKit {
    uint256 private constant RANDOMNESS_DELAY = 2;
    uint256 internal constant EPOCH_BLOCKS = 50;
    uint256 private constant DRAIN_ALL = 256; // Staking.LEDGER_CAPACITY

    TrustToken internal token;
    Treasury internal treasury;
    Staking internal staking;
    AuditorRegistry internal registry;
    LookaheadRandomness internal randomness;
    AuditSessions internal sessions;
    DrawModule internal drawModule;
    VotingModule internal voting;
    SettlementModule internal settlement;
    ISortition internal sortition;
    address internal owner = address(0x0A11);
    address private _providerAddr;
    address[] private _allAuditors;
    mapping(address => uint256[]) private _withdrawalIds;
    /// @dev Session of each (auditor, ledger entry), to attribute SessionApplied events.
    mapping(address => mapping(uint256 => uint256)) private _entrySession;

    // ------------------------------------------------------------- deploy

    function _deployProtocol() internal override {
        Config memory c = _config();
        _rollTo(100);
        _providerAddr = _newAccount();
        token = new TrustToken(address(this), 1e9 * 1e18);
        treasury = new Treasury(token, owner);
        staking = new Staking(token, owner, address(treasury), EPOCH_BLOCKS, _stakingParams(c));
        sortition = staking.sortition();
        registry = new AuditorRegistry(IStaking(address(staking)), owner);
        randomness = new LookaheadRandomness(RANDOMNESS_DELAY);
        sessions = new AuditSessions(
            token,
            IStaking(address(staking)),
            IRandomness(address(randomness)),
            address(treasury),
            owner,
            _sessionParams(c)
        );
        drawModule = new DrawModule(address(sessions), IStaking(address(staking)));
        voting = new VotingModule(IAuditSessions(address(sessions)), IDrawModule(address(drawModule)));
        settlement = new SettlementModule(
            token,
            IAuditSessions(address(sessions)),
            IDrawModule(address(drawModule)),
            IVotingModule(address(voting)),
            IStaking(address(staking))
        );
        vm.startPrank(owner);
        sessions.setModules(IDrawModule(address(drawModule)), address(voting), address(settlement));
        staking.wire(address(registry), address(drawModule), address(settlement));
        vm.stopPrank();
        _fund(_providerAddr, 1e6 * 1e18);
    }

    function _stakingParams(Config memory c) private pure returns (StakingLedger.StakingParams memory p) {
        p.minStake = [uint96(c.minStake), uint96(c.minStake), uint96(c.minStake)];
        p.cooldown = uint32(c.cooldown);
        p.commissionDelay = uint32(c.commissionDelay);
        p.initialReputation = uint64(c.initialReputation);
        p.reputationFloor = uint64(c.reputationFloor);
        p.maxCommissionBps = uint16(c.maxCommissionBps);
    }

    function _sessionParams(Config memory c) private pure returns (IAuditSessions.SessionParams memory p) {
        p.tauBps = 6000;
        p.betaBps = 7000;
        p.seatCap = uint8(c.seatCap);
        p.seatsPerTier = c.seatsPerTier;
        p.tierWeight = [uint16(0), uint16(0), uint16(0)];
        p.gamma = uint64(c.gamma);
        p.pMin = uint64(c.pMin);
        p.pMax = uint64(c.pMax);
        p.reward = uint96(c.reward);
        p.slashAmount = uint96(c.slashAmount);
        p.drawBlocks = uint32(c.phaseBlocks);
        p.keyBlocks = uint32(c.phaseBlocks);
        p.commitBlocks = uint32(c.phaseBlocks);
        p.revealBlocks = uint32(c.phaseBlocks);
    }

    function _provider() internal view override returns (address) {
        return _providerAddr;
    }

    function _fund(address to, uint256 amount) internal override {
        require(token.transfer(to, amount), "setup: transfer");
    }

    function _balance(address account) internal view override returns (uint256) {
        return token.balanceOf(account);
    }

    function _newAuditor(uint8 tier, uint256 amount) internal override returns (address a) {
        a = _newAccount();
        _allAuditors.push(a);
        vm.prank(a);
        registry.register(tier, uint64(1) << tier, keccak256(abi.encode("x25519", a)));
        _stake(a, a, amount);
    }

    // ------------------------------------------------------------ staking

    /// @dev A deposit waits in a FLOW entry while the pool's ledger holds a session drawn before it.
    function _stake(address holder, address auditor, uint256 amount) internal override {
        _fund(holder, amount);
        vm.startPrank(holder);
        token.approve(address(staking), amount);
        staking.stake(auditor, amount);
        vm.stopPrank();
    }

    function _requestWithdrawal(address holder, address auditor, uint256 amount)
        internal
        override
        returns (bool)
    {
        Staking.PoolView memory p = staking.poolOf(auditor);
        return _requestShares(holder, auditor, amount * (p.totalShares + 1) / (p.assets + 1));
    }

    /// @dev `auditor`'s free stake, all of it, locked by another session it chose to draw first (an
    /// entry of key 0xB0B0 + its index that this test never settles): the refusal an owner can still
    /// cause after the seed is public, now that a withdrawal request or deregistration of snapshot stake
    /// cannot (docs/protocol-v2.md 5.1).
    function _lockElsewhere(address auditor) internal {
        IStaking.SeatQuote memory q = staking.seatQuote(auditor);
        vm.prank(address(drawModule));
        (bool ok,,) = staking.lockSeat(auditor, q.tier, 0xB0B0 + q.nextEntry, q.free, 0);
        assertTrue(ok, "setup: locked elsewhere");
    }

    function _requestShares(address holder, address auditor, uint256 shares) private returns (bool) {
        if (shares == 0) return false;
        vm.prank(holder);
        try staking.requestWithdrawal(auditor, shares) returns (uint256 id) {
            _withdrawalIds[holder].push(id);
            return true;
        } catch {
            return false;
        }
    }

    /// @dev Queued withdrawals are redeemed when their FLOW entry applies, after every session drawn
    /// before it: drain the ledgers, wait out the cooldown from then, claim.
    function _claimWithdrawals(address holder) internal override returns (uint256 received) {
        uint256[] storage ids = _withdrawalIds[holder];
        for (uint256 i = 0; i < ids.length; ++i) {
            (Staking.Withdrawal memory w,,) = staking.withdrawalOf(ids[i]);
            _drainAndRecord(w.auditor);
        }
        _waitSeconds(staking.params().cooldown);
        uint256 before = token.balanceOf(holder);
        for (uint256 i = 0; i < ids.length; ++i) {
            (Staking.Withdrawal memory w,, uint256 readyAt) = staking.withdrawalOf(ids[i]);
            if (w.claimed || readyAt == 0 || readyAt > block.timestamp) continue;
            vm.prank(holder);
            staking.claimWithdrawal(ids[i]);
        }
        received = token.balanceOf(holder) - before;
    }

    function _exitAll(address holder, address auditor) internal override returns (uint256) {
        _drainAndRecord(auditor);
        assertTrue(
            _requestShares(holder, auditor, staking.sharesOf(auditor, holder)), "setup: withdrawal refused"
        );
        return _claimWithdrawals(holder);
    }

    /// @dev The holder's shares at the current price (after draining the ledger) plus its deposit
    /// still waiting in a FLOW entry (worth its amount until it becomes shares).
    function _valueOf(address holder, address auditor) internal override returns (uint256) {
        _drainAndRecord(auditor);
        (uint256 shares, uint256 pending,) = staking.positionOf(auditor, holder);
        return staking.previewRedeem(auditor, shares) + pending;
    }

    function _weightShare(address auditor) internal view override returns (uint256) {
        (uint8 tier,,) = staking.auditorOf(auditor);
        uint256 total = sortition.totalWeight(tier);
        uint256 w = sortition.weightOf(tier, auditor);
        return total == 0 ? 0 : (w * 1e18 + total - 1) / total;
    }

    function _reputation(address auditor) internal view override returns (uint256) {
        return staking.reputationOf(auditor);
    }

    function _setCommission(address auditor, uint256 bps) internal override {
        vm.prank(auditor);
        staking.setCommission(bps);
    }

    // ----------------------------------------------------------- sessions

    function _feeFor(uint256 seats) internal view override returns (uint256) {
        uint256 pool = seats * _config().reward;
        return (pool * 10_000 + sessions.AUDIT_POOL_BPS() - 1) / sessions.AUDIT_POOL_BPS();
    }

    /// @dev Opens at the first block of the next epoch (see the contract notes).
    function _openWithRoot(bytes32 root, uint8[] memory tiers, uint16[] memory weights, uint256 fee)
        internal
        override
        returns (uint256 sid)
    {
        bytes memory tw = new bytes(tiers.length * 3);
        for (uint256 i = 0; i < tiers.length; ++i) {
            tw[3 * i] = bytes1(tiers[i]);
            tw[3 * i + 1] = bytes1(uint8(weights[i] >> 8));
            tw[3 * i + 2] = bytes1(uint8(weights[i]));
        }
        _rollTo((block.number / EPOCH_BLOCKS + 1) * EPOCH_BLOCKS);
        vm.startPrank(_providerAddr);
        token.approve(address(sessions), fee);
        sid = sessions.openSession(root, tw, fee);
        vm.stopPrank();
    }

    function _sessionRecord(uint256 sid) internal view returns (IAuditSessions.Session memory) {
        return sessions.sessionOf(sid);
    }

    function _waitForRandomness(uint256 sid) internal override {
        IAuditSessions.Session memory s = _sessionRecord(sid);
        if (s.status != IAuditSessions.Status.Created) return;
        uint256 target = randomness.targetBlockOf(s.drawRequest);
        if (block.number <= target) _rollTo(target + 1);
    }

    function _drawSome(uint256 sid, uint256 seats) internal override {
        _waitForRandomness(sid);
        sessions.draw(sid, seats);
    }

    function _drawAll(uint256 sid) internal override {
        _waitForRandomness(sid);
        for (uint256 i = 0; i < 1000 && _drawOpen(sid); ++i) {
            sessions.draw(sid, 16);
        }
    }

    function _drawOpen(uint256 sid) private view returns (bool) {
        IAuditSessions.Session memory s = _sessionRecord(sid);
        return s.status == IAuditSessions.Status.Created
            || (s.status == IAuditSessions.Status.Drawing && s.drawnSeats < s.totalSeats);
    }

    function _drawDone(uint256 sid) internal view override returns (bool) {
        IAuditSessions.Session memory s = _sessionRecord(sid);
        return s.status != IAuditSessions.Status.Created && s.drawnSeats == s.totalSeats;
    }

    function _drawFailed(uint256 sid) internal view override returns (bool) {
        IAuditSessions.Session memory s = _sessionRecord(sid);
        return
            s.status == IAuditSessions.Status.Cancelled
                && s.termination == IAuditSessions.Termination.DrawFailed;
    }

    function _seatsOf(uint256 sid, address auditor) internal view override returns (uint256[] memory) {
        return drawModule.seatsOf(sid, 0, auditor);
    }

    /// @dev The drawn auditors in draw order (the core keeps only their count).
    function _auditorsOf(uint256 sid) internal view override returns (address[] memory list) {
        list = new address[](_sessionRecord(sid).auditorCount);
        uint256 key = PanelKey.keyOf(sid, 0);
        for (uint256 i = 0; i < _allAuditors.length; ++i) {
            uint256 w = drawModule.seatWordOf(key, _allAuditors[i]);
            if (w != 0) list[SeatWord.index(w)] = _allAuditors[i];
        }
    }

    /// @dev v2 has no cancel: the call (v1's `cancel(uint256)`) reverts and the provider is refused.
    function _tryCancel(uint256 sid) internal override returns (bool) {
        vm.prank(_providerAddr);
        (bool ok,) = address(sessions).call(abi.encodeWithSignature("cancel(uint256)", sid));
        return ok;
    }

    function _abandon(uint256 sid) internal override {
        if (_drawOpen(sid)) _drawAll(sid);
        IAuditSessions.Session memory s = _sessionRecord(sid);
        if (s.status != IAuditSessions.Status.Drawing) return;
        _rollTo(s.keyDeadline + 1);
        sessions.advance(sid);
        assertTrue(sessions.statusOf(sid) == IAuditSessions.Status.Expired, "setup: not expired");
    }

    function _publishKeys(uint256 sid) internal override {
        vm.prank(_providerAddr);
        sessions.publishKeys(sid, "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi");
    }

    // ------------------------------------------------------------- voting

    function _verdicts(uint256 sid, address auditor, uint256 failMask)
        internal
        view
        override
        returns (uint256 v)
    {
        uint256[] memory segs = _seatsOf(sid, auditor);
        for (uint256 j = 0; j < segs.length; ++j) {
            if ((failMask >> segs[j]) & 1 == 1) v |= uint256(1) << j;
        }
    }

    function _commitmentOf(uint256 sid, address auditor, uint256 verdicts, bytes32 salt)
        internal
        view
        override
        returns (bytes32)
    {
        return voting.computeCommitment(sid, 0, auditor, verdicts, salt);
    }

    function _commit(uint256 sid, address auditor, bytes32 commitment) internal override returns (bool) {
        vm.prank(auditor);
        try voting.commit(sid, 0, commitment) {
            return true;
        } catch {
            return false;
        }
    }

    /// @dev The single-item entry point, which reverts on a bad opening (a batch would skip it).
    function _reveal(uint256 sid, address auditor, uint256 verdicts, bytes32 salt)
        internal
        override
        returns (bool)
    {
        vm.prank(auditor);
        try voting.reveal(
            sid, 0, IVotingModule.RevealItem({auditor: auditor, verdicts: verdicts, salt: salt})
        ) {
            return true;
        } catch {
            return false;
        }
    }

    function _commitItem(uint256 sid, address auditor, uint256 verdicts, bytes32 salt)
        internal
        view
        override
        returns (bytes memory)
    {
        bytes32 commitment = voting.computeCommitment(sid, 0, auditor, verdicts, salt);
        bytes32 digest = voting.commitDigest(sid, 0, auditor, commitment, voting.commitNonce(sid, 0, auditor));
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(keyOf[auditor], digest);
        return abi.encode(
            IVotingModule.SignedCommit({
                auditor: auditor, commitment: commitment, signature: abi.encodePacked(r, s, v)
            })
        );
    }

    function _revealItem(uint256, address auditor, uint256 verdicts, bytes32 salt)
        internal
        pure
        override
        returns (bytes memory)
    {
        return abi.encode(IVotingModule.RevealItem({auditor: auditor, verdicts: verdicts, salt: salt}));
    }

    function _submitCommits(address relayer, uint256 sid, bytes[] memory items)
        internal
        override
        returns (bool ok, bytes memory err)
    {
        IVotingModule.SignedCommit[] memory batch = new IVotingModule.SignedCommit[](items.length);
        for (uint256 i = 0; i < items.length; ++i) {
            batch[i] = abi.decode(items[i], (IVotingModule.SignedCommit));
        }
        vm.prank(relayer);
        try voting.commitBatch(sid, 0, batch) {
            return (true, "");
        } catch (bytes memory e) {
            return (false, e);
        }
    }

    function _submitReveals(address relayer, uint256 sid, bytes[] memory items)
        internal
        override
        returns (bool ok, bytes memory err)
    {
        IVotingModule.RevealItem[] memory batch = new IVotingModule.RevealItem[](items.length);
        for (uint256 i = 0; i < items.length; ++i) {
            batch[i] = abi.decode(items[i], (IVotingModule.RevealItem));
        }
        vm.prank(relayer);
        try voting.revealBatch(sid, 0, batch) {
            return (true, "");
        } catch (bytes memory e) {
            return (false, e);
        }
    }

    function _ballot(uint256 sid, address auditor) private view returns (uint256 ballot, bool revealed) {
        uint256 key = PanelKey.keyOf(sid, 0);
        address[] memory who = new address[](1);
        uint256[] memory seat = new uint256[](1);
        who[0] = auditor;
        seat[0] = drawModule.seatWordOf(key, auditor);
        (uint256[] memory ballots, bool[] memory flags) = voting.ballotsOf(key, who, seat);
        return (ballots[0], flags[0]);
    }

    function _hasCommitted(uint256 sid, address auditor) internal view override returns (bool) {
        (uint256 ballot,) = _ballot(sid, auditor);
        return ballot != 0;
    }

    function _hasRevealed(uint256 sid, address auditor) internal view override returns (bool) {
        (, bool revealed) = _ballot(sid, auditor);
        return revealed;
    }

    /// @dev The ballot slot (a uint256 per panel and auditor) holds the commitment until the reveal.
    function _storedCommitment(uint256 sid, address auditor)
        internal
        view
        override
        returns (bytes32 stored, uint256 bits)
    {
        (uint256 ballot,) = _ballot(sid, auditor);
        return (bytes32(ballot), 256);
    }

    function _rollToLastCommitBlock(uint256 sid) internal override {
        _rollTo(_sessionRecord(sid).commitDeadline);
    }

    function _openRevealPhase(uint256 sid) internal override {
        IAuditSessions.Session memory s = _sessionRecord(sid);
        if (s.status == IAuditSessions.Status.KeysPublished || s.status == IAuditSessions.Status.Commit) {
            _rollTo(s.commitDeadline + 1);
            sessions.advance(sid);
        }
    }

    function _rollToLastRevealBlock(uint256 sid) internal override {
        _openRevealPhase(sid);
        _rollTo(_sessionRecord(sid).revealDeadline);
    }

    /// @dev Finalize, then fix the slash randomness requested at finalization once its block is sealed.
    function _finalize(uint256 sid) internal override {
        _openRevealPhase(sid);
        IAuditSessions.Session memory s = _sessionRecord(sid);
        if (s.status != IAuditSessions.Status.Reveal) return;
        if (s.revealedCount < s.auditorCount) _rollTo(s.revealDeadline + 1);
        sessions.advance(sid);
        s = _sessionRecord(sid);
        assertTrue(s.status == IAuditSessions.Status.Finalized, "setup: not finalized");
        uint256 target = randomness.targetBlockOf(s.slashRequest);
        if (block.number <= target) _rollTo(target + 1);
        randomness.fulfil(s.slashRequest);
    }

    function _settleAll(uint256 sid) internal override {
        address[] memory all = _auditorsOf(sid);
        uint256 n = 0;
        for (uint256 i = 0; i < all.length; ++i) {
            if (!results[sid][all[i]].settled) all[n++] = all[i];
        }
        if (n == 0) return;
        address[] memory list = new address[](n);
        uint256 key = PanelKey.keyOf(sid, 0);
        for (uint256 i = 0; i < n; ++i) {
            list[i] = all[i];
            _entrySession[all[i]][SeatWord.entry(drawModule.seatWordOf(key, all[i]))] = sid;
        }
        vm.recordLogs();
        settlement.settleBatch(sid, 0, list);
        _record(vm.getRecordedLogs());
        for (uint256 i = 0; i < n; ++i) {
            _drainAndRecord(list[i]);
        }
    }

    /// @dev Apply every ready entry of `auditor`'s ledger, recording the slashes taken.
    function _drainAndRecord(address auditor) private {
        vm.recordLogs();
        staking.drain(auditor, DRAIN_ALL);
        _record(vm.getRecordedLogs());
    }

    function _record(Vm.Log[] memory logs) private {
        for (uint256 i = 0; i < logs.length; ++i) {
            Vm.Log memory l = logs[i];
            bytes32 topic = l.topics[0];
            if (l.emitter == address(settlement) && topic == ISettlementModule.AuditorSettled.selector) {
                Result storage r = results[uint256(l.topics[1])][address(uint160(uint256(l.topics[2])))];
                r.settled = true;
                (, r.correct, r.incorrect,, r.slashes, r.reward,,) = abi.decode(
                    l.data, (uint256, uint256, uint256, uint256, uint256, uint256, uint256, uint256)
                );
            } else if (l.emitter == address(staking) && topic == Staking.SessionResolved.selector) {
                address a = address(uint160(uint256(l.topics[1])));
                (,, uint256 commission,,) = abi.decode(l.data, (uint256, uint256, uint256, uint256, bool));
                results[PanelKey.sessionOf(uint256(l.topics[2]))][a].commission += commission;
            } else if (l.emitter == address(staking) && topic == StakingLedger.SessionApplied.selector) {
                address a = address(uint160(uint256(l.topics[1])));
                uint256 sid = _entrySession[a][uint256(l.topics[2])];
                (, uint256 slashed,) = abi.decode(l.data, (uint256, uint256, uint256));
                if (sid != 0) results[sid][a].slashed += slashed;
            }
        }
    }

    function _errorName(bytes memory err) internal pure override returns (string memory) {
        bytes4 sel = err.length >= 4 ? bytes4(err) : bytes4(0);
        if (sel == IVotingModule.BadSignature.selector) return "BadSignature";
        if (sel == IVotingModule.AlreadyRevealed.selector) return "AlreadyRevealed";
        if (sel == IVotingModule.AlreadyCommitted.selector) return "AlreadyCommitted";
        if (sel == IVotingModule.NotCommitted.selector) return "NotCommitted";
        if (sel == IVotingModule.CommitmentMismatch.selector) return "CommitmentMismatch";
        if (sel == IVotingModule.NotSeated.selector) return "NotSeated";
        if (sel == IVotingModule.EmptyBatch.selector) return "EmptyBatch";
        if (sel == IAuditSessions.WrongStatus.selector) return "WrongStatus";
        return Strings.toHexString(uint256(uint32(sel)), 4);
    }

    // ----------------------------------------------------------- segments

    function _segmentLeaf(uint256 index, string memory cid, uint8 tier, uint16 weight)
        internal
        pure
        override
        returns (bytes32)
    {
        return keccak256(bytes.concat(keccak256(abi.encode(index, cid, tier, weight))));
    }

    function _verifySegment(
        uint256 sid,
        uint256 index,
        string memory cid,
        uint8 tier,
        uint16 weight,
        bytes32[] memory proof
    ) internal view override returns (bool) {
        return sessions.verifySegment(sid, index, cid, tier, weight, proof);
    }

    function _storedSegment(uint256 sid, uint256 index)
        internal
        view
        override
        returns (uint256 tier, uint256 weight)
    {
        uint256 laneValue = SegmentWord.lane(sessions.segmentWord(sid, 0, SegmentWord.wordOf(index)), index);
        return (SegmentWord.tier(laneValue), SegmentWord.weight(laneValue));
    }
}
