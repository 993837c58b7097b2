// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IStaking} from "./interfaces/IStaking.sol";
import {ISortition} from "./interfaces/ISortition.sol";
import {IRandomness} from "./interfaces/IRandomness.sol";
import {DrawWindow} from "./libraries/DrawWindow.sol";
import {SessionStore} from "./SessionStore.sol";

/// @title SessionLifecycle
/// @notice What AuditSessions and SessionOps share beyond the storage: the immutables and the deadline
/// transitions every entry point applies first (`_sync`) with the endings they lead to.
/// @dev Both contracts inherit it (and SessionStore's layout) in the same place, so the code SessionOps runs
/// by DELEGATECALL reads and writes AuditSessions' storage at the slots AuditSessions' own code uses, with
/// the same immutables (SessionOps is deployed by AuditSessions' constructor with its token and staking).
/// It declares no error (callers and tests name AuditSessions' errors `AuditSessions.X`, which Solidity
/// resolves only among a contract's own declarations); its events (those SessionOps emits by DELEGATECALL
/// among them) are declared once here and inherited into AuditSessions' ABI.
abstract contract SessionLifecycle is SessionStore {
    using SafeERC20 for IERC20;

    /// @notice The protocol token.
    IERC20 public immutable token;
    /// @notice Pools, locks, ledgers and reputation.
    IStaking public immutable staking;
    /// @notice The snapshot sum trees (epochs, readability).
    ISortition public immutable sortition;
    /// @dev The staking epoch length (fixed at Staking's deployment): bounds the canary commit window.
    uint256 internal immutable _epochBlocks;
    /// @dev `sortition.snapshotReadableUntil(e) - e * epochBlocks` (the ring's span less one block), read once:
    /// readability is affine in the epoch, so the core computes it without a call.
    uint256 internal immutable _readableSpan;

    event ParamsChanged(uint256 indexed version, SessionParams params);
    event RandomnessSourceChanged(uint256 indexed index, address source);
    event SessionOpened(
        uint256 indexed sessionId,
        address indexed provider,
        bytes32 merkleRoot,
        uint256 segmentCount,
        uint256 totalSeats,
        uint256 fee,
        uint256 pool,
        uint256 paramsVersion,
        uint256 randomnessId,
        uint256 epoch,
        bytes tiersWeights
    );
    event StatusChanged(uint256 indexed sessionId, Status status);
    /// @notice The session ended without a verdict: `reserved` stays in the pool for the drawn seats
    /// (R each, paid at settlement), `refunded` went to the provider and `forfeited` to the treasury.
    event SessionTerminated(
        uint256 indexed sessionId, Termination reason, uint256 refunded, uint256 forfeited, uint256 reserved
    );

    modifier onlyModule(address module) {
        if (msg.sender != module) revert NotModule(msg.sender);
        _;
    }

    /// @param token_ The protocol token.
    /// @param staking_ The staking contract (its sortition trees give the epochs and readability). Both
    /// checked non-zero by AuditSessions before.
    constructor(IERC20 token_, IStaking staking_) {
        token = token_;
        staking = staking_;
        ISortition sortition_ = staking_.sortition();
        sortition = sortition_;
        uint256 epochBlocks_ = sortition_.epochBlocks();
        _epochBlocks = epochBlocks_;
        _readableSpan = sortition_.snapshotReadableUntil(1) - epochBlocks_;
    }

    // -------------------------------------------------------------- deadlines

    function _sync(uint256 sessionId, Session storage s) internal {
        Status st = s.status;
        if (st == Status.Created) {
            IRandomness.RequestStatus r = _sources[s.source].status(s.drawRequest);
            // Expired or Failed (the last two statuses), or past the snapshot's last readable block whatever
            // the value (one fixed in time but never drawn on included): `advance` alone ends every lapsed
            // session, paused or not (outside review 6). `_endUndrawn` keeps the refund/forfeit decision.
            if (r >= IRandomness.RequestStatus.Expired || block.number > _readableUntil(s.epoch)) {
                _endUndrawn(
                    sessionId,
                    s,
                    r == IRandomness.RequestStatus.Expired
                        ? Termination.RandomnessMissed
                        : Termination.SnapshotUnavailable
                );
            }
        } else if (st == Status.Drawing) {
            if (s.drawnSeats != s.totalSeats) {
                // Left short past its deadline: abandoned if the randomness was in time (anyone could have
                // finished the draw), else a late oracle's short window, refunded (`DrawWindow`, review 12).
                if (block.number > s.drawDeadline) _endUndrawn(sessionId, s, Termination.DrawAbandoned);
            } else if (block.number > s.keyDeadline) {
                _terminate(sessionId, s, Status.Expired, Termination.KeysWithheld);
            }
        } else if (st == Status.KeysPublished || st == Status.Commit) {
            if (block.number > s.commitDeadline) _setStatus(sessionId, s, Status.Reveal);
        }
    }

    /// @dev End a session whose draw never started or was left short. RandomnessFailed (refund after R per
    /// drawn seat) when its randomness was not in time (`DrawWindow.inTime`): obtainable only after the
    /// snapshot's last readable block, never (a VRF timeout), or too late to leave the guaranteed draw
    /// window. Whether it is in time was fixed before any seed existed (lookahead: target + 1, fixed at
    /// opening, always in time) or by the oracle alone (VRF), so it re-rolls nothing.
    /// `inTime` (forfeit) otherwise: the value left the window and nobody drew, or nobody finished.
    function _endUndrawn(uint256 sessionId, Session storage s, Termination inTime) internal {
        uint256 epoch = s.epoch;
        SessionParams storage p = _params[s.paramsVersion];
        bool ok = DrawWindow.inTime(
            _sources[s.source],
            s.drawRequest,
            _readableUntil(epoch),
            epoch * _epochBlocks - 1,
            p.drawBlocks,
            p.canaryCommitBlocks
        );
        _terminate(sessionId, s, Status.Expired, ok ? inTime : Termination.RandomnessFailed);
    }

    /// @dev The last block in which the snapshot of `epoch` is readable (`ISortition.snapshotReadableUntil`).
    function _readableUntil(uint256 epoch) internal view returns (uint256) {
        return epoch * _epochBlocks + _readableSpan;
    }

    /// @dev End without a verdict: keep R per drawn seat for its auditor, refund or forfeit the rest.
    function _terminate(uint256 sessionId, Session storage s, Status to, Termination why) internal {
        uint256 reserved = uint256(_params[s.paramsVersion].reward) * s.drawnSeats;
        uint256 rest = s.pool - reserved;
        s.pool = uint96(reserved);
        s.termination = why;
        _setStatus(sessionId, s, to);
        bool refund = why == Termination.RandomnessFailed || why == Termination.DrawFailed;
        emit SessionTerminated(sessionId, why, refund ? rest : 0, refund ? 0 : rest, reserved);
        if (rest != 0) token.safeTransfer(refund ? s.provider : treasury, rest);
    }

    function _setStatus(uint256 sessionId, Session storage s, Status to) internal {
        s.status = to;
        emit StatusChanged(sessionId, to);
    }
}
