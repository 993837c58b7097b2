// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "./utils/TestBase.sol";
import {StakingFixture} from "./utils/StakingFixture.sol";
import {ContractWallet} from "./utils/ContractWallet.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IVotingModule} from "../src/interfaces/IVotingModule.sol";
import {VotingModule} from "../src/modules/VotingModule.sol";
import {Verdicts} from "../src/libraries/Verdicts.sol";

/// @notice Commit-reveal: relayed EIP-712 commits (EOA and ERC-1271), keyed nonces, batches that skip
/// (property 7), full-width commitments (property 9), abstentions.
contract VotingTest is StakingFixture {
    uint256 internal constant FEE = 1000e18;

    function setUp() public {
        _deploy();
        _addAuditors(1, 6, STAKE);
        _addAuditors(2, 4, STAKE);
        _addAuditors(0, 2, STAKE);
        _nextEpoch();
    }

    function _ready(uint256 segments) internal returns (uint256 sid) {
        sid = _open(_uniform(segments, 1), FEE);
        _drawAll(sid);
        _publish(sid);
    }

    function _ballot(uint256 sid, address a) internal view returns (uint256 ballot, bool revealed) {
        address[] memory one = new address[](1);
        one[0] = a;
        uint256[] memory words = new uint256[](1);
        words[0] = _seatWord(sid, a);
        (uint256[] memory b, bool[] memory r) = voting.ballotsOf(_key(sid), one, words);
        return (b[0], r[0]);
    }

    function _skips(Vm.Log[] memory logs)
        internal
        pure
        returns (bytes4[] memory reasons, address[] memory who)
    {
        uint256 n = 0;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] == IVotingModule.ItemSkipped.selector) ++n;
        }
        reasons = new bytes4[](n);
        who = new address[](n);
        n = 0;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics[0] == IVotingModule.ItemSkipped.selector) {
                who[n] = address(uint160(uint256(logs[i].topics[2])));
                reasons[n++] = abi.decode(logs[i].data, (bytes4));
            }
        }
    }

    // ---------------------------------------------------------------- commit

    function test_directCommitAndRecommitConsumeNonces() public {
        uint256 sid = _ready(6);
        address a = _auditors(sid)[0];
        IVotingModule.SignedCommit[] memory stale = new IVotingModule.SignedCommit[](1);
        stale[0] = _signCommit(sid, a, bytes32("c0")); // signed with nonce 0 before anything landed
        vm.prank(a);
        voting.commit(sid, 0, bytes32("c1"));
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Commit), "commit phase");
        assertEq(voting.commitNonce(sid, 0, a), 1, "direct commit consumed nonce 0");
        vm.prank(a);
        voting.commit(sid, 0, bytes32("c2"));
        assertEq(voting.commitNonce(sid, 0, a), 2, "re-commit consumed nonce 1");
        vm.recordLogs();
        assertEq(voting.commitBatch(sid, 0, stale), 0, "stale signature applies nothing");
        (bytes4[] memory reasons,) = _skips(vm.getRecordedLogs());
        assertEq(reasons.length, 1, "one skip");
        assertTrue(reasons[0] == IVotingModule.BadSignature.selector, "stale nonce: bad signature");
        (uint256 ballot,) = _ballot(sid, a);
        assertEq(ballot, uint256(bytes32("c2")), "latest commitment kept");
        assertEq(sessions.sessionOf(sid).committedCount, 1, "counted once");
    }

    /// @dev A first signed commit checks nonce 0 without spending a slot; a replacement consumes it, so
    /// the first signature can never be replayed over the second commitment.
    function test_signedReplacementMovesTheNonce() public {
        uint256 sid = _ready(6);
        address a = _auditors(sid)[1];
        IVotingModule.SignedCommit[] memory first = new IVotingModule.SignedCommit[](1);
        first[0] = _signCommit(sid, a, bytes32("first"));
        assertEq(voting.commitBatch(sid, 0, first), 1, "applied");
        assertEq(voting.commitNonce(sid, 0, a), 0, "first commit kept nonce 0");
        IVotingModule.SignedCommit[] memory second = new IVotingModule.SignedCommit[](1);
        second[0] = _signCommit(sid, a, bytes32("second"));
        assertEq(voting.commitBatch(sid, 0, second), 1, "replacement applied");
        assertEq(voting.commitNonce(sid, 0, a), 1, "replacement consumed nonce 0");
        assertEq(voting.commitBatch(sid, 0, first), 0, "old signature cannot come back");
        assertEq(voting.commitBatch(sid, 0, second), 0, "nor can the new one be replayed");
        (uint256 ballot,) = _ballot(sid, a);
        assertEq(ballot, uint256(bytes32("second")), "second commitment kept");
        // Nonces are keyed by session: another session of the same auditor starts at 0.
        uint256 sid2 = _ready(6);
        if (_seatWord(sid2, a) != 0) assertEq(voting.commitNonce(sid2, 0, a), 0, "independent key");
    }

    function test_commitBatchSkipsBadItemsAndAppliesTheRest() public {
        uint256 sid = _ready(6);
        address[] memory list = _auditors(sid);
        IVotingModule.SignedCommit[] memory items = new IVotingModule.SignedCommit[](5);
        items[0] = _signCommit(sid, list[0], bytes32("ok0"));
        items[1] = _signCommit(sid, list[1], bytes32("x"));
        items[1].auditor = list[2]; // list[1]'s signature presented for list[2]
        items[2] = IVotingModule.SignedCommit({auditor: provider, commitment: bytes32("p"), signature: ""});
        items[3] = _signCommit(sid, list[3], bytes32(0));
        items[4] = _signCommit(sid, list[4], bytes32("ok4"));
        vm.recordLogs();
        assertEq(voting.commitBatch(sid, 0, items), 2, "two applied");
        (bytes4[] memory reasons, address[] memory who) = _skips(vm.getRecordedLogs());
        assertEq(reasons.length, 3, "three skipped");
        assertTrue(reasons[0] == IVotingModule.BadSignature.selector && who[0] == list[2], "bad signature");
        assertTrue(reasons[1] == IVotingModule.NotSeated.selector && who[1] == provider, "not seated");
        assertTrue(reasons[2] == IVotingModule.ZeroCommitment.selector && who[2] == list[3], "zero");
        assertEq(sessions.sessionOf(sid).committedCount, 2, "two committers");
        vm.expectRevert(IVotingModule.EmptyBatch.selector);
        voting.commitBatch(sid, 0, new IVotingModule.SignedCommit[](0));
        vm.prank(provider);
        vm.expectRevert(abi.encodeWithSelector(IVotingModule.NotSeated.selector, sid, provider));
        voting.commit(sid, 0, bytes32("p"));
        vm.prank(list[5]);
        vm.expectRevert(abi.encodeWithSelector(IVotingModule.ZeroCommitment.selector, sid, list[5]));
        voting.commit(sid, 0, bytes32(0));
    }

    /// @dev Property 7 (BatchesSkipProcessedItems): copying one item of a relayer's pending batch and
    /// landing it first no longer makes the batch revert; every other auditor still gets in.
    function test_frontRunItemsAreSkipped() public {
        uint256 sid = _ready(6);
        address[] memory list = _auditors(sid);
        uint256 failMask = 1 << 2;
        IVotingModule.SignedCommit[] memory items = new IVotingModule.SignedCommit[](list.length);
        IVotingModule.RevealItem[] memory openings = new IVotingModule.RevealItem[](list.length);
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 v = _verdicts(sid, list[i], failMask, false);
            items[i] = _signCommit(sid, list[i], _commitment(sid, list[i], v));
            openings[i] = IVotingModule.RevealItem({auditor: list[i], verdicts: v, salt: _salt(sid, list[i])});
        }
        IVotingModule.SignedCommit[] memory copied = new IVotingModule.SignedCommit[](1);
        copied[0] = items[1];
        vm.prank(address(0xBAD));
        voting.commitBatch(sid, 0, copied);
        vm.recordLogs();
        assertEq(voting.commitBatch(sid, 0, items), list.length - 1, "all but the copied item");
        (bytes4[] memory reasons, address[] memory who) = _skips(vm.getRecordedLogs());
        assertTrue(reasons.length == 1 && reasons[0] == IVotingModule.AlreadyCommitted.selector, "skipped");
        assertEq(who[0], list[1], "the copied one");
        assertEq(uint256(sessions.statusOf(sid)), uint256(IAuditSessions.Status.Reveal), "everyone committed");
        IVotingModule.RevealItem[] memory one = new IVotingModule.RevealItem[](1);
        one[0] = openings[3];
        vm.prank(address(0xBAD));
        voting.revealBatch(sid, 0, one);
        vm.recordLogs();
        assertEq(voting.revealBatch(sid, 0, openings), list.length - 1, "all but the copied opening");
        (reasons, who) = _skips(vm.getRecordedLogs());
        assertTrue(reasons.length == 1 && reasons[0] == IVotingModule.AlreadyRevealed.selector, "skipped");
        assertEq(sessions.sessionOf(sid).revealedCount, list.length, "every auditor revealed once");
    }

    // -------------------------------------------------------------- ERC-1271

    function test_contractWalletAuditorSignsCommits() public {
        uint256 ownerKey = 0xC0FFEE;
        address walletOwner = vm.addr(ownerKey);
        ContractWallet wallet = new ContractWallet(walletOwner);
        token.transfer(address(wallet), 2 * STAKE);
        vm.startPrank(walletOwner);
        wallet.execute(
            address(registry), abi.encodeCall(registry.register, (0, 1, keccak256("wallet-x25519")))
        );
        wallet.execute(address(token), abi.encodeCall(token.approve, (address(staking), STAKE)));
        wallet.execute(address(staking), abi.encodeCall(staking.stake, (address(wallet), STAKE)));
        vm.stopPrank();
        // Make the wallet the only computer-tier auditor with weight.
        vm.prank(auditorAddrs[10]);
        registry.deregister();
        vm.prank(auditorAddrs[11]);
        registry.deregister();
        _nextEpoch();
        uint256 sid = _open(_uniform(3, 0), FEE);
        _drawAll(sid);
        _publish(sid);
        assertEq(_seats(sid, address(wallet)).length, 3, "wallet holds every seat");
        bytes32 commitment = voting.computeCommitment(sid, 0, address(wallet), 0, bytes32("salt"));
        bytes32 digest = voting.commitDigest(sid, 0, address(wallet), commitment, 0);
        (uint8 v, bytes32 r, bytes32 s) = vm.sign(ownerKey, digest);
        IVotingModule.SignedCommit[] memory items = new IVotingModule.SignedCommit[](1);
        items[0] = IVotingModule.SignedCommit({
            auditor: address(wallet), commitment: commitment, signature: abi.encodePacked(r, s, v)
        });
        vm.prank(walletOwner);
        wallet.freeze(true);
        assertEq(voting.commitBatch(sid, 0, items), 0, "a frozen wallet's signature is refused");
        vm.prank(walletOwner);
        wallet.freeze(false);
        assertEq(voting.commitBatch(sid, 0, items), 1, "ERC-1271 signature accepted");
        (uint256 ballot,) = _ballot(sid, address(wallet));
        assertEq(ballot, uint256(commitment), "stored");
        // An EOA signature of the owner is not the wallet's own ECDSA signature: only ERC-1271 made it pass.
        assertTrue(walletOwner != address(wallet), "distinct signer");
    }

    function test_eip712Domain() public view {
        (bytes1 fields, string memory name, string memory version, uint256 chainId, address verifying,,) =
            voting.eip712Domain();
        assertEq(uint256(uint8(fields)), 0x0f, "name, version, chainId, verifyingContract");
        assertEq(keccak256(bytes(name)), keccak256("TrustAuditSessions"), "name");
        assertEq(keccak256(bytes(version)), keccak256("2"), "version");
        assertEq(chainId, block.chainid, "chain");
        assertEq(verifying, address(voting), "verifying contract");
        bytes32 domain = keccak256(
            abi.encode(
                keccak256(
                    "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
                ),
                keccak256("TrustAuditSessions"),
                keccak256("2"),
                block.chainid,
                address(voting)
            )
        );
        bytes32 structHash = keccak256(
            abi.encode(
                voting.COMMIT_TYPEHASH(), uint256(7), uint256(0), address(0xA), bytes32("c"), uint256(3)
            )
        );
        assertEq(
            voting.commitDigest(7, 0, address(0xA), bytes32("c"), 3),
            keccak256(abi.encodePacked("\x19\x01", domain, structHash)),
            "typed data digest"
        );
    }

    // ---------------------------------------------------------------- reveal

    function test_revealRevertsWithNamedErrors() public {
        uint256 sid = _ready(6);
        address[] memory list = _auditors(sid);
        IVotingModule.RevealItem memory it =
            IVotingModule.RevealItem({auditor: list[0], verdicts: 0, salt: _salt(sid, list[0])});
        bytes32 c = _commitment(sid, list[0], 0);
        vm.prank(list[0]);
        voting.commit(sid, 0, c);
        // A valid opening during the commit phase: the core refuses.
        vm.expectRevert(
            abi.encodeWithSelector(IAuditSessions.WrongStatus.selector, sid, IAuditSessions.Status.Commit)
        );
        voting.reveal(sid, 0, it);
        _commitAll(sid, 0, 0);
        it.auditor = provider;
        vm.expectRevert(abi.encodeWithSelector(IVotingModule.NotSeated.selector, sid, provider));
        voting.reveal(sid, 0, it);
        it.auditor = list[0];
        it.verdicts = 1;
        vm.expectRevert(abi.encodeWithSelector(IVotingModule.CommitmentMismatch.selector, sid, list[0]));
        voting.reveal(sid, 0, it);
        it.verdicts = 0;
        voting.reveal(sid, 0, it);
        vm.expectRevert(abi.encodeWithSelector(IVotingModule.AlreadyRevealed.selector, sid, list[0]));
        voting.reveal(sid, 0, it);
        vm.roll(block.number + 21);
        it.auditor = list[1];
        it.salt = _salt(sid, list[1]);
        vm.expectRevert(
            abi.encodeWithSelector(IAuditSessions.WrongStatus.selector, sid, IAuditSessions.Status.Reveal)
        );
        voting.reveal(sid, 0, it);
    }

    function test_revealRejectsMalformedVerdicts() public {
        uint256 sid = _ready(6);
        address a = _auditors(sid)[0];
        uint256 count = _seats(sid, a).length;
        uint256[4] memory bad = [
            uint256(1) << count, // FAIL beyond the last seat
            uint256(1) << (128 + count), // abstain beyond the last seat
            uint256(1) | (uint256(1) << 128), // seat 0 both FAIL and abstaining
            uint256(1) << 64 // a bit outside both bitmaps
        ];
        for (uint256 i = 0; i < bad.length; ++i) {
            assertTrue(!Verdicts.isValid(bad[i], count), "malformed");
        }
        bytes32 c = voting.computeCommitment(sid, 0, a, bad[2], bytes32("s"));
        vm.prank(a);
        voting.commit(sid, 0, c);
        vm.roll(block.number + 21);
        vm.expectRevert(abi.encodeWithSelector(IVotingModule.InvalidVerdicts.selector, sid, a));
        voting.reveal(sid, 0, IVotingModule.RevealItem({auditor: a, verdicts: bad[2], salt: bytes32("s")}));
    }

    /// @dev An abstaining seat counts in no tally.
    function test_abstentionsCountInNoTally() public {
        uint256 sid = _ready(4);
        address[] memory list = _auditors(sid);
        uint256 abstainer = 0;
        uint256 abstainSeats = _seats(sid, list[abstainer]).length;
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 v = i == abstainer ? Verdicts.pack(0, (uint256(1) << abstainSeats) - 1) : 0;
            bytes32 c = voting.computeCommitment(sid, 0, list[i], v, bytes32(i));
            vm.prank(list[i]);
            voting.commit(sid, 0, c);
        }
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 v = i == abstainer ? Verdicts.pack(0, (uint256(1) << abstainSeats) - 1) : 0;
            voting.reveal(sid, 0, IVotingModule.RevealItem({auditor: list[i], verdicts: v, salt: bytes32(i)}));
        }
        uint256[] memory mine = _seats(sid, list[abstainer]);
        for (uint256 g = 0; g < 4; ++g) {
            (,, uint256 pv, uint256 fv,) = _segment(sid, g);
            uint256 expected = 3;
            for (uint256 j = 0; j < mine.length; ++j) {
                if (mine[j] == g) expected = 2;
            }
            assertEq(pv + fv, expected, "abstention not counted");
        }
    }

    /// @dev Property 9 (FullWidthCommitments): a commitment that differs from the opening's only in its
    /// low 64 bits does not open (a 192-bit prefix would have accepted it).
    function test_fullWidthCommitments() public {
        uint256 sid = _ready(6);
        address a = _auditors(sid)[0];
        bytes32 real = voting.computeCommitment(sid, 0, a, 0, bytes32("salt"));
        bytes32 nearMiss = bytes32(uint256(real) ^ 0xdeadbeef);
        vm.prank(a);
        voting.commit(sid, 0, nearMiss);
        (uint256 ballot,) = _ballot(sid, a);
        assertEq(ballot, uint256(nearMiss), "all 256 bits stored");
        vm.roll(block.number + 21);
        vm.expectRevert(abi.encodeWithSelector(IVotingModule.CommitmentMismatch.selector, sid, a));
        voting.reveal(sid, 0, IVotingModule.RevealItem({auditor: a, verdicts: 0, salt: bytes32("salt")}));
    }

    function test_commitPhaseIsEnforcedByTheCore() public {
        uint256 sid = _open(_uniform(2, 1), FEE);
        _drawAll(sid);
        address a = _auditors(sid)[0];
        vm.prank(a);
        vm.expectRevert(
            abi.encodeWithSelector(IAuditSessions.WrongStatus.selector, sid, IAuditSessions.Status.Drawing)
        );
        voting.commit(sid, 0, bytes32("c"));
        _publish(sid);
        vm.roll(block.number + 21);
        vm.prank(a);
        vm.expectRevert(
            abi.encodeWithSelector(IAuditSessions.WrongStatus.selector, sid, IAuditSessions.Status.Reveal)
        );
        voting.commit(sid, 0, bytes32("c"));
        // Appeal rounds (issue 15) have no seats yet.
        vm.expectRevert(abi.encodeWithSelector(IVotingModule.NotSeated.selector, sid, a));
        vm.prank(a);
        voting.commit(sid, 1, bytes32("c"));
    }

    function test_allCommittedOpensRevealEarly() public {
        uint256 sid = _ready(6);
        _commitAll(sid, 0, 0);
        IAuditSessions.Session memory s = sessions.sessionOf(sid);
        assertEq(uint256(s.status), uint256(IAuditSessions.Status.Reveal), "reveal opened early");
        assertEq(s.revealDeadline, block.number + 20, "reveal window from now");
    }
}
