// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "../utils/StakingFixture.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {IRandomness} from "../../src/interfaces/IRandomness.sol";
import {LookaheadRandomness} from "../../src/LookaheadRandomness.sol";
import {AuditSessions} from "../../src/AuditSessions.sol";

/// @dev A source built against IRandomness as it was before f635524 (no `delayOf`): every other entry point,
/// forwarded to a LookaheadRandomness so it behaves exactly as the shipped local source. Stands for an
/// adapter deployed before the interface grew (a VRFRandomness already on a testnet, a third-party adapter).
contract Review16LegacySource {
    LookaheadRandomness public immutable inner;

    constructor(uint256 delay_) {
        inner = new LookaheadRandomness(delay_);
    }

    function request() external returns (uint256) {
        return inner.request();
    }

    function requestAfter(uint256 minBlocks) external returns (uint256) {
        return inner.requestAfter(minBlocks);
    }

    function fulfil(uint256 id) external returns (bytes32) {
        return inner.fulfil(id);
    }

    function status(uint256 id) external view returns (IRandomness.RequestStatus) {
        return inner.status(id);
    }

    function valueOf(uint256 id) external view returns (bytes32) {
        return inner.valueOf(id);
    }

    function minDelay() external view returns (uint256) {
        return inner.minDelay();
    }

    function obtainableAt(uint256 id) external view returns (uint256) {
        return inner.obtainableAt(id);
    }
}

/// @title Review16SourceWithoutDelayOfStrandsEndings (outside review 16 of 8c2c336, f635524 `IRandomness.delayOf`)
/// @notice Property (AuditSessions `advance` NatSpec, outside review 6): "`advance` alone ends every lapsed
/// session": every source the core accepts (`setRandomness`, the constructor's `initialize`) lets a session
/// whose snapshot lapsed undrawn be ended, its pool refunded or forfeited.
/// Attack: f635524 made the ending read a NEW interface function, `src.delayOf(id)` (`DrawWindow.inTime`, from
/// `SessionLifecycle._endUndrawn` and `AppealModule._endUndrawn`), but the admission check
/// (`SessionOps._addSource` -> `_checkDelay`) still only calls `minDelay()`. A source without `delayOf` (an
/// adapter deployed before f635524, or any IRandomness written to the old interface) is accepted, serves
/// openings and draws normally, and then every session pinned to it that lapses (Created past the snapshot,
/// lookahead Expired, VRF Failed, or a draw left short past its deadline) reverts in `_sync`: `advance`,
/// `draw`, `publishKeys`, `finalize` and the module callbacks all revert, the pool is locked in the core for
/// good (the source is pinned per session, `setRandomness` cannot move it). Appeal rounds on it likewise.
/// Measured (this file, fixture epochBlocks 50, a 1-segment tier-1 session, fee 1000 TRUST): `setRandomness`
/// of the legacy source succeeds; the session opens (pool 800 TRUST in the core); at `readable + 1` `advance`
/// reverts (the call to the missing `delayOf`), the status stays Created and 800 TRUST stay in the core
/// (un-skipped: `advance succeeded: 0`, `core balance: 800e18`). The same session on the shipped LookaheadRandomness ends SnapshotUnavailable.
/// Severity LOW: needs the owner to add such a source (a migration reusing an old adapter is the plausible
/// path), but the harm is permanent and hits every provider's pool on it; before f635524 the same source
/// worked end to end.
/// Fix proposal: probe the function where sources are admitted: in `SessionOps._addSource`, call
/// `source.delayOf(0)` (VRF answers 0, lookahead its delay; a missing function reverts and refuses the
/// source), ideally also checking it against `minDelay()` for a fresh id; the node's deploy check likewise.
/// (Falling back to `minDelay()` on a failing `delayOf` in `DrawWindow` would reopen outside review 14.)
/// The test passes under either fix (refused at `setRandomness`, or the lapsed session ends).
/// Mutation: un-skipped on 8c2c336 it fails (`advance reverts on the accepted source`).
/// Fixed: `SessionOps._addSource` calls `source.delayOf(0)`, so such a source is refused by `setRandomness`
/// (and by the constructor) before any session can be pinned to it.
/// Command: scripts/forge test --match-path 'contracts/test/attacks/Review16SourceWithoutDelayOf*' -vv
contract Review16SourceWithoutDelayOfStrandsEndings is StakingFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal constant FEE = 1000e18;

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _nextEpoch();
    }

    /// @dev Open a 1-segment session on the current source and let its snapshot lapse undrawn; whether
    /// `advance` then succeeds, and the core's balance.
    function _lapsed() internal returns (uint256 sid, bool ended) {
        sid = _open(_uniform(1, 1), FEE);
        uint256 readable = _sortition().snapshotReadableUntil(sessions.sessionOf(sid).epoch);
        vm.roll(readable + 1);
        (ended,) = address(sessions).call(abi.encodeCall(AuditSessions.advance, (sid)));
        emit log_named_uint("advance succeeded", ended ? 1 : 0);
        emit log_named_uint("core balance (TRUST wei)", token.balanceOf(address(sessions)));
    }

    /// @notice Control: the shipped source ends the lapsed session (forfeit, no delivery missed).
    function test_ShippedSourceEndsTheLapsedSession() public {
        (uint256 sid, bool ended) = _lapsed();
        assertTrue(ended, "advance ends it");
        assertTrue(sessions.statusOf(sid) == IAuditSessions.Status.Expired, "expired");
        assertEq(token.balanceOf(address(sessions)), 0, "nothing left in the core");
    }

    /// @notice No source the core accepts can strand a lapsed session: either the legacy source is refused,
    /// or the session pinned to it ends.
    function test_AcceptedSourceNeverStrandsALapsedSession() public {
        Review16LegacySource legacy = new Review16LegacySource(RANDOMNESS_DELAY);
        vm.prank(owner);
        (bool accepted,) = address(sessions)
            .call(abi.encodeCall(AuditSessions.setRandomness, (IRandomness(address(legacy)))));
        if (!accepted) return; // refused at admission: the property holds
        (uint256 sid, bool ended) = _lapsed();
        assertTrue(ended, "advance reverts on the accepted source");
        assertTrue(sessions.statusOf(sid) == IAuditSessions.Status.Expired, "the lapsed session ended");
        vm.roll(block.number + 1000);
        assertEq(token.balanceOf(address(sessions)), 0, "no pool stranded in the core");
    }
}
