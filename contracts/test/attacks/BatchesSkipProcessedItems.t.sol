// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {AttackBase} from "./AttackBase.sol";

/// @title BatchesSkipProcessedItems (issue 12, attack 7: batch griefing)
/// @notice Property: a relayer's commit or reveal batch skips an item already processed and still
/// processes every other item; one copied item never makes the whole batch fail.
/// @dev Five tier-1 auditors; a 4-segment session. A relayer submits every drawn auditor's commit
/// (then reveal) in one batch in the last block the phase allows; a griefer copies the first item
/// from the mempool and gets it in first.
/// Measured (`forge test --match-path 'contracts/test/attacks/*' -vv`):
/// commit batch: v1 (130a947) the relayer's batch of 5 reverted (BadSignature), 0 of the other 4
/// auditors processed, 8 of their seats slashed (64 TRUST); v2 the batch went through, 4 of 4 processed,
/// 0 seats slashed. Reveal batch: v1 reverted (AlreadyRevealed), 0 of 4 processed, 8 seats slashed
/// (64 TRUST); v2 went through, 4 of 4 processed, 0 slashed.
contract BatchesSkipProcessedItems is AttackBase {
    address internal relayer;
    address internal griefer;

    function setUp() public {
        _deployProtocol();
        for (uint256 i = 0; i < 5; ++i) {
            _newAuditor(1, 1000e18);
        }
        relayer = _newAccount();
        griefer = _newAccount();
    }

    function _ready() internal returns (uint256 sid, address[] memory list) {
        sid = _openUniform(4, 1, 0);
        _drawAll(sid);
        assertTrue(_drawDone(sid), "setup: draw failed");
        _publishKeys(sid);
        list = _auditorsOf(sid);
    }

    function _commits(uint256 sid, address[] memory list) internal view returns (bytes[] memory items) {
        items = new bytes[](list.length);
        for (uint256 i = 0; i < list.length; ++i) {
            address a = list[i];
            items[i] = _commitItem(sid, a, _voteOf(sid, a, address(0), 0), _salt(sid, a));
        }
    }

    function _reveals(uint256 sid, address[] memory list) internal view returns (bytes[] memory items) {
        items = new bytes[](list.length);
        for (uint256 i = 0; i < list.length; ++i) {
            address a = list[i];
            items[i] = _revealItem(sid, a, _voteOf(sid, a, address(0), 0), _salt(sid, a));
        }
    }

    function _firstOf(bytes[] memory items) internal pure returns (bytes[] memory one) {
        one = new bytes[](1);
        one[0] = items[0];
    }

    /// @dev Decide and settle the session; the slashes of every auditor but the griefed one.
    function _othersSlashed(uint256 sid, address[] memory list)
        internal
        returns (uint256 slashes, uint256 amount)
    {
        _finalize(sid);
        _settleAll(sid);
        for (uint256 i = 1; i < list.length; ++i) {
            slashes += results[sid][list[i]].slashes;
            amount += results[sid][list[i]].slashed;
        }
    }

    function _verdict(
        string memory what,
        uint256 processed,
        uint256 others,
        bool ok,
        bytes memory err,
        uint256 slashes,
        uint256 amount
    ) internal {
        emit log_named_uint("items in the relayer's batch", others + 1);
        emit log_named_string(
            "relayer's batch", ok ? "accepted" : string.concat("reverted: ", _errorName(err))
        );
        emit log_named_uint("other auditors processed", processed);
        emit log_named_uint("their seats slashed", slashes);
        _logTrust("their stake slashed", amount);
        assertTrue(
            ok && processed == others && slashes == 0,
            string.concat(
                "BatchesSkipProcessedItems: a griefer front-ran 1 ",
                what,
                " of a relayer's batch of ",
                _u(others + 1),
                " in the phase's last block; the batch ",
                ok ? "went through" : string.concat("reverted (", _errorName(err), ")"),
                ", ",
                _u(processed),
                " of the other ",
                _u(others),
                " auditors were processed and ",
                _u(slashes),
                " of their seats were slashed (",
                _trust(amount),
                ")"
            )
        );
    }

    function test_copiedCommitDoesNotRevertTheBatch() public {
        (uint256 sid, address[] memory list) = _ready();
        bytes[] memory items = _commits(sid, list);
        _rollToLastCommitBlock(sid);
        (bool copied,) = _submitCommits(griefer, sid, _firstOf(items));
        assertTrue(copied, "setup: the griefer's copy was refused");
        (bool ok, bytes memory err) = _submitCommits(relayer, sid, items);
        uint256 processed = 0;
        for (uint256 i = 1; i < list.length; ++i) {
            if (_hasCommitted(sid, list[i])) ++processed;
        }
        // Whoever committed reveals.
        _openRevealPhase(sid);
        for (uint256 i = 0; i < list.length; ++i) {
            address a = list[i];
            if (_hasCommitted(sid, a)) _reveal(sid, a, _voteOf(sid, a, address(0), 0), _salt(sid, a));
        }
        (uint256 slashes, uint256 amount) = _othersSlashed(sid, list);
        _verdict("signed commit", processed, list.length - 1, ok, err, slashes, amount);
    }

    function test_copiedRevealDoesNotRevertTheBatch() public {
        (uint256 sid, address[] memory list) = _ready();
        (bool committed,) = _submitCommits(relayer, sid, _commits(sid, list));
        assertTrue(committed, "setup: commit batch refused");
        bytes[] memory items = _reveals(sid, list);
        _rollToLastRevealBlock(sid);
        (bool copied,) = _submitReveals(griefer, sid, _firstOf(items));
        assertTrue(copied, "setup: the griefer's copy was refused");
        (bool ok, bytes memory err) = _submitReveals(relayer, sid, items);
        uint256 processed = 0;
        for (uint256 i = 1; i < list.length; ++i) {
            if (_hasRevealed(sid, list[i])) ++processed;
        }
        (uint256 slashes, uint256 amount) = _othersSlashed(sid, list);
        _verdict("reveal", processed, list.length - 1, ok, err, slashes, amount);
    }
}
