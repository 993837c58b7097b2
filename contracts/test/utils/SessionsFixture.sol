// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./TestBase.sol";
import {TrustToken} from "../../src/TrustToken.sol";
import {Treasury} from "../../src/Treasury.sol";
import {AuditorRegistry} from "../../src/AuditorRegistry.sol";
import {LookaheadRandomness} from "../../src/LookaheadRandomness.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";
import {DrawModule} from "../../src/modules/DrawModule.sol";
import {VotingModule} from "../../src/modules/VotingModule.sol";
import {SettlementModule} from "../../src/modules/SettlementModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IDrawModule} from "../../src/interfaces/IDrawModule.sol";
import {IVotingModule} from "../../src/interfaces/IVotingModule.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {ISortition} from "../../src/interfaces/ISortition.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {PanelKey} from "../../src/libraries/PanelKey.sol";
import {SeatWord} from "../../src/libraries/SeatWord.sol";
import {StakingLedger} from "../../src/StakingLedger.sol";

/// @notice Deploys and wires the session core and its modules against a staking implementation chosen
/// by the concrete fixture (StakingFixture: the real Staking; DoubleFixture: StakingDouble), and drives
/// sessions through their phases.
abstract contract SessionsFixture is TestBase {
    uint256 internal constant WAD = 1e18;
    uint256 internal constant SUPPLY = 1e9 * 1e18;
    uint256 internal constant RANDOMNESS_DELAY = 2;
    uint256 internal constant EPOCH_BLOCKS = 50;
    uint256 internal constant STAKE = 1000e18;
    /// @dev The canary commit window of sessions owing canaries (longer than RANDOMNESS_DELAY, as on the devnet).
    uint256 internal constant CANARY_COMMIT_BLOCKS = 8;

    TrustToken internal token;
    Treasury internal treasury;
    IStaking internal stakingContract;
    AuditorRegistry internal registry;
    LookaheadRandomness internal randomness;
    AuditSessions internal sessions;
    DrawModule internal drawModule;
    VotingModule internal voting;
    SettlementModule internal settlement;

    address internal owner = address(0x0A11);
    uint256 internal providerKey = 0xB0B;
    address internal provider;

    uint256[] internal auditorKeys;
    address[] internal auditorAddrs;

    function _sessionParams() internal pure virtual returns (IAuditSessions.SessionParams memory p) {
        p.tauBps = 6000;
        p.betaBps = 7000;
        p.seatCap = 8;
        p.seatsPerTier = [uint8(1), uint8(3), uint8(3)];
        p.tierWeight = [uint16(0), uint16(0), uint16(0)];
        p.gamma = 0.1e18;
        p.pMin = 0.2e18;
        p.pMax = 0.5e18;
        p.reward = 6e18;
        p.slashAmount = 8e18;
        p.drawBlocks = 20;
        p.keyBlocks = 20;
        p.commitBlocks = 20;
        p.revealBlocks = 20;
        p.canaryCommitBlocks = uint32(CANARY_COMMIT_BLOCKS);
    }

    function _deploy() internal {
        vm.roll(100);
        provider = vm.addr(providerKey);
        token = new TrustToken(address(this), SUPPLY);
        treasury = new Treasury(token, owner);
        stakingContract = _deployStaking();
        registry = new AuditorRegistry(stakingContract, owner);
        randomness = new LookaheadRandomness(RANDOMNESS_DELAY);
        sessions = new AuditSessions(
            token,
            stakingContract,
            IRandomness(address(randomness)),
            address(treasury),
            owner,
            _sessionParams()
        );
        drawModule = new DrawModule(address(sessions), stakingContract);
        voting = new VotingModule(IAuditSessions(address(sessions)), IDrawModule(address(drawModule)));
        settlement = new SettlementModule(
            token,
            IAuditSessions(address(sessions)),
            IDrawModule(address(drawModule)),
            IVotingModule(address(voting)),
            stakingContract
        );
        vm.prank(owner);
        sessions.setModules(IDrawModule(address(drawModule)), address(voting), address(settlement));
        _wireStaking();
        token.transfer(provider, 1e6 * 1e18);
    }

    // ----------------------------------------------------- staking hooks

    /// @dev Deploy the staking implementation (token and treasury exist).
    function _deployStaking() internal virtual returns (IStaking);

    /// @dev Connect the staking implementation to the registry and the modules.
    function _wireStaking() internal virtual;

    /// @dev Stake `amount` for `auditor`, paid by the current prank (approval to staking given).
    function _stake(address auditor, uint256 amount) internal virtual;

    /// @dev Tokens locked for `auditor`'s open seats.
    function _locked(address auditor) internal view virtual returns (uint256);

    /// @dev Tokens backing `auditor` (what a slash can take).
    function _backing(address auditor) internal view virtual returns (uint256);

    /// @dev `auditor`'s reputation (WAD) with every result applied.
    function _reputation(address auditor) internal view virtual returns (uint256);

    /// @dev Register `count` auditors of `tier`, each staking `amount` (effective from the next epoch).
    function _addAuditors(uint8 tier, uint256 count, uint256 amount) internal {
        for (uint256 i = 0; i < count; ++i) {
            uint256 key = 0xA000 + auditorKeys.length;
            address a = vm.addr(key);
            auditorKeys.push(key);
            auditorAddrs.push(a);
            token.transfer(a, amount + 100e18);
            vm.startPrank(a);
            registry.register(tier, uint64(1) << tier, keccak256(abi.encode("x25519", a)));
            token.approve(address(stakingContract), type(uint256).max);
            _stake(a, amount);
            vm.stopPrank();
        }
    }

    /// @dev Register `a` in `tier` and stake `amount` for it from its own tokens (sent here): an account of
    /// its own (a sybil, a defender's, an appellant's), not one of `auditorAddrs`.
    function _joinTier(address a, uint8 tier, uint256 amount) internal {
        token.transfer(a, amount);
        vm.startPrank(a);
        registry.register(tier, uint64(1) << tier, keccak256(abi.encode("x25519", a)));
        token.approve(address(stakingContract), type(uint256).max);
        _stake(a, amount);
        vm.stopPrank();
    }

    /// @dev Move to the first block of the next epoch, so stake changes so far are in its snapshot.
    function _nextEpoch() internal {
        vm.roll((block.number / EPOCH_BLOCKS + 1) * EPOCH_BLOCKS);
    }

    /// @dev The snapshot trees.
    function _sortition() internal view returns (ISortition) {
        return stakingContract.sortition();
    }

    function _keyOf(address a) internal view returns (uint256) {
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            if (auditorAddrs[i] == a) return auditorKeys[i];
        }
        revert("unknown auditor");
    }

    function _tiersWeights(uint8[] memory tiers, uint16[] memory weights)
        internal
        pure
        returns (bytes memory tw)
    {
        tw = new bytes(tiers.length * 3);
        for (uint256 i = 0; i < tiers.length; ++i) {
            tw[3 * i] = bytes1(tiers[i]);
            tw[3 * i + 1] = bytes1(uint8(weights[i] >> 8));
            tw[3 * i + 2] = bytes1(uint8(weights[i]));
        }
    }

    function _uniform(uint256 n, uint8 tier) internal pure returns (bytes memory) {
        uint8[] memory tiers = new uint8[](n);
        uint16[] memory weights = new uint16[](n);
        for (uint256 i = 0; i < n; ++i) {
            tiers[i] = tier;
            weights[i] = 1;
        }
        return _tiersWeights(tiers, weights);
    }

    /// @dev Open sessions the stake premise (outside review 22, `MinStakeBelowSessionLocks`) refuses: the
    /// opening reads a minimum stake out of reach (a mocked `params()`), as if the owner lowered the minimum
    /// after the session opened. For worlds that measure the draw's rules for stake the session's own locks
    /// hold (rule S', reason 5) or dust/queued deposits, which only such a session reaches; every other world
    /// opens under the rule.
    bool internal stakePremiseWaived;

    function _open(bytes memory tw, uint256 fee) internal returns (uint256 sid) {
        if (stakePremiseWaived) {
            StakingLedger.StakingParams memory m;
            m.minStake = [type(uint96).max, type(uint96).max, type(uint96).max];
            vm.mockCall(address(stakingContract), abi.encodeWithSignature("params()"), abi.encode(m));
        }
        vm.startPrank(provider);
        token.approve(address(sessions), fee);
        sid = sessions.openSession(keccak256(abi.encode("root", tw, block.number)), tw, fee);
        vm.stopPrank();
        // The mock stays: appeal admission rechecks the premise with Staking's current minimum (outside
        // review 26), and these worlds waive it for the session's whole life.
    }

    function _drawAll(uint256 sid) internal {
        _rollPastDrawTarget(sid);
        while (sessions.statusOf(sid) == IAuditSessions.Status.Created || _drawing(sid)) {
            sessions.draw(sid, 16);
        }
    }

    /// @dev Move past the block whose hash serves the session's draw (at least RANDOMNESS_DELAY + 1 blocks:
    /// a session owing canaries waits `canaryCommitBlocks`).
    function _rollPastDrawTarget(uint256 sid) internal {
        uint256 to = block.number + RANDOMNESS_DELAY + 1;
        uint256 target = _drawTarget(sid);
        if (target + 1 > to) to = target + 1;
        vm.roll(to);
    }

    /// @dev The target block of the session's draw request (0 if another source or already fixed).
    function _drawTarget(uint256 sid) internal view returns (uint256) {
        if (address(sessions.sourceOf(sid)) != address(randomness)) return 0;
        return randomness.targetBlockOf(sessions.sessionOf(sid).drawRequest);
    }

    function _drawing(uint256 sid) internal view returns (bool) {
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        return s.status == IAuditSessions.Status.Drawing && s.drawnSeats < s.totalSeats;
    }

    function _publish(uint256 sid) internal {
        vm.prank(provider);
        sessions.publishKeys(sid, "bafy-manifest");
    }

    function _key(uint256 sid) internal pure returns (uint256) {
        return PanelKey.keyOf(sid, 0);
    }

    function _seatWord(uint256 sid, address a) internal view returns (uint256) {
        return drawModule.seatWordOf(_key(sid), a);
    }

    function _seats(uint256 sid, address a) internal view returns (uint256[] memory) {
        return drawModule.seatsOf(sid, 0, a);
    }

    /// @dev The auditors drawn in a session, in draw order (index order).
    function _auditors(uint256 sid) internal view returns (address[] memory list) {
        uint256 n = sessions.sessionOf(sid).auditorCount;
        list = new address[](n);
        for (uint256 i = 0; i < auditorAddrs.length; ++i) {
            uint256 w = _seatWord(sid, auditorAddrs[i]);
            if (w != 0) list[SeatWord.index(w)] = auditorAddrs[i];
        }
    }

    function _salt(uint256 sid, address a) internal pure returns (bytes32) {
        return keccak256(abi.encode("salt", sid, a));
    }

    /// @dev Verdict bitmap over `a`'s seats from a per-segment FAIL mask, optionally inverted.
    function _verdicts(uint256 sid, address a, uint256 failMask, bool invert)
        internal
        view
        returns (uint256 v)
    {
        uint256[] memory segs = _seats(sid, a);
        for (uint256 j = 0; j < segs.length; ++j) {
            bool fail = (failMask >> segs[j]) & 1 == 1;
            if (invert) fail = !fail;
            if (fail) v |= uint256(1) << j;
        }
    }

    function _commitment(uint256 sid, address a, uint256 verdicts) internal view returns (bytes32) {
        return voting.computeCommitment(sid, 0, a, verdicts, _salt(sid, a));
    }

    function _signCommit(uint256 sid, address a, bytes32 commitment)
        internal
        view
        returns (IVotingModule.SignedCommit memory c)
    {
        uint256 nonce = voting.commitNonce(sid, 0, a);
        bytes32 digest = voting.commitDigest(sid, 0, a, commitment, nonce);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(_keyOf(a), digest);
        c = IVotingModule.SignedCommit({
            auditor: a, commitment: commitment, signature: abi.encodePacked(r, s, v)
        });
    }

    /// @dev Everyone commits (relayed, signed) `failMask` verdicts except those in `invertMask`
    /// (auditor index bits), who vote the opposite.
    function _commitAll(uint256 sid, uint256 failMask, uint256 invertMask) internal {
        address[] memory list = _auditors(sid);
        IVotingModule.SignedCommit[] memory items = new IVotingModule.SignedCommit[](list.length);
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 v = _verdicts(sid, list[i], failMask, (invertMask >> i) & 1 == 1);
            items[i] = _signCommit(sid, list[i], _commitment(sid, list[i], v));
        }
        voting.commitBatch(sid, 0, items);
    }

    /// @dev Reveal for every drawn auditor not in `skipMask`.
    function _revealAll(uint256 sid, uint256 failMask, uint256 invertMask, uint256 skipMask) internal {
        address[] memory list = _auditors(sid);
        uint256 n = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            if ((skipMask >> i) & 1 == 0) ++n;
        }
        IVotingModule.RevealItem[] memory items = new IVotingModule.RevealItem[](n);
        uint256 k = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            if ((skipMask >> i) & 1 == 1) continue;
            items[k++] = IVotingModule.RevealItem({
                auditor: list[i],
                verdicts: _verdicts(sid, list[i], failMask, (invertMask >> i) & 1 == 1),
                salt: _salt(sid, list[i])
            });
        }
        if (n > 0) voting.revealBatch(sid, 0, items);
    }

    function _segment(uint256 sid, uint256 index)
        internal
        view
        returns (uint256 tier, uint256 weight, uint256 passVotes, uint256 failVotes, uint256 outcome)
    {
        uint256 seg = sessions.segmentWord(sid, 0, index >> 3) >> ((index & 7) * 32);
        return ((seg >> 14) & 3, (seg >> 16) & 0xffff, (seg >> 6) & 63, seg & 63, (seg >> 12) & 3);
    }

    /// @dev Finalize (after the reveal window) and wait until the slash seed can be fixed.
    function _finalizeAndWait(uint256 sid) internal {
        if (sessions.sessionOf(sid).revealedCount < sessions.sessionOf(sid).auditorCount) {
            vm.roll(block.number + 21);
        }
        sessions.finalize(sid);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
    }
}
