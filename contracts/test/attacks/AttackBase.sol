// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {Vm} from "../utils/TestBase.sol";
import {AttackKit} from "./AttackKit.sol";
import {TrustToken} from "../../src/TrustToken.sol";
import {Treasury} from "../../src/Treasury.sol";
import {Staking} from "../../src/Staking.sol";
import {AuditorRegistry} from "../../src/AuditorRegistry.sol";
import {LookaheadRandomness} from "../../src/LookaheadRandomness.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";

/// @title AttackBase
/// @notice The adapter between the attack tests and protocol v1 (contracts/src as of issue 12):
/// every protocol call the attacks make, and nothing else. A port to another protocol version
/// rewrites this file only; the attacks and their property assertions stay as they are.
/// @dev Deployment mirrors contracts/test/utils/ProtocolFixture.sol (lookahead randomness, delay 2).
abstract contract AttackBase is AttackKit {
    uint256 private constant RANDOMNESS_DELAY = 2;
    uint256 private constant MASK192 = (uint256(1) << 192) - 1;

    TrustToken internal token;
    Treasury internal treasury;
    Staking internal staking;
    AuditorRegistry internal registry;
    LookaheadRandomness internal randomness;
    AuditSessions internal sessions;
    address internal owner = address(0x0A11);
    address private _providerAddr;
    mapping(address => uint256[]) private _withdrawalIds;

    // ------------------------------------------------------------- deploy

    function _deployProtocol() internal override {
        Config memory c = _config();
        _providerAddr = _newAccount();
        token = new TrustToken(address(this), 1e9 * 1e18);
        treasury = new Treasury(token, owner);
        staking = new Staking(token, owner, address(treasury), _stakingParams(c));
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
        vm.prank(owner);
        staking.wire(address(registry), address(sessions));
        _fund(_providerAddr, 1e6 * 1e18);
    }

    function _stakingParams(Config memory c) private pure returns (Staking.StakingParams memory p) {
        p.minStake = [uint96(c.minStake), uint96(c.minStake), uint96(c.minStake)];
        p.cooldown = uint32(c.cooldown);
        p.commissionDelay = uint32(c.commissionDelay);
        p.initialReputation = uint64(c.initialReputation);
        p.reputationFloor = uint64(c.reputationFloor);
        p.maxCommissionBps = uint16(c.maxCommissionBps);
    }

    function _sessionParams(Config memory c) private pure returns (AuditSessions.SessionParams memory p) {
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
        vm.prank(a);
        registry.register(tier, uint64(1) << tier, keccak256(abi.encode("x25519", a)));
        _stake(a, a, amount);
    }

    // ------------------------------------------------------------ staking

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
        (uint256 assets,, uint256 totalShares,,,,) = staking.poolOf(auditor);
        return _requestShares(holder, auditor, amount * (totalShares + 1) / (assets + 1));
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

    function _claimWithdrawals(address holder) internal override returns (uint256 received) {
        _waitSeconds(staking.params().cooldown);
        uint256[] storage ids = _withdrawalIds[holder];
        for (uint256 i = 0; i < ids.length; ++i) {
            Staking.Withdrawal memory w = staking.withdrawalOf(ids[i]);
            if (w.claimed) continue;
            vm.prank(holder);
            staking.claimWithdrawal(ids[i]);
            received += w.amount;
        }
    }

    function _exitAll(address holder, address auditor) internal override returns (uint256) {
        assertTrue(
            _requestShares(holder, auditor, staking.sharesOf(auditor, holder)), "setup: withdrawal refused"
        );
        return _claimWithdrawals(holder);
    }

    function _valueOf(address holder, address auditor) internal view override returns (uint256) {
        return staking.previewRedeem(auditor, staking.sharesOf(auditor, holder));
    }

    function _weightShare(address auditor) internal view override returns (uint256) {
        (,,,,, uint8 tier,) = staking.poolOf(auditor);
        uint256 total = staking.totalWeight(tier);
        uint256 w = staking.weightOf(auditor);
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
        vm.startPrank(_providerAddr);
        token.approve(address(sessions), fee);
        sid = sessions.openSession(root, tw, fee);
        vm.stopPrank();
    }

    function _waitForRandomness(uint256 sid) internal override {
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        if (s.status != AuditSessions.Status.Created) return;
        uint256 target = randomness.targetBlockOf(s.randomnessId);
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
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        return s.status == AuditSessions.Status.Created
            || (s.status == AuditSessions.Status.Drawing && s.drawnSeats < s.totalSeats);
    }

    function _drawDone(uint256 sid) internal view override returns (bool) {
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        return s.status != AuditSessions.Status.Created && s.drawnSeats == s.totalSeats;
    }

    function _drawFailed(uint256 sid) internal view override returns (bool) {
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        return
            s.status == AuditSessions.Status.Cancelled && s.seed != bytes32(0) && s.drawnSeats < s.totalSeats;
    }

    function _seatsOf(uint256 sid, address auditor) internal view override returns (uint256[] memory) {
        return sessions.seatsOf(sid, auditor);
    }

    function _auditorsOf(uint256 sid) internal view override returns (address[] memory) {
        return sessions.auditorsOf(sid);
    }

    function _tryCancel(uint256 sid) internal override returns (bool) {
        vm.prank(_providerAddr);
        try sessions.cancel(sid) {
            return true;
        } catch {
            return false;
        }
    }

    function _abandon(uint256 sid) internal override {
        if (_drawOpen(sid)) _drawAll(sid);
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        if (s.status != AuditSessions.Status.Drawing) return;
        _rollTo(s.keyDeadline + 1);
        sessions.advance(sid);
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
        uint256[] memory segs = sessions.seatsOf(sid, auditor);
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
        return sessions.computeCommitment(sid, auditor, verdicts, salt);
    }

    function _commit(uint256 sid, address auditor, bytes32 commitment) internal override returns (bool) {
        vm.prank(auditor);
        try sessions.commit(sid, commitment) {
            return true;
        } catch {
            return false;
        }
    }

    function _reveal(uint256 sid, address auditor, uint256 verdicts, bytes32 salt)
        internal
        override
        returns (bool)
    {
        bytes[] memory items = new bytes[](1);
        items[0] = _revealItem(sid, auditor, verdicts, salt);
        (bool ok,) = _submitReveals(auditor, sid, items);
        return ok;
    }

    function _commitItem(uint256 sid, address auditor, uint256 verdicts, bytes32 salt)
        internal
        view
        override
        returns (bytes memory)
    {
        bytes32 commitment = sessions.computeCommitment(sid, auditor, verdicts, salt);
        uint256 nonce = (sessions.voteWord(sid, auditor) >> 208) & 0xff;
        bytes32 digest = sessions.commitDigest(sid, auditor, commitment, nonce);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(keyOf[auditor], digest);
        return abi.encode(
            AuditSessions.SignedCommit({
                auditor: auditor,
                commitment: commitment,
                r: r,
                vs: bytes32(uint256(s) | (uint256(v - 27) << 255))
            })
        );
    }

    function _revealItem(uint256, address auditor, uint256 verdicts, bytes32 salt)
        internal
        pure
        override
        returns (bytes memory)
    {
        return abi.encode(AuditSessions.RevealItem({auditor: auditor, verdicts: verdicts, salt: salt}));
    }

    function _submitCommits(address relayer, uint256 sid, bytes[] memory items)
        internal
        override
        returns (bool ok, bytes memory err)
    {
        AuditSessions.SignedCommit[] memory batch = new AuditSessions.SignedCommit[](items.length);
        for (uint256 i = 0; i < items.length; ++i) {
            batch[i] = abi.decode(items[i], (AuditSessions.SignedCommit));
        }
        vm.prank(relayer);
        try sessions.commitBatch(sid, batch) {
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
        AuditSessions.RevealItem[] memory batch = new AuditSessions.RevealItem[](items.length);
        for (uint256 i = 0; i < items.length; ++i) {
            batch[i] = abi.decode(items[i], (AuditSessions.RevealItem));
        }
        vm.prank(relayer);
        try sessions.revealBatch(sid, batch) {
            return (true, "");
        } catch (bytes memory e) {
            return (false, e);
        }
    }

    function _hasCommitted(uint256 sid, address auditor) internal view override returns (bool) {
        return (sessions.voteWord(sid, auditor) >> 200) & 1 == 1;
    }

    function _hasRevealed(uint256 sid, address auditor) internal view override returns (bool) {
        return (sessions.voteWord(sid, auditor) >> 200) & 2 == 2;
    }

    function _storedCommitment(uint256 sid, address auditor)
        internal
        view
        override
        returns (bytes32 stored, uint256 bits)
    {
        // voteWord bits 0-191 hold the top 192 bits of the commitment until the reveal.
        return (bytes32((sessions.voteWord(sid, auditor) & MASK192) << 64), 192);
    }

    function _rollToLastCommitBlock(uint256 sid) internal override {
        _rollTo(sessions.sessionOf(sid).commitDeadline);
    }

    function _openRevealPhase(uint256 sid) internal override {
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        if (s.status == AuditSessions.Status.KeysPublished || s.status == AuditSessions.Status.Commit) {
            _rollTo(s.commitDeadline + 1);
            sessions.advance(sid);
        }
    }

    function _rollToLastRevealBlock(uint256 sid) internal override {
        _openRevealPhase(sid);
        _rollTo(sessions.sessionOf(sid).revealDeadline);
    }

    function _finalize(uint256 sid) internal override {
        _openRevealPhase(sid);
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        if (s.status != AuditSessions.Status.Reveal) return;
        if (s.revealedCount < s.auditorCount) _rollTo(s.revealDeadline + 1);
        sessions.advance(sid);
        assertTrue(sessions.statusOf(sid) == AuditSessions.Status.Finalized, "setup: not finalized");
    }

    function _settleAll(uint256 sid) internal override {
        address[] memory all = sessions.auditorsOf(sid);
        uint256 n = 0;
        for (uint256 i = 0; i < all.length; ++i) {
            if (!results[sid][all[i]].settled) all[n++] = all[i];
        }
        if (n == 0) return;
        address[] memory list = new address[](n);
        for (uint256 i = 0; i < n; ++i) {
            list[i] = all[i];
        }
        vm.recordLogs();
        sessions.settleBatch(sid, list);
        _record(sid, vm.getRecordedLogs());
    }

    function _record(uint256 sid, Vm.Log[] memory logs) private {
        for (uint256 i = 0; i < logs.length; ++i) {
            Vm.Log memory l = logs[i];
            if (l.emitter == address(sessions) && l.topics[0] == AuditSessions.AuditorSettled.selector) {
                Result storage r = results[sid][address(uint160(uint256(l.topics[2])))];
                r.settled = true;
                (r.correct, r.incorrect, r.slashes, r.reward,) =
                    abi.decode(l.data, (uint256, uint256, uint256, uint256, uint256));
            } else if (l.emitter == address(staking) && l.topics[0] == Staking.SettlementApplied.selector) {
                Result storage r = results[sid][address(uint160(uint256(l.topics[1])))];
                (uint256 commission, uint256 slashed) = abi.decode(l.data, (uint256, uint256));
                r.commission += commission;
                r.slashed += slashed;
            }
        }
    }

    function _errorName(bytes memory err) internal pure override returns (string memory) {
        bytes4 sel = err.length >= 4 ? bytes4(err) : bytes4(0);
        if (sel == AuditSessions.BadSignature.selector) return "BadSignature";
        if (sel == AuditSessions.AlreadyRevealed.selector) return "AlreadyRevealed";
        if (sel == AuditSessions.NotCommitted.selector) return "NotCommitted";
        if (sel == AuditSessions.CommitmentMismatch.selector) return "CommitmentMismatch";
        if (sel == AuditSessions.WrongStatus.selector) return "WrongStatus";
        if (sel == AuditSessions.NotSeated.selector) return "NotSeated";
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
        uint256 seg = sessions.segmentWord(sid, index >> 3) >> ((index & 7) * 32);
        return ((seg >> 14) & 3, (seg >> 16) & 0xffff);
    }
}
