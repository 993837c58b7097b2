// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {AttackBase} from "./AttackBase.sol";

/// @title FullWidthCommitments (issue 12, attack 9: commitments stored as 192 bits)
/// @notice Property: the full 256-bit commitment is stored, and a reveal is checked against all
/// 256 bits of it.
/// @dev Finding a 192-bit collision costs about 2^96 hashes, so the behavioural test commits a
/// value that differs from the hash of the later opening in its low 64 bits only: a reveal checked
/// against the full commitment must refuse that opening.
/// Measured (`forge test --match-path 'contracts/test/attacks/*' -vv`):
/// v1 (130a947) 192 bits stored, and an opening differing in the low 64 bits was accepted; v2 256
/// bits stored (equal to the commitment) and that opening refused.
contract FullWidthCommitments is AttackBase {
    uint256 internal sid;
    address internal auditor;
    uint256 internal verdicts;
    bytes32 internal salt;
    bytes32 internal honest; // the commitment of (verdicts, salt)

    function setUp() public {
        _deployProtocol();
        for (uint256 i = 0; i < 3; ++i) {
            _newAuditor(1, 1000e18);
        }
        sid = _openUniform(2, 1, 0);
        _drawAll(sid);
        _publishKeys(sid);
        auditor = _auditorsOf(sid)[0];
        verdicts = _voteOf(sid, auditor, address(0), 0);
        salt = _salt(sid, auditor);
        honest = _commitmentOf(sid, auditor, verdicts, salt);
    }

    function _hex(bytes32 x) internal pure returns (string memory) {
        return Strings.toHexString(uint256(x), 32);
    }

    function test_theWholeCommitmentIsStored() public {
        assertTrue(_commit(sid, auditor, honest), "setup: commit refused");
        (bytes32 stored, uint256 bits) = _storedCommitment(sid, auditor);
        emit log_named_string("committed", _hex(honest));
        emit log_named_string("stored   ", _hex(stored));
        emit log_named_uint("bits stored", bits);
        assertTrue(
            bits == 256 && stored == honest,
            string.concat(
                "FullWidthCommitments: committed ",
                _hex(honest),
                ", the chain keeps ",
                _u(bits),
                " bits of it: ",
                _hex(stored)
            )
        );
    }

    function test_revealIsCheckedAgainstAll256Bits() public {
        bytes32 forged = honest ^ bytes32(uint256(0xdeadbeefcafef00d));
        assertTrue(_commit(sid, auditor, forged), "setup: commit refused");
        address[] memory list = _auditorsOf(sid);
        for (uint256 i = 1; i < list.length; ++i) {
            bytes32 c = _commitmentOf(sid, list[i], _voteOf(sid, list[i], address(0), 0), _salt(sid, list[i]));
            assertTrue(_commit(sid, list[i], c), "setup: commit refused");
        }
        _openRevealPhase(sid);
        bool accepted = _reveal(sid, auditor, verdicts, salt);
        // The phase is open: a true opening is accepted, so the refusal above is the mismatch.
        assertTrue(
            _reveal(sid, list[1], _voteOf(sid, list[1], address(0), 0), _salt(sid, list[1])),
            "setup: an honest reveal was refused"
        );
        emit log_named_string("committed        ", _hex(forged));
        emit log_named_string("opening hashes to", _hex(honest));
        emit log_named_string("reveal accepted", accepted ? "yes" : "no");
        assertTrue(
            !accepted,
            string.concat(
                "FullWidthCommitments: the chain accepted an opening that hashes to ",
                _hex(honest),
                " for the commitment ",
                _hex(forged),
                " (they differ in the low 64 bits only)"
            )
        );
    }
}
