// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {TestBase} from "./TestBase.sol";
import {TrustToken} from "../../src/TrustToken.sol";
import {Treasury} from "../../src/Treasury.sol";
import {Staking} from "../../src/Staking.sol";
import {AuditorRegistry} from "../../src/AuditorRegistry.sol";
import {LookaheadRandomness} from "../../src/LookaheadRandomness.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";

/// @notice Deploys and wires the whole protocol and drives sessions through their phases.
abstract contract ProtocolFixture is TestBase {
    uint256 internal constant WAD = 1e18;
    uint256 internal constant SUPPLY = 1e9 * 1e18;
    uint256 internal constant RANDOMNESS_DELAY = 2;
    uint256 internal constant STAKE = 1000e18;

    TrustToken internal token;
    Treasury internal treasury;
    Staking internal staking;
    AuditorRegistry internal registry;
    LookaheadRandomness internal randomness;
    AuditSessions internal sessions;

    address internal owner = address(0x0A11);
    uint256 internal providerKey = 0xB0B;
    address internal provider;

    uint256[] internal auditorKeys;
    address[] internal auditorAddrs;

    function _stakingParams() internal pure virtual returns (Staking.StakingParams memory p) {
        p.minStake = [uint96(100e18), uint96(100e18), uint96(100e18)];
        p.cooldown = 1 days;
        p.commissionDelay = 1 days;
        p.initialReputation = 0.5e18;
        p.reputationFloor = 0.5e18;
        p.maxCommissionBps = 2000;
    }

    function _sessionParams() internal pure virtual returns (AuditSessions.SessionParams memory p) {
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
    }

    function _deploy() internal {
        provider = vm.addr(providerKey);
        token = new TrustToken(address(this), SUPPLY);
        treasury = new Treasury(token, owner);
        staking = new Staking(token, owner, address(treasury), _stakingParams());
        registry = new AuditorRegistry(IStaking(address(staking)), owner);
        randomness = new LookaheadRandomness(RANDOMNESS_DELAY);
        sessions = new AuditSessions(
            token,
            IStaking(address(staking)),
            IRandomness(address(randomness)),
            address(treasury),
            owner,
            _sessionParams()
        );
        vm.prank(owner);
        staking.wire(address(registry), address(sessions));
        token.transfer(provider, 1e6 * 1e18);
    }

    /// @dev Register `count` auditors of `tier`, each self-staking `amount`.
    function _addAuditors(uint8 tier, uint256 count, uint256 amount) internal {
        for (uint256 i = 0; i < count; ++i) {
            uint256 key = 0xA000 + auditorKeys.length;
            address a = vm.addr(key);
            auditorKeys.push(key);
            auditorAddrs.push(a);
            token.transfer(a, amount + 100e18);
            vm.startPrank(a);
            registry.register(tier, uint64(1) << tier, keccak256(abi.encode("x25519", a)));
            token.approve(address(staking), amount);
            staking.stake(a, amount);
            vm.stopPrank();
        }
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

    function _open(bytes memory tw, uint256 fee) internal returns (uint256 sid) {
        vm.startPrank(provider);
        token.approve(address(sessions), fee);
        sid = sessions.openSession(keccak256(abi.encode("root", tw)), tw, fee);
        vm.stopPrank();
    }

    function _drawAll(uint256 sid) internal {
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        while (sessions.statusOf(sid) == AuditSessions.Status.Created || _drawing(sid)) {
            sessions.draw(sid, 16);
        }
    }

    function _drawing(uint256 sid) internal view returns (bool) {
        AuditSessions.Session memory s = sessions.sessionOf(sid);
        return s.status == AuditSessions.Status.Drawing && s.drawnSeats < s.totalSeats;
    }

    function _publish(uint256 sid) internal {
        vm.prank(provider);
        sessions.publishKeys(sid, "bafy-manifest");
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
        uint256[] memory segs = sessions.seatsOf(sid, a);
        for (uint256 j = 0; j < segs.length; ++j) {
            bool fail = (failMask >> segs[j]) & 1 == 1;
            if (invert) fail = !fail;
            if (fail) v |= uint256(1) << j;
        }
    }

    function _signCommit(uint256 sid, address a, bytes32 commitment)
        internal
        view
        returns (AuditSessions.SignedCommit memory c)
    {
        uint256 nonce = (sessions.voteWord(sid, a) >> 208) & 0xff;
        bytes32 digest = sessions.commitDigest(sid, a, commitment, nonce);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(_keyOf(a), digest);
        c = AuditSessions.SignedCommit({
            auditor: a, commitment: commitment, r: r, vs: bytes32(uint256(s) | (uint256(v - 27) << 255))
        });
    }

    /// @dev Everyone commits (relayed, signed) `failMask` verdicts except those in `invertMask`
    /// (auditor index bits), who vote the opposite.
    function _commitAll(uint256 sid, uint256 failMask, uint256 invertMask) internal {
        address[] memory list = sessions.auditorsOf(sid);
        AuditSessions.SignedCommit[] memory items = new AuditSessions.SignedCommit[](list.length);
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 v = _verdicts(sid, list[i], failMask, (invertMask >> i) & 1 == 1);
            items[i] =
                _signCommit(sid, list[i], sessions.computeCommitment(sid, list[i], v, _salt(sid, list[i])));
        }
        sessions.commitBatch(sid, items);
    }

    /// @dev Reveal for every drawn auditor not in `skipMask`.
    function _revealAll(uint256 sid, uint256 failMask, uint256 invertMask, uint256 skipMask) internal {
        address[] memory list = sessions.auditorsOf(sid);
        uint256 n = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            if ((skipMask >> i) & 1 == 0) ++n;
        }
        AuditSessions.RevealItem[] memory items = new AuditSessions.RevealItem[](n);
        uint256 k = 0;
        for (uint256 i = 0; i < list.length; ++i) {
            if ((skipMask >> i) & 1 == 1) continue;
            items[k++] = AuditSessions.RevealItem({
                auditor: list[i],
                verdicts: _verdicts(sid, list[i], failMask, (invertMask >> i) & 1 == 1),
                salt: _salt(sid, list[i])
            });
        }
        if (n > 0) sessions.revealBatch(sid, items);
    }

    function _segment(uint256 sid, uint256 index)
        internal
        view
        returns (uint256 tier, uint256 weight, uint256 passVotes, uint256 failVotes, uint256 outcome)
    {
        uint256 seg = sessions.segmentWord(sid, index >> 3) >> ((index & 7) * 32);
        return ((seg >> 14) & 3, (seg >> 16) & 0xffff, (seg >> 6) & 63, seg & 63, (seg >> 12) & 3);
    }

    function _assets(address a) internal view returns (uint256 assets) {
        (assets,,,,,,) = staking.poolOf(a);
    }

    function _locked(address a) internal view returns (uint256 locked) {
        (, locked,,,,,) = staking.poolOf(a);
    }
}
