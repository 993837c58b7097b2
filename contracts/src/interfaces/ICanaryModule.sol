// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title ICanaryModule (issue 15)
/// @notice Gold canaries: segments with a known verdict mixed into a session. Their text and truth come
/// from a canary operator that the core's owner authorizes (`setCanaryOperator`), never from the session's
/// provider (review finding 1: a provider writing its own canaries could commit a copy of a real segment it
/// fears is wrong as a PASS canary and have every honest FAIL voter scored against that false truth). The
/// provider only places the operator's texts in its session; the operator checks the placement and
/// commits `keccak256(abi.encode(uint256 sessionId, uint256 index, uint8 verdict, bytes32 salt))` per
/// canary after `openSession` and while the draw's randomness is still pending (so before anyone can
/// know the seats), exactly `segmentCount * canaryRateBps / 10000` of them; the same operator reveals
/// `(index, verdict, salt)` in the canary reveal window `(finalizedAt, finalizedAt + canaryRevealBlocks]` after round 0
/// finalized, never earlier (an early reveal would tell voters which seat is a canary). A revealed
/// canary's votes are scored against its truth with `canaryGamma` and it leaves the trace verdict; a
/// canary never revealed never blocks anything (its voters are scored as on a real segment and it takes
/// the largest segment weight off the passed weight). Reference: `src/trustnode/consensus/canaries.py`.
interface ICanaryModule {
    /// @notice One reveal: `slot` is the commitment's position in the committed list.
    struct CanaryReveal {
        uint256 slot;
        uint256 index;
        uint8 verdict;
        bytes32 salt;
    }

    /// @notice A session's canaries.
    struct CanaryState {
        uint16 committed;
        uint16 revealed;
        /// The reveal window (revealOpensAfter, revealCloses]; 0 until round 0 finalized.
        uint40 revealOpensAfter;
        uint40 revealCloses;
        /// Refund due (k_0 R canaryRefundBps / 10000 per revealed canary) and paid by the Treasury.
        uint96 refundDue;
        uint96 refundPaid;
        /// The operator that committed (0 until committed); only it may reveal.
        address operator;
    }

    /// @notice Only the core's owner (governance) authorizes canary operators.
    error NotCoreOwner(address caller);
    error ZeroOperator();
    /// @notice The caller is not an authorized canary operator.
    error NotCanaryOperator(address caller);
    /// @notice The caller is the session's provider: it never writes its own canaries' truth.
    error ProviderIsCanaryOperator(uint256 sessionId);
    /// @notice Only the operator that committed a session's canaries may reveal them.
    error NotCommittingOperator(uint256 sessionId, address caller);
    error CanariesAlreadyCommitted(uint256 sessionId);
    error WrongCanaryCount(uint256 sessionId, uint256 given, uint256 required);
    error ZeroCommitment(uint256 sessionId, uint256 slot);
    /// @notice The draw's randomness is no longer pending (or the session is past Created).
    error CommitTooLate(uint256 sessionId);
    error CanaryRevealNotOpen(uint256 sessionId, uint256 opensAfter);
    error CanaryRevealClosed(uint256 sessionId, uint256 closedAt);
    error UnknownCanarySlot(uint256 sessionId, uint256 slot);
    error CanaryAlreadyRevealed(uint256 sessionId, uint256 slot);
    error InvalidSegment(uint256 sessionId, uint256 index);
    error SegmentAlreadyCanary(uint256 sessionId, uint256 index);
    error InvalidVerdict(uint256 sessionId, uint256 verdict);
    error CanaryMismatch(uint256 sessionId, uint256 slot);
    error EmptyBatch();

    event CanaryOperatorSet(address indexed operator, bool allowed);
    event CanariesCommitted(uint256 indexed sessionId, bytes32[] commitments);
    event CanaryRevealed(uint256 indexed sessionId, uint256 slot, uint256 index, uint256 verdict);
    /// @notice The Treasury refunded `paid` of `due` to the provider for a revealed canary.
    event CanaryRefund(uint256 indexed sessionId, address indexed provider, uint256 due, uint256 paid);
    /// @notice A batch item was not applied; `reason` is the selector `revealCanary` would revert with.
    event ItemSkipped(uint256 indexed sessionId, uint256 slot, bytes4 reason);

    /// @notice Authorize (or revoke) a canary operator (the core's owner only). Revoking takes effect at
    /// once: a revoked operator can neither commit nor reveal, so the canaries it committed in sessions
    /// still open stay unrevealed (each costs the trace the largest segment weight, as a canary never
    /// revealed always did); re-authorizing it lets it reveal them while their window is open.
    function setCanaryOperator(address operator, bool allowed) external;

    function isCanaryOperator(address operator) external view returns (bool);

    /// @notice Commit the session's canaries (an authorized operator that is not the session's provider;
    /// once; count fixed by the rate; an empty list is how a session with 0 required canaries commits
    /// nothing). Only while the draw's randomness is still Pending, which a session owing canaries keeps
    /// for at least the core's `canaryCommitBlocks` blocks after its opening (`CommitTooLate` after).
    function commitCanaries(uint256 sessionId, bytes32[] calldata commitments) external;

    /// @notice Canaries session `sessionId` of `segmentCount` segments owes (0 for sessions opened before
    /// this module was wired). The core asks at opening: only a session owing canaries gets a commit window.
    function canariesOwed(uint256 sessionId, uint256 segmentCount) external view returns (uint256);

    /// @notice Reveal one canary (the committing operator, still authorized; reverts with the named error).
    function revealCanary(uint256 sessionId, CanaryReveal calldata item) external;

    /// @notice Reveal many (the committing operator); bad or already revealed items are skipped with
    /// `ItemSkipped`.
    function revealCanaries(uint256 sessionId, CanaryReveal[] calldata items)
        external
        returns (uint256 applied);

    /// @notice Number of canaries a session of `segmentCount` segments must commit.
    function canaryCount(uint256 segmentCount, uint256 rateBps) external pure returns (uint256);

    /// @notice The commitment of a canary.
    function canaryCommitment(uint256 sessionId, uint256 index, uint8 verdict, bytes32 salt)
        external
        pure
        returns (bytes32);

    function canariesOf(uint256 sessionId) external view returns (CanaryState memory);

    function commitmentsOf(uint256 sessionId) external view returns (bytes32[] memory);

    /// @notice Revealed canaries in reveal order: segment indices and verdicts (1 PASS, 2 FAIL).
    function revealedOf(uint256 sessionId)
        external
        view
        returns (uint256[] memory indices, uint8[] memory verdicts);

    /// @notice Revealed canary bitmap (bit i % 256 of word i / 256), the truth of each (bit set = FAIL) and
    /// the number of commitments never revealed.
    function canaryMasks(uint256 sessionId)
        external
        view
        returns (uint256[] memory revealedBits, uint256[] memory failBits, uint256 unrevealed);
}
