// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title IRandomness (protocol v2)
/// @notice A source of session seeds: request now, obtain the value later. `LookaheadRandomness` serves
/// local chains; `VRFRandomness` (Chainlink VRF v2.5) serves production.
/// @dev The two unhappy endings mean different things to a consumer:
/// - `Expired`: the value was available (`Ready`) but nobody fixed it with `fulfil` in time. Anyone,
///   the consumer included, could have; the consumer bears it (no refund).
/// - `Failed`: the source never delivered the value within its timeout; nobody could have fixed it,
///   so the consumer refunds.
/// Both are final: a late delivery after `Failed` is ignored, and an `Expired` request never turns
/// `Ready` again. `Fulfilled` is final too, and its value never changes.
interface IRandomness {
    /// @notice The source cannot take a request right now but will later (the VRF coordinator refuses
    /// requests while it delivers to any consumer): the caller retries in another transaction. A consumer
    /// must never read it as a lasting refusal (outside review 8: an outsider's VRF callback could force it).
    error SourceBusy();

    /// @notice Lifecycle of a request as seen by a consumer.
    enum RequestStatus {
        Unknown,
        Pending,
        Ready,
        Fulfilled,
        Expired,
        Failed
    }

    /// @notice Open a request; returns its id (never 0).
    function request() external returns (uint256 requestId);

    /// @notice Open a request whose value nobody can know before block `block.number + minBlocks` (nor
    /// before the source's own delay): a consumer that must fix something before the value exists (the
    /// canary truths of a session) has at least `minBlocks` blocks to do it. `request()` is
    /// `requestAfter(0)`. A request made in block b stays Pending at least through block b + minBlocks.
    /// Sources may refuse a `minBlocks` they cannot honour (VRF v2.5: 200 or more).
    function requestAfter(uint256 minBlocks) external returns (uint256 requestId);

    /// @notice Fix and return the value of a Ready (or return that of an already Fulfilled) request;
    /// reverts in any other status.
    function fulfil(uint256 requestId) external returns (bytes32 value);

    /// @notice Where the request stands.
    function status(uint256 requestId) external view returns (RequestStatus);

    /// @notice The fulfilled value (reverts unless Fulfilled).
    function valueOf(uint256 requestId) external view returns (bytes32);

    /// @notice The source's own delay: a request made in block b with `requestAfter(w)` can be obtainable
    /// (an honest oracle delivering at once) by block `b + max(minDelay(), w) + 1`, and no earlier than the
    /// delay the source promises (lookahead: its `delay`; VRF: its `requestConfirmations`). Exception: a VRF
    /// request with `w >= requestConfirmations` stays Pending through b + w, so it is delivered in b + w + 1
    /// at the earliest and obtainable (`obtainableAt`) in b + w + 2, one block later. A consumer that
    /// must draw on the value while other state is readable (AuditSessions: the opening epoch's snapshot)
    /// refuses a source whose delay does not fit (outside review 5). May change over time (VRF `setConfig`):
    /// a consumer judging a request it already made reads `delayOf` instead.
    function minDelay() external view returns (uint256);

    /// @notice The `minDelay()` in force when request `requestId` was made, fixed with it (lookahead: its
    /// constant `delay`; VRF: the `requestConfirmations` configured then). A consumer that ends something on
    /// whether a value was in time (`DrawWindow.inTime`) reads this, so a change of the source's
    /// configuration after the value was delivered moves nothing (outside review 14).
    function delayOf(uint256 requestId) external view returns (uint256);

    /// @notice The first block in which anyone could obtain the value and use it in a transaction sent after
    /// seeing it: a lookahead source's target + 1 (known from the request on, kept after the value is
    /// fixed), a VRF source's delivery block + 1 (stored with the value: inside the delivery block only a
    /// transaction ordered behind the delivery, a bundle, could use it). `type(uint256).max` while not known
    /// (a VRF request undelivered or Failed) or for an unknown request. A consumer uses a value only from
    /// this block on (AuditSessions' draw reverts `TooEarly` before it), so a consumer that must act while
    /// other state is readable (the draw snapshot) tells "the value came too late" (nobody could act:
    /// refund) from "nobody acted in time" (forfeit) with it, and a delivery nobody could act on in time
    /// gives nobody a choice between drawing and a refund (outside review 8).
    function obtainableAt(uint256 requestId) external view returns (uint256 firstBlock);
}
