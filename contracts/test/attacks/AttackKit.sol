// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {TestBase} from "../utils/TestBase.sol";

/// @notice Cheatcodes the attack tests need beyond TestBase's Vm.
interface VmSim {
    function snapshotState() external returns (uint256 snapshotId);
    function revertToStateAndDelete(uint256 snapshotId) external returns (bool);
    function setBlockhash(uint256 blockNumber, bytes32 blockHash) external;
    function pauseGasMetering() external;
    function resumeGasMetering() external;
}

/// @title AttackKit
/// @notice The protocol-independent half of the attack tests: the world model (blocks, time, fresh
/// randomness), off-chain simulation, participants' keys, the neutral configuration and result
/// types, and logging. Nothing here knows the protocol's API; `AttackBase` (the adapter) does.
/// @dev The world model. An attacker knows everything the chain has fixed and can simulate any
/// sequence of transactions on it (eth_call on a bundle): `_simulate()` / `_endSimulation()` run
/// a what-if on a state snapshot and throw it away. What the chain has NOT fixed yet is future
/// block hashes: every block the tests pass is sealed by `_rollTo` with a hash drawn from
/// `_entropy`, and `_freshFuture()` (called by the tests after an attacker's simulation) replaces
/// that entropy, so a simulation predicts the past exactly and the future not at all. (Forge's
/// default block hashes are a fixed function of the number, which would let a simulation see
/// the future.) Simulations run with gas metering paused: they are off-chain work.
abstract contract AttackKit is TestBase {
    VmSim internal constant sim = VmSim(address(uint160(uint256(keccak256("hevm cheat code")))));

    uint256 internal constant ALPHA = 1e12; // 1e-6 in WAD: false-failure budget of statistical tests
    uint256 internal constant SECONDS_PER_BLOCK = 12;

    /// @notice Protocol parameters in neutral units; the adapter maps them onto its contracts.
    struct Config {
        uint256 minStake; // wei, every tier
        uint256 initialReputation; // WAD
        uint256 reputationFloor; // WAD
        uint256 cooldown; // seconds
        uint256 commissionDelay; // seconds
        uint256 maxCommissionBps;
        uint256 seatCap; // seats per auditor per session
        uint8[3] seatsPerTier; // seats per segment of each tier
        uint256 reward; // wei per correct seat
        uint256 slashAmount; // wei per slashed seat (also the stake locked per seat)
        uint256 gamma; // WAD
        uint256 pMin; // WAD
        uint256 pMax; // WAD
        uint256 phaseBlocks; // length of the draw, key, commit and reveal phases
    }

    /// @notice One auditor's settled result in one session, as the protocol reported it.
    struct Result {
        bool settled;
        uint256 correct;
        uint256 incorrect;
        uint256 slashes; // slashed seats
        uint256 reward; // gross reward (wei)
        uint256 commission; // paid to the auditor out of the reward (wei)
        uint256 slashed; // stake actually taken (wei)
    }

    mapping(uint256 => mapping(address => Result)) internal results;
    mapping(address => uint256) internal keyOf;
    uint256 private _nextKey = 0xA000;
    bytes32 private _entropy = keccak256("trustnode attack tests");
    uint256 private _snapshot;

    event log(string message);
    event log_named_uint(string key, uint256 val);
    event log_named_decimal_uint(string key, uint256 val, uint256 decimals);
    event log_named_string(string key, string val);

    // ------------------------------------------------------------- config

    /// @notice The fixture's parameters (contracts/test/utils/SessionsFixture.sol, StakingFixture.sol);
    /// tests override.
    function _config() internal pure virtual returns (Config memory c) {
        c.minStake = 100e18;
        c.initialReputation = 0.5e18;
        c.reputationFloor = 0.5e18;
        c.cooldown = 1 days;
        c.commissionDelay = 1 days;
        c.maxCommissionBps = 2000;
        c.seatCap = 8;
        c.seatsPerTier = [uint8(1), uint8(3), uint8(3)];
        c.reward = 6e18;
        c.slashAmount = 8e18;
        c.gamma = 0.1e18;
        c.pMin = 0.2e18;
        c.pMax = 0.5e18;
        c.phaseBlocks = 20;
    }

    // -------------------------------------------------------------- world

    /// @dev Advance to block `b`, sealing every block passed with a hash from the current entropy.
    function _rollTo(uint256 b) internal {
        uint256 from = block.number;
        if (b <= from) return;
        vm.roll(b);
        // Only the 256 most recent hashes are readable: older blocks need none.
        for (uint256 x = b > from + 256 ? b - 256 : from; x < b; ++x) {
            sim.setBlockhash(x, keccak256(abi.encode(_entropy, x)));
        }
        vm.warp(block.timestamp + (b - from) * SECONDS_PER_BLOCK);
    }

    function _rollBy(uint256 blocks) internal {
        _rollTo(block.number + blocks);
    }

    /// @dev Let `seconds_` pass (whole blocks).
    function _waitSeconds(uint256 seconds_) internal {
        _rollBy(seconds_ / SECONDS_PER_BLOCK + 1);
    }

    /// @dev Nature's move: blocks not yet sealed get hashes nobody could have simulated.
    function _freshFuture() internal {
        _entropy = keccak256(abi.encode(_entropy, "fresh", block.number, block.timestamp));
    }

    /// @dev A random word nobody can simulate before `_freshFuture()`: for mock randomness sources
    /// (e.g. a VRF coordinator) that the adapter fulfils itself.
    function _randomWord(bytes32 tag) internal view returns (uint256) {
        return uint256(keccak256(abi.encode(_entropy, tag, block.number)));
    }

    /// @dev Start an off-chain what-if (no nesting).
    function _simulate() internal {
        sim.pauseGasMetering();
        vm.getRecordedLogs();
        _snapshot = sim.snapshotState();
    }

    /// @dev Throw the what-if away (storage, balances and block number return to the snapshot). Logs
    /// a what-if emitted are dropped too: the cheatcode's log buffer survives a state revert, and the
    /// adapter must never read a simulated event as a real one.
    function _endSimulation() internal {
        sim.revertToStateAndDelete(_snapshot);
        vm.getRecordedLogs();
        sim.resumeGasMetering();
    }

    // -------------------------------------------------------- participants

    /// @dev A fresh externally owned account whose key the tests hold (auditors sign commits).
    function _newAccount() internal returns (address a) {
        uint256 key = _nextKey++;
        a = vm.addr(key);
        keyOf[a] = key;
    }

    // ------------------------------------------------------------ adapter
    // Every call into the protocol. `AttackBase` implements these for the contracts in
    // contracts/src; porting the attacks to a new protocol version means rewriting AttackBase only.
    // Functions that may legitimately be refused return false (or ok = false) instead of reverting.
    // The adapter advances blocks only through `_rollTo` and time only through `_waitSeconds` (so the
    // world model above holds), and fulfils any mock randomness from `_randomWord`.

    /// @dev Deploy and wire the protocol with `_config()`; the provider account is funded.
    function _deployProtocol() internal virtual;
    /// @dev The provider that opens sessions.
    function _provider() internal view virtual returns (address);
    function _fund(address to, uint256 amount) internal virtual;
    function _balance(address account) internal view virtual returns (uint256);
    /// @dev Register a new auditor of `tier` that self-stakes `amount`.
    function _newAuditor(uint8 tier, uint256 amount) internal virtual returns (address);

    /// @dev `holder` buys `amount` worth of `auditor`'s pool (funded by the test).
    function _stake(address holder, address auditor, uint256 amount) internal virtual;
    /// @dev `holder` asks to redeem shares worth about `amount`; false if refused.
    function _requestWithdrawal(address holder, address auditor, uint256 amount)
        internal
        virtual
        returns (bool);
    /// @dev Wait out the cooldown and collect every pending withdrawal of `holder`; tokens received.
    function _claimWithdrawals(address holder) internal virtual returns (uint256);
    /// @dev Redeem all of `holder`'s shares of `auditor`'s pool and collect them; tokens received.
    function _exitAll(address holder, address auditor) internal virtual returns (uint256);
    /// @dev Tokens `holder`'s shares of `auditor`'s pool are worth now (with settled results applied).
    function _valueOf(address holder, address auditor) internal virtual returns (uint256);
    /// @dev `auditor`'s share of its tier's current sortition weight (WAD, rounded up).
    function _weightShare(address auditor) internal view virtual returns (uint256);
    function _reputation(address auditor) internal view virtual returns (uint256);
    /// @dev Schedule `auditor`'s commission; `_config().commissionDelay` later it is in force.
    function _setCommission(address auditor, uint256 bps) internal virtual;

    /// @dev The smallest fee that funds `seats` seats.
    function _feeFor(uint256 seats) internal view virtual returns (uint256);
    /// @dev Open a session (the provider pays `fee`). Tiers and weights per segment.
    function _openWithRoot(bytes32 root, uint8[] memory tiers, uint16[] memory weights, uint256 fee)
        internal
        virtual
        returns (uint256 sid);
    /// @dev Advance until the session's draw randomness is determined (its block is sealed).
    function _waitForRandomness(uint256 sid) internal virtual;
    /// @dev One draw call for at most `seats` seats.
    function _drawSome(uint256 sid, uint256 seats) internal virtual;
    /// @dev Draw calls until every seat is drawn or the draw fails.
    function _drawAll(uint256 sid) internal virtual;
    function _drawDone(uint256 sid) internal view virtual returns (bool);
    /// @dev The draw gave up: the session ended for lack of eligible auditors.
    function _drawFailed(uint256 sid) internal view virtual returns (bool);
    /// @dev Segment index of each of `auditor`'s seats, in seat order (bit j of its verdicts).
    function _seatsOf(uint256 sid, address auditor) internal view virtual returns (uint256[] memory);
    function _auditorsOf(uint256 sid) internal view virtual returns (address[] memory);
    /// @dev The provider tries to cancel; false if the protocol refuses.
    function _tryCancel(uint256 sid) internal virtual returns (bool);
    /// @dev The provider never publishes keys: anyone completes the draw, every deadline passes.
    function _abandon(uint256 sid) internal virtual;
    function _publishKeys(uint256 sid) internal virtual;

    /// @dev Verdict word for `auditor`'s seats: seat j votes FAIL iff bit (its segment) of `failMask`.
    function _verdicts(uint256 sid, address auditor, uint256 failMask) internal view virtual returns (uint256);
    function _commitmentOf(uint256 sid, address auditor, uint256 verdicts, bytes32 salt)
        internal
        view
        virtual
        returns (bytes32);
    /// @dev `auditor` commits directly; false if refused.
    function _commit(uint256 sid, address auditor, bytes32 commitment) internal virtual returns (bool);
    /// @dev Anyone reveals `auditor`'s opening; false if refused.
    function _reveal(uint256 sid, address auditor, uint256 verdicts, bytes32 salt)
        internal
        virtual
        returns (bool);
    /// @dev A relayable commit signed by `auditor` (opaque to the attacks).
    function _commitItem(uint256 sid, address auditor, uint256 verdicts, bytes32 salt)
        internal
        view
        virtual
        returns (bytes memory);
    /// @dev A relayable reveal of `auditor`'s opening (opaque to the attacks).
    function _revealItem(uint256 sid, address auditor, uint256 verdicts, bytes32 salt)
        internal
        view
        virtual
        returns (bytes memory);
    /// @dev `relayer` submits a commit batch; ok = false and the revert data if the batch reverted.
    function _submitCommits(address relayer, uint256 sid, bytes[] memory items)
        internal
        virtual
        returns (bool ok, bytes memory err);
    function _submitReveals(address relayer, uint256 sid, bytes[] memory items)
        internal
        virtual
        returns (bool ok, bytes memory err);
    function _hasCommitted(uint256 sid, address auditor) internal view virtual returns (bool);
    function _hasRevealed(uint256 sid, address auditor) internal view virtual returns (bool);
    /// @dev What the protocol stored for `auditor`'s commitment, and how many bits of it.
    function _storedCommitment(uint256 sid, address auditor)
        internal
        view
        virtual
        returns (bytes32 stored, uint256 bits);
    /// @dev Advance to the last block in which commits are accepted.
    function _rollToLastCommitBlock(uint256 sid) internal virtual;
    /// @dev Advance until reveals are accepted.
    function _openRevealPhase(uint256 sid) internal virtual;
    /// @dev Advance to the last block in which reveals are accepted.
    function _rollToLastRevealBlock(uint256 sid) internal virtual;
    /// @dev Let the voting deadlines pass and decide the outcome (and whatever must follow it).
    function _finalize(uint256 sid) internal virtual;
    /// @dev Settle every drawn auditor not settled yet, and fill `results[sid]`.
    function _settleAll(uint256 sid) internal virtual;
    /// @dev A readable name for a protocol revert.
    function _errorName(bytes memory err) internal pure virtual returns (string memory);

    /// @dev The Merkle leaf the protocol proves for a segment.
    function _segmentLeaf(uint256 index, string memory cid, uint8 tier, uint16 weight)
        internal
        pure
        virtual
        returns (bytes32);
    function _verifySegment(
        uint256 sid,
        uint256 index,
        string memory cid,
        uint8 tier,
        uint16 weight,
        bytes32[] memory proof
    ) internal view virtual returns (bool);
    /// @dev The tier and weight the chain stored (and audited) for segment `index`.
    function _storedSegment(uint256 sid, uint256 index)
        internal
        view
        virtual
        returns (uint256 tier, uint256 weight);

    // -------------------------------------------------------------- plays
    // Protocol-neutral sequences built on the adapter.

    function _open(uint8[] memory tiers, uint16[] memory weights, uint256 fee) internal returns (uint256) {
        return
            _openWithRoot(
                keccak256(abi.encode("root", tiers, weights, fee, block.number)), tiers, weights, fee
            );
    }

    /// @dev `n` segments of `tier`, weight 1; `fee` 0 pays the smallest fee.
    function _openUniform(uint256 n, uint8 tier, uint256 fee) internal returns (uint256) {
        uint8[] memory tiers = new uint8[](n);
        uint16[] memory weights = new uint16[](n);
        for (uint256 i = 0; i < n; ++i) {
            tiers[i] = tier;
            weights[i] = 1;
        }
        return _open(tiers, weights, fee == 0 ? _feeFor(n * _config().seatsPerTier[tier]) : fee);
    }

    function _salt(uint256 sid, address auditor) internal pure returns (bytes32) {
        return keccak256(abi.encode("salt", sid, auditor));
    }

    /// @dev The true verdicts of a session's segments (bit i = segment i FAILs).
    function _truth(uint256 sid) internal pure returns (uint256) {
        return uint256(keccak256(abi.encode("truth", sid)));
    }

    /// @dev What `auditor` votes: the truth, with the seats in `flipSeats` inverted for `deviant`.
    function _voteOf(uint256 sid, address auditor, address deviant, uint256 flipSeats)
        internal
        view
        returns (uint256 v)
    {
        v = _verdicts(sid, auditor, _truth(sid));
        if (auditor == deviant) v ^= flipSeats & ((uint256(1) << _seatsOf(sid, auditor).length) - 1);
    }

    /// @dev Every drawn auditor commits and reveals the truth, except `deviant`, which inverts the
    /// seats in `flipSeats`, or stays silent if `silent`.
    function _castVotes(uint256 sid, address deviant, uint256 flipSeats, bool silent) internal {
        address[] memory list = _auditorsOf(sid);
        for (uint256 i = 0; i < list.length; ++i) {
            address a = list[i];
            if (a == deviant && silent) continue;
            bytes32 c = _commitmentOf(sid, a, _voteOf(sid, a, deviant, flipSeats), _salt(sid, a));
            assertTrue(_commit(sid, a, c), "setup: commit refused");
        }
        _openRevealPhase(sid);
        for (uint256 i = 0; i < list.length; ++i) {
            address a = list[i];
            if (a == deviant && silent) continue;
            assertTrue(
                _reveal(sid, a, _voteOf(sid, a, deviant, flipSeats), _salt(sid, a)), "setup: reveal refused"
            );
        }
    }

    // ------------------------------------------------------------ logging

    function _pct(uint256 wad) internal pure returns (string memory) {
        return string.concat(_dec(wad * 100, 18, 2), "%");
    }

    function _trust(uint256 amount) internal pure returns (string memory) {
        return string.concat(_dec(amount, 18, 6), " TRUST");
    }

    function _u(uint256 x) internal pure returns (string memory) {
        return Strings.toString(x);
    }

    /// @dev `x / 10**decimals` with `shown` decimals (truncated).
    function _dec(uint256 x, uint256 decimals, uint256 shown) internal pure returns (string memory s) {
        uint256 unit = 10 ** decimals;
        s = Strings.toString(x / unit);
        if (shown == 0) return s;
        uint256 frac = (x % unit) / 10 ** (decimals - shown);
        bytes memory digits = bytes(Strings.toString(frac));
        bytes memory padded = new bytes(shown);
        for (uint256 i = 0; i < shown; ++i) {
            padded[i] = i < shown - digits.length ? bytes1("0") : digits[i - (shown - digits.length)];
        }
        s = string.concat(s, ".", string(padded));
    }

    function _logTrust(string memory key, uint256 amount) internal {
        emit log_named_decimal_uint(key, amount, 18);
    }
}
