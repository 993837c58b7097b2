// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @title BaselineCommitReveal
/// @notice The textbook per-segment commit-reveal the gas benchmark compares against: every seat
/// sends its own commit transaction and its own reveal transaction, each vote is its own storage
/// record, and tallies are plain counters per segment. Not part of the protocol.
contract BaselineCommitReveal {
    struct Vote {
        bytes32 commitment;
        bool revealed;
        bool fail;
    }

    struct Tally {
        uint64 passVotes;
        uint64 failVotes;
    }

    /// @notice Who opened each round (may assign its seats).
    mapping(uint256 => address) public organizer;
    /// @notice Whether `auditor` holds a seat on (round, segment).
    mapping(uint256 => mapping(uint256 => mapping(address => bool))) public seated;
    mapping(uint256 => mapping(uint256 => mapping(address => Vote))) private _votes;
    mapping(uint256 => mapping(uint256 => Tally)) private _tallies;
    uint256 public roundCount;

    error NotOrganizer();
    error NotSeated();
    error AlreadyRevealed();
    error CommitmentMismatch();

    event RoundOpened(uint256 indexed round, address indexed organizer);
    event SeatAssigned(uint256 indexed round, uint256 indexed segment, address indexed auditor);
    event Committed(
        uint256 indexed round, uint256 indexed segment, address indexed auditor, bytes32 commitment
    );
    event Revealed(uint256 indexed round, uint256 indexed segment, address indexed auditor, bool fail);

    /// @notice Open a round; the caller assigns its seats.
    function openRound() external returns (uint256 round) {
        round = ++roundCount;
        organizer[round] = msg.sender;
        emit RoundOpened(round, msg.sender);
    }

    /// @notice Seat `auditors[i]` on `segments[i]`.
    function assign(uint256 round, uint256[] calldata segments, address[] calldata auditors) external {
        if (organizer[round] != msg.sender) revert NotOrganizer();
        for (uint256 i = 0; i < segments.length; ++i) {
            seated[round][segments[i]][auditors[i]] = true;
            emit SeatAssigned(round, segments[i], auditors[i]);
        }
    }

    /// @notice Commit keccak256(abi.encode(chainid, this, round, segment, auditor, fail, salt)).
    function commit(uint256 round, uint256 segment, bytes32 commitment) external {
        if (!seated[round][segment][msg.sender]) revert NotSeated();
        _votes[round][segment][msg.sender].commitment = commitment;
        emit Committed(round, segment, msg.sender, commitment);
    }

    /// @notice Reveal one seat's vote and count it.
    function reveal(uint256 round, uint256 segment, bool fail, bytes32 salt) external {
        Vote storage v = _votes[round][segment][msg.sender];
        if (v.revealed) revert AlreadyRevealed();
        bytes32 c =
            keccak256(abi.encode(block.chainid, address(this), round, segment, msg.sender, fail, salt));
        if (c != v.commitment) revert CommitmentMismatch();
        v.revealed = true;
        v.fail = fail;
        if (fail) _tallies[round][segment].failVotes += 1;
        else _tallies[round][segment].passVotes += 1;
        emit Revealed(round, segment, msg.sender, fail);
    }

    /// @notice Pass and fail votes counted on a segment.
    function tally(uint256 round, uint256 segment)
        external
        view
        returns (uint256 passVotes, uint256 failVotes)
    {
        Tally memory t = _tallies[round][segment];
        return (t.passVotes, t.failVotes);
    }
}
