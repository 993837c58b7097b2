// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IStaking} from "../../src/interfaces/IStaking.sol";
import {ISortition} from "../../src/interfaces/ISortition.sol";

/// @notice A plain implementation of the IStaking v2 / ISortition seam for the session modules' unit
/// tests: one balance per auditor (no shares, no ledger: results apply at once), per-leaf weight
/// checkpoints per epoch so that `sampleAt` reads "the tree as it stood at the start of epoch e", real
/// token custody, and a record of every lock and result. Linear scans: fine for tests only. Reputation
/// composes as r -> r * repMul / 1e18 + repAdd (capped at 1e18).
contract StakingDouble is IStaking, ISortition {
    uint256 internal constant WAD = 1e18;
    /// @notice Epochs a snapshot stays readable (the design's ring of R = 3 versions).
    uint256 public constant RING = 3;

    struct Checkpoint {
        uint64 epoch;
        uint192 weight;
    }

    IERC20 public immutable token;
    uint256 public immutable epochBlocks;
    address public registry;
    address public drawModule;
    address public settlementModule;
    address public treasury;

    mapping(uint8 => address[]) public leafAt;
    mapping(address => uint256) public leafPlusOne;
    mapping(address => uint8) public tierOf;
    mapping(address => bool) public registered;
    mapping(uint8 => mapping(uint256 => Checkpoint[])) internal _history;
    mapping(address => uint256) public stakeOf;
    mapping(address => uint256) public lockedOf;
    mapping(address => uint64) public reputationOf;
    mapping(uint256 => mapping(address => uint256)) public seatsLocked;
    /// @notice `lockSeats` calls per (key, auditor): one per draw call that seated the auditor.
    mapping(uint256 => mapping(address => uint256)) public lockCalls;
    mapping(uint256 => mapping(address => uint256)) public lockedFor;
    mapping(uint256 => mapping(address => uint256)) public entryOf;
    mapping(address => uint256) public entries;
    mapping(uint256 => mapping(address => bool)) public resolved;
    mapping(uint256 => mapping(address => SessionResult)) internal _results;
    uint256 public resolveCalls;
    mapping(uint256 => mapping(address => uint64)) public drawReputation;
    /// @notice Refuse every lock (to test exclusions).
    mapping(address => bool) public refuseLocks;

    error NotAllowed(address caller);

    constructor(IERC20 token_, uint256 epochBlocks_, address treasury_) {
        token = token_;
        epochBlocks = epochBlocks_;
        treasury = treasury_;
    }

    function wire(address registry_, address drawModule_, address settlementModule_) external {
        registry = registry_;
        drawModule = drawModule_;
        settlementModule = settlementModule_;
    }

    // ---------------------------------------------------------------- test controls

    /// @notice Stake for `auditor` (anyone pays; no shares).
    function deposit(address auditor, uint256 amount) external {
        token.transferFrom(msg.sender, address(this), amount);
        stakeOf[auditor] += amount;
        _refresh(auditor);
    }

    /// @notice Take free stake out to `to`.
    function withdrawFree(address auditor, uint256 amount, address to) external {
        require(msg.sender == auditor, "only auditor");
        require(stakeOf[auditor] - lockedOf[auditor] >= amount, "locked");
        stakeOf[auditor] -= amount;
        _refresh(auditor);
        token.transfer(to, amount);
    }

    function setRefuseLocks(address auditor, bool refuse) external {
        refuseLocks[auditor] = refuse;
    }

    function resultOf(uint256 key, address auditor) external view returns (SessionResult memory) {
        return _results[key][auditor];
    }

    // --------------------------------------------------------------------- registry

    function onRegister(address auditor, uint8 tier) external {
        if (msg.sender != registry) revert NotAllowed(msg.sender);
        if (leafPlusOne[auditor] == 0) {
            leafAt[tier].push(auditor);
            leafPlusOne[auditor] = leafAt[tier].length;
            tierOf[auditor] = tier;
            reputationOf[auditor] = 0.5e18;
        }
        registered[auditor] = true;
        _refresh(auditor);
    }

    function onDeregister(address auditor) external {
        if (msg.sender != registry) revert NotAllowed(msg.sender);
        registered[auditor] = false;
        _refresh(auditor);
    }

    // -------------------------------------------------------------------- snapshots

    function sortition() external view returns (ISortition) {
        return ISortition(address(this));
    }

    function epochOf(uint256 blockNumber) public view returns (uint256) {
        return blockNumber / epochBlocks + 1;
    }

    function currentEpoch() external view returns (uint256) {
        return epochOf(block.number);
    }

    function snapshotReadableUntil(uint256 epoch) external view returns (uint256) {
        return (epoch + RING - 1) * epochBlocks - 1;
    }

    function leafWeightAt(uint8 tier, uint256 epoch, uint256 leaf) external view returns (uint256) {
        return weightAt(tier, leaf, epoch);
    }

    function leafOf(uint8 tier, address auditor) external view returns (bool exists, uint256 leaf) {
        if (leafPlusOne[auditor] == 0 || tierOf[auditor] != tier) return (false, 0);
        return (true, leafPlusOne[auditor] - 1);
    }

    function weightOf(uint8 tier, address auditor) external view returns (uint256) {
        if (leafPlusOne[auditor] == 0 || tierOf[auditor] != tier) return 0;
        return weightAt(tier, leafPlusOne[auditor] - 1, type(uint256).max);
    }

    function totalWeight(uint8 tier) external view returns (uint256) {
        return totalWeightAt(tier, type(uint256).max);
    }

    function leafCount(uint8 tier) external view returns (uint256) {
        return leafAt[tier].length;
    }

    function memberAt(uint8 tier, uint256 leaf) external view returns (address) {
        return leaf < leafAt[tier].length ? leafAt[tier][leaf] : address(0);
    }

    function weightAt(uint8 tier, uint256 leaf, uint256 epoch) public view returns (uint256 w) {
        Checkpoint[] storage h = _history[tier][leaf];
        for (uint256 i = 0; i < h.length && h[i].epoch < epoch; ++i) {
            w = h[i].weight;
        }
    }

    /// @notice Leaves with non-zero weight at the start of `epoch` (a scan: test double).
    function liveCountAt(uint8 tier, uint256 epoch) external view returns (uint256 live) {
        for (uint256 i = 0; i < leafAt[tier].length; ++i) {
            if (weightAt(tier, i, epoch) != 0) ++live;
        }
    }

    /// @notice `liveCountAt` without `except` if it has weight at the start of `epoch`.
    function liveCountAtExcept(uint8 tier, uint256 epoch, address except)
        external
        view
        returns (uint256 live)
    {
        for (uint256 i = 0; i < leafAt[tier].length; ++i) {
            if (weightAt(tier, i, epoch) != 0 && leafAt[tier][i] != except) ++live;
        }
    }

    function totalWeightAt(uint8 tier, uint256 epoch) public view returns (uint256 total) {
        for (uint256 i = 0; i < leafAt[tier].length; ++i) {
            total += weightAt(tier, i, epoch);
        }
    }

    function sampleAt(uint8 tier, uint256 epoch, uint256 value, uint256[] calldata excludedLeaves)
        external
        view
        returns (address auditor, uint256 leaf, uint256 weight)
    {
        uint256 acc = 0;
        for (uint256 i = 0; i < leafAt[tier].length; ++i) {
            bool skip = false;
            for (uint256 k = 0; k < excludedLeaves.length; ++k) {
                if (excludedLeaves[k] == i) skip = true;
            }
            if (skip) continue;
            uint256 w = weightAt(tier, i, epoch);
            if (value < acc + w) return (leafAt[tier][i], i, w);
            acc += w;
        }
        revert("value out of range");
    }

    // ------------------------------------------------------------------------- draw

    function lockSeat(address auditor, uint8 tier, uint256 key, uint256 amount, uint256 entry)
        external
        returns (bool ok, uint64 reputation, uint256 entryIndex)
    {
        if (msg.sender != drawModule) revert NotAllowed(msg.sender);
        (ok, reputation, entryIndex) = _lock(auditor, tier, key, amount, entry);
        if (ok) seatsLocked[key][auditor] += 1;
    }

    /// @dev One call per auditor and draw call; reverts where `lockSeat` would refuse.
    function lockSeats(address auditor, uint8 tier, uint256 key, uint256 amount, uint256 entry)
        external
        returns (uint64 reputation, uint256 entryIndex)
    {
        if (msg.sender != drawModule) revert NotAllowed(msg.sender);
        bool ok;
        (ok, reputation, entryIndex) = _lock(auditor, tier, key, amount, entry);
        require(ok, "lockSeats refused");
        lockCalls[key][auditor] += 1;
    }

    function seatQuote(address auditor) external view returns (SeatQuote memory q) {
        q.tier = tierOf[auditor];
        q.eligible = registered[auditor] && !refuseLocks[auditor];
        q.free = stakeOf[auditor] - lockedOf[auditor];
        q.limit = stakeOf[auditor];
        q.reputation = reputationOf[auditor];
        q.nextEntry = entries[auditor] + 1;
    }

    /// @dev The double queues no deposit.
    function queuedAfter(address, uint256) external pure returns (uint256) {
        return 0;
    }

    function _lock(address auditor, uint8 tier, uint256 key, uint256 amount, uint256 entry)
        internal
        returns (bool ok, uint64 reputation, uint256 entryIndex)
    {
        require(entry == entryOf[key][auditor], "entry passed back");
        if (!registered[auditor] || tierOf[auditor] != tier || refuseLocks[auditor]) return (false, 0, 0);
        if (stakeOf[auditor] - lockedOf[auditor] < amount) return (false, 0, 0);
        if (entry == 0) {
            entryIndex = ++entries[auditor];
            entryOf[key][auditor] = entryIndex;
            drawReputation[key][auditor] = reputationOf[auditor];
        } else {
            entryIndex = entry;
        }
        lockedOf[auditor] += amount;
        lockedFor[key][auditor] += amount;
        return (true, drawReputation[key][auditor], entryIndex);
    }

    // ------------------------------------------------------------------- settlement

    function resolve(uint256 key, SessionResult[] calldata results) external {
        if (msg.sender != settlementModule) revert NotAllowed(msg.sender);
        ++resolveCalls;
        uint256 rewards = 0;
        for (uint256 i = 0; i < results.length; ++i) {
            rewards += results[i].reward;
        }
        if (rewards != 0) token.transferFrom(msg.sender, address(this), rewards);
        uint256 slashed = 0;
        for (uint256 i = 0; i < results.length; ++i) {
            SessionResult calldata r = results[i];
            require(!resolved[key][r.auditor], "resolved twice");
            require(r.entry != 0 && r.entry == entryOf[key][r.auditor], "entry of the key");
            resolved[key][r.auditor] = true;
            _results[key][r.auditor] = r;
            uint256 s = r.slash > stakeOf[r.auditor] ? stakeOf[r.auditor] : r.slash;
            stakeOf[r.auditor] = stakeOf[r.auditor] - s + r.reward;
            lockedOf[r.auditor] -= lockedFor[key][r.auditor];
            slashed += s;
            uint256 rep = uint256(reputationOf[r.auditor]) * r.repMul / WAD + r.repAdd;
            reputationOf[r.auditor] = uint64(rep > WAD ? WAD : rep);
            _refresh(r.auditor);
        }
        if (slashed != 0) token.transfer(treasury, slashed);
    }

    function drain(address, uint256) external pure returns (uint256) {
        return 0;
    }

    // -------------------------------------------------------------------- internals

    function _refresh(address auditor) internal {
        if (leafPlusOne[auditor] == 0) return;
        uint8 tier = tierOf[auditor];
        uint256 leaf = leafPlusOne[auditor] - 1;
        uint256 w = registered[auditor]
            ? stakeOf[auditor] * (uint256(reputationOf[auditor]) + 0.5e18) / WAD / 1e12
            : 0;
        Checkpoint[] storage h = _history[tier][leaf];
        uint64 e = uint64(epochOf(block.number));
        if (h.length != 0 && h[h.length - 1].epoch == e) h[h.length - 1].weight = uint192(w);
        else h.push(Checkpoint({epoch: e, weight: uint192(w)}));
    }
}
