// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {NoncesKeyed} from "@openzeppelin/contracts/utils/NoncesKeyed.sol";
import {IVotingModule} from "../interfaces/IVotingModule.sol";
import {IAuditSessions} from "../interfaces/IAuditSessions.sol";
import {IDrawModule} from "../interfaces/IDrawModule.sol";
import {IPanelHost} from "../interfaces/IPanelHost.sol";
import {PanelKey} from "../libraries/PanelKey.sol";
import {SegmentWord} from "../libraries/SegmentWord.sol";
import {SeatWord} from "../libraries/SeatWord.sol";
import {Verdicts} from "../libraries/Verdicts.sol";

/// @title VotingModule
/// @notice One commit-reveal per (panel, auditor) over a Verdicts word covering all its seats.
/// @dev Ballot slot: the full 256-bit commitment until the auditor reveals, then its Verdicts word; a
/// per-panel bitmap (by the auditor's draw index) says which. Commitments are never truncated:
/// `commitment = keccak256(abi.encode(chainid, votingModule, sessionId, round, auditor, verdicts, salt))`.
/// Relayed commits carry an EIP-712 signature over `Commit(sessionId, round, auditor, commitment,
/// nonce)`, checked with SignatureChecker (EOAs and ERC-1271 wallets). Nonces are OpenZeppelin
/// NoncesKeyed with the panel key as key, so concurrent sessions never share a nonce. A nonce is
/// consumed by every direct commit and by every signed commit that replaces a commitment. A first
/// signed commit carries nonce 0 and consumes nothing (there is nothing to protect yet, and it saves
/// a storage slot per auditor): while the panel has no commitment of the auditor, no commit of it has
/// ever been applied, so its nonce is still 0. A signature can never overwrite a later commitment:
/// every replacement moves the nonce on. Signatures are tried as ECDSA first (an EOA, or an EIP-7702
/// account signing with its key) and then through SignatureChecker's ERC-1271 call.
/// Batches skip bad or already processed items with `ItemSkipped` and never revert for one item.
contract VotingModule is IVotingModule, EIP712, NoncesKeyed {
    /// @notice EIP-712 type of a relayed commit.
    bytes32 public constant COMMIT_TYPEHASH =
        keccak256("Commit(uint256 sessionId,uint256 round,address auditor,bytes32 commitment,uint256 nonce)");
    uint256 private constant MAX_WORDS = 128; // 1024 segments / 8
    bytes4 private constant FIRST_COMMIT = 0xffffffff;

    /// @notice The session core.
    IAuditSessions public immutable core;
    /// @notice Where seats live.
    IDrawModule public immutable drawModule;

    mapping(uint256 key => mapping(address => uint256)) private _ballots;
    mapping(uint256 key => mapping(uint256 => uint256)) private _revealed;

    constructor(IAuditSessions core_, IDrawModule drawModule_) EIP712("TrustAuditSessions", "2") {
        core = core_;
        drawModule = drawModule_;
    }

    // ---------------------------------------------------------------- commit

    /// @inheritdoc IVotingModule
    function commit(uint256 sessionId, uint256 round, bytes32 commitment) external {
        uint256 key = PanelKey.keyOf(sessionId, round);
        if (drawModule.seatWordOf(key, msg.sender) == 0) revert NotSeated(sessionId, msg.sender);
        if (commitment == bytes32(0)) revert ZeroCommitment(sessionId, msg.sender);
        uint256 previous = _ballots[key][msg.sender];
        uint256 nonce = _useNonce(msg.sender, uint192(key));
        _ballots[key][msg.sender] = uint256(commitment);
        emit Committed(sessionId, round, msg.sender, commitment, uint64(nonce));
        _host(round).onCommits(sessionId, round, previous == 0 ? 1 : 0);
    }

    /// @inheritdoc IVotingModule
    function commitBatch(uint256 sessionId, uint256 round, SignedCommit[] calldata items)
        external
        returns (uint256 applied)
    {
        if (items.length == 0) revert EmptyBatch();
        uint256 key = PanelKey.keyOf(sessionId, round);
        uint256[] memory seats = drawModule.seatWords(key, _commitAuditors(items));
        uint256 newCommitters = 0;
        for (uint256 i = 0; i < items.length; ++i) {
            SignedCommit calldata it = items[i];
            bytes4 reason = _commitSigned(sessionId, round, key, it, seats[i]);
            if (reason == bytes4(0)) {
                ++applied;
            } else if (reason == FIRST_COMMIT) {
                ++applied;
                ++newCommitters;
            } else {
                emit ItemSkipped(sessionId, it.auditor, reason);
            }
        }
        _host(round).onCommits(sessionId, round, newCommitters);
    }

    /// @dev Apply one signed commit; returns 0 (replaced), FIRST_COMMIT or the skip reason.
    function _commitSigned(
        uint256 sessionId,
        uint256 round,
        uint256 key,
        SignedCommit calldata it,
        uint256 seat
    ) private returns (bytes4) {
        address auditor = it.auditor;
        bytes32 commitment = it.commitment;
        if (seat == 0) return NotSeated.selector;
        if (commitment == bytes32(0)) return ZeroCommitment.selector;
        uint256 previous = _ballots[key][auditor];
        if (previous == uint256(commitment)) return AlreadyCommitted.selector;
        uint256 nonce = previous == 0 ? 0 : uint64(nonces(auditor, uint192(key)));
        bytes32 digest = _hashTypedDataV4(
            keccak256(abi.encode(COMMIT_TYPEHASH, sessionId, round, auditor, commitment, nonce))
        );
        if (!_validSignature(auditor, digest, it.signature)) return BadSignature.selector;
        if (previous != 0) _useNonce(auditor, uint192(key));
        _ballots[key][auditor] = uint256(commitment);
        emit Committed(sessionId, round, auditor, commitment, nonce);
        return previous == 0 ? FIRST_COMMIT : bytes4(0);
    }

    /// @dev ECDSA first (65-byte or EIP-2098 64-byte signatures; no code-size lookup for EOAs), then
    /// ERC-1271.
    function _validSignature(address signer, bytes32 digest, bytes calldata signature)
        private
        view
        returns (bool)
    {
        address recovered = address(0);
        ECDSA.RecoverError err = ECDSA.RecoverError.InvalidSignatureLength;
        if (signature.length == 65) {
            (recovered, err,) = ECDSA.tryRecover(
                digest, uint8(signature[64]), bytes32(signature[0:32]), bytes32(signature[32:64])
            );
        } else if (signature.length == 64) {
            (recovered, err,) = ECDSA.tryRecover(digest, bytes32(signature[0:32]), bytes32(signature[32:64]));
        }
        if (err == ECDSA.RecoverError.NoError && recovered == signer) return true;
        return
            signer.code.length != 0 && SignatureChecker.isValidERC1271SignatureNow(signer, digest, signature);
    }

    function _commitAuditors(SignedCommit[] calldata items) private pure returns (address[] memory list) {
        list = new address[](items.length);
        for (uint256 i = 0; i < items.length; ++i) {
            list[i] = items[i].auditor;
        }
    }

    // ---------------------------------------------------------------- reveal

    /// @inheritdoc IVotingModule
    function reveal(uint256 sessionId, uint256 round, RevealItem calldata item) external {
        uint256 key = PanelKey.keyOf(sessionId, round);
        uint256[] memory deltas = new uint256[](MAX_WORDS);
        uint256 words =
            _revealOne(sessionId, round, key, item, drawModule.seatWordOf(key, item.auditor), deltas, true);
        _setLength(deltas, words);
        _host(round).onReveals(sessionId, round, 1, deltas);
    }

    /// @inheritdoc IVotingModule
    function revealBatch(uint256 sessionId, uint256 round, RevealItem[] calldata items)
        external
        returns (uint256 applied)
    {
        if (items.length == 0) revert EmptyBatch();
        uint256 key = PanelKey.keyOf(sessionId, round);
        address[] memory list = new address[](items.length);
        for (uint256 i = 0; i < items.length; ++i) {
            list[i] = items[i].auditor;
        }
        uint256[] memory seats = drawModule.seatWords(key, list);
        uint256[] memory deltas = new uint256[](MAX_WORDS);
        uint256 words = 0;
        for (uint256 i = 0; i < items.length; ++i) {
            uint256 used = _revealOne(sessionId, round, key, items[i], seats[i], deltas, false);
            if (used != 0) {
                ++applied;
                if (used > words) words = used;
            }
        }
        _setLength(deltas, words);
        _host(round).onReveals(sessionId, round, applied, deltas);
    }

    /// @dev Check and record one opening, adding its votes to `deltas`. Returns the number of delta
    /// words it needs (0 if skipped). With `strict`, a bad item reverts with its error instead.
    function _revealOne(
        uint256 sessionId,
        uint256 round,
        uint256 key,
        RevealItem calldata it,
        uint256 seat,
        uint256[] memory deltas,
        bool strict
    ) private returns (uint256 used) {
        address auditor = it.auditor;
        uint256 verdicts = it.verdicts;
        bytes4 reason = _checkOpening(sessionId, round, key, it, seat);
        if (reason != bytes4(0)) {
            if (strict) _revertWith(reason, sessionId, auditor);
            emit ItemSkipped(sessionId, auditor, reason);
            return 0;
        }
        uint256 index = SeatWord.index(seat);
        _revealed[key][index >> 8] |= uint256(1) << (index & 255);
        _ballots[key][auditor] = verdicts;
        used = _addVotes(key, auditor, seat, verdicts, deltas);
        emit Revealed(sessionId, round, auditor, verdicts);
    }

    /// @dev Add the votes of `verdicts` to the tally deltas; returns the delta words needed.
    function _addVotes(uint256 key, address auditor, uint256 seat, uint256 verdicts, uint256[] memory deltas)
        private
        view
        returns (uint256 used)
    {
        uint256 count = SeatWord.count(seat);
        uint256 bits = SeatWord.window0(seat);
        uint256 j = 0;
        // Bounded: count <= 64 seats, windows <= 8; lanes never carry (each seat counts once).
        unchecked {
            for (uint256 window = 0; j < count; ++window) {
                if (window != 0) bits = drawModule.highSeats(key, auditor, window);
                while (bits != 0) {
                    uint256 segment = window * SeatWord.WINDOW_BITS + SeatWord.lowest(bits);
                    bits &= bits - 1;
                    uint256 w = SegmentWord.wordOf(segment);
                    if (!Verdicts.abstains(verdicts, j)) {
                        deltas[
                            w
                        ] += Verdicts.fails(verdicts, j)
                            ? SegmentWord.failVote(segment)
                            : SegmentWord.passVote(segment);
                    }
                    if (w + 1 > used) used = w + 1;
                    ++j;
                }
            }
        }
    }

    function _checkOpening(
        uint256 sessionId,
        uint256 round,
        uint256 key,
        RevealItem calldata it,
        uint256 seat
    ) private view returns (bytes4) {
        if (seat == 0) return NotSeated.selector;
        uint256 index = SeatWord.index(seat);
        if (_revealed[key][index >> 8] & (uint256(1) << (index & 255)) != 0) return AlreadyRevealed.selector;
        uint256 ballot = _ballots[key][it.auditor];
        if (ballot == 0) return NotCommitted.selector;
        if (uint256(computeCommitment(sessionId, round, it.auditor, it.verdicts, it.salt)) != ballot) {
            return CommitmentMismatch.selector;
        }
        if (!Verdicts.isValid(it.verdicts, SeatWord.count(seat))) return InvalidVerdicts.selector;
        return bytes4(0);
    }

    function _revertWith(bytes4 reason, uint256 sessionId, address auditor) private pure {
        bytes memory data = abi.encodeWithSelector(reason, sessionId, auditor);
        assembly ("memory-safe") {
            revert(add(data, 0x20), mload(data))
        }
    }

    /// @dev Who keeps the panel's phase and tallies: the core for round 0, the appeal module for appeals.
    function _host(uint256 round) private view returns (IPanelHost) {
        return round == 0 ? IPanelHost(address(core)) : IPanelHost(core.appealModule());
    }

    function _setLength(uint256[] memory a, uint256 n) private pure {
        assembly ("memory-safe") {
            mstore(a, n)
        }
    }

    // ----------------------------------------------------------------- views

    /// @inheritdoc IVotingModule
    function ballotsOf(uint256 key, address[] calldata auditors, uint256[] calldata seatWords)
        external
        view
        returns (uint256[] memory ballots, bool[] memory revealed)
    {
        ballots = new uint256[](auditors.length);
        revealed = new bool[](auditors.length);
        uint256 bitmap = _revealed[key][0];
        for (uint256 i = 0; i < auditors.length; ++i) {
            ballots[i] = _ballots[key][auditors[i]];
            uint256 index = SeatWord.index(seatWords[i]);
            uint256 word = index >> 8 == 0 ? bitmap : _revealed[key][index >> 8];
            revealed[i] = seatWords[i] != 0 && word & (uint256(1) << (index & 255)) != 0;
        }
    }

    /// @inheritdoc IVotingModule
    function computeCommitment(
        uint256 sessionId,
        uint256 round,
        address auditor,
        uint256 verdicts,
        bytes32 salt
    ) public view returns (bytes32) {
        return keccak256(abi.encode(block.chainid, address(this), sessionId, round, auditor, verdicts, salt));
    }

    /// @inheritdoc IVotingModule
    function commitDigest(
        uint256 sessionId,
        uint256 round,
        address auditor,
        bytes32 commitment,
        uint256 nonce
    ) external view returns (bytes32) {
        return _hashTypedDataV4(
            keccak256(abi.encode(COMMIT_TYPEHASH, sessionId, round, auditor, commitment, nonce))
        );
    }

    /// @inheritdoc IVotingModule
    function commitNonce(uint256 sessionId, uint256 round, address auditor) external view returns (uint256) {
        return uint64(nonces(auditor, uint192(PanelKey.keyOf(sessionId, round))));
    }

    /// @notice The EIP-712 domain separator (ERC-5267 `eip712Domain()` describes it).
    function domainSeparator() external view returns (bytes32) {
        return _domainSeparatorV4();
    }
}
