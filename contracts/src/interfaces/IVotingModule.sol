// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title IVotingModule
/// @notice Commit-reveal over each auditor's seats: one full 256-bit commitment per (panel, auditor),
/// relayable with EIP-712 signatures (EOA or ERC-1271), opened by anyone who knows the opening.
interface IVotingModule {
    /// @notice A commitment signed by its auditor, submitted by any relayer. `signature` is a 65-byte
    /// ECDSA signature, or whatever the auditor's ERC-1271 wallet accepts.
    struct SignedCommit {
        address auditor;
        bytes32 commitment;
        bytes signature;
    }

    /// @notice The opening of an auditor's commitment, submitted by anyone who knows it.
    struct RevealItem {
        address auditor;
        uint256 verdicts;
        bytes32 salt;
    }

    error NotSeated(uint256 sessionId, address auditor);
    error ZeroCommitment(uint256 sessionId, address auditor);
    error AlreadyCommitted(uint256 sessionId, address auditor);
    error BadSignature(uint256 sessionId, address auditor);
    error NotCommitted(uint256 sessionId, address auditor);
    error AlreadyRevealed(uint256 sessionId, address auditor);
    error CommitmentMismatch(uint256 sessionId, address auditor);
    error InvalidVerdicts(uint256 sessionId, address auditor);
    error EmptyBatch();

    /// @notice A batch item was not applied; `reason` is the selector of the error the single-item
    /// entry point would have reverted with.
    event ItemSkipped(uint256 indexed sessionId, address indexed auditor, bytes4 reason);
    event Committed(
        uint256 indexed sessionId, uint256 round, address indexed auditor, bytes32 commitment, uint256 nonce
    );
    event Revealed(uint256 indexed sessionId, uint256 round, address indexed auditor, uint256 verdicts);

    /// @notice Commit (or re-commit during the commit phase) the caller's own commitment.
    function commit(uint256 sessionId, uint256 round, bytes32 commitment) external;

    /// @notice Submit signed commitments of many auditors; bad items are skipped, never fatal.
    function commitBatch(uint256 sessionId, uint256 round, SignedCommit[] calldata items)
        external
        returns (uint256 applied);

    /// @notice Open one commitment (reverts with the named error on a bad item).
    function reveal(uint256 sessionId, uint256 round, RevealItem calldata item) external;

    /// @notice Open many commitments; bad or already processed items are skipped.
    function revealBatch(uint256 sessionId, uint256 round, RevealItem[] calldata items)
        external
        returns (uint256 applied);

    /// @notice Each auditor's ballot (its commitment, or its verdicts once revealed) and whether it
    /// revealed, given the auditors' SeatWords in panel `key` (read from the draw module).
    function ballotsOf(uint256 key, address[] calldata auditors, uint256[] calldata seatWords)
        external
        view
        returns (uint256[] memory ballots, bool[] memory revealed);

    /// @notice The commitment `auditor` must submit for `verdicts` (see Verdicts) and `salt`.
    function computeCommitment(
        uint256 sessionId,
        uint256 round,
        address auditor,
        uint256 verdicts,
        bytes32 salt
    ) external view returns (bytes32);

    /// @notice EIP-712 digest an auditor signs to have `commitment` relayed with `nonce`.
    function commitDigest(
        uint256 sessionId,
        uint256 round,
        address auditor,
        bytes32 commitment,
        uint256 nonce
    ) external view returns (bytes32);

    /// @notice The nonce the auditor's next signed commit in this panel must carry.
    function commitNonce(uint256 sessionId, uint256 round, address auditor) external view returns (uint256);
}
