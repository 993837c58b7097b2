// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {Vm} from "../utils/TestBase.sol";
import {AppealsFixture} from "../utils/AppealsFixture.sol";
import {ICanaryModule} from "../../src/interfaces/ICanaryModule.sol";
import {ISettlementModule} from "../../src/interfaces/ISettlementModule.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";

/// @notice Property: a canary's truth is never written by the session's provider (review finding 1).
/// Attack (provider): it fears that real segment 4 of its trace is wrong, so it commits segment 4 itself
/// as a PASS "canary". The honest panel votes FAIL on it; after the vote the provider reveals PASS: the
/// segment leaves the trace verdict (the trace passes) and every honest FAIL voter on it is scored wrong
/// against the false truth (reputation moved by canaryGamma, slashed with its coin). Closed by the canary
/// operator role: only an operator authorized by the core's owner commits, never the session's provider,
/// even an authorized one. The calls go through `address.call` so that this test also compiles against the
/// contract before the role existed, where it fails with the damage it measured.
contract CanaryTruthNotWrittenByProviderTest is AppealsFixture {
    uint8 internal constant PASS = 1;
    uint8 internal constant FAIL = 2;
    uint256 internal constant WRONG = 4; // the real segment the provider fears is wrong

    function setUp() public {
        _deployAppeals();
        _addAuditors(1, 12, STAKE);
        _nextEpoch();
    }

    function _commitAs(address who, uint256 sid, bytes32[] memory c)
        internal
        returns (bool ok, bytes memory err)
    {
        vm.prank(who);
        (ok, err) = address(canaries).call(abi.encodeCall(ICanaryModule.commitCanaries, (sid, c)));
    }

    function test_CanaryTruthNotWrittenByProvider() public {
        uint256 sid = _open(_uniform(10, 1), FEE); // 10 segments at 10%: one canary owed
        bytes32[] memory c = new bytes32[](1);
        c[0] = _canaryCommitment(sid, WRONG, PASS); // the real wrong segment, committed as a PASS canary
        (bool ok, bytes memory err) = _commitAs(provider, sid, c);
        if (ok) _playAttack(sid); // the old contract: measure the damage, then fail
        assertEq(
            keccak256(err),
            keccak256(abi.encodeWithSignature("NotCanaryOperator(address)", provider)),
            "the provider is no canary operator"
        );
        // Even authorized as an operator, the provider never commits its own session's canaries.
        vm.prank(owner);
        (bool set,) =
            address(canaries).call(abi.encodeWithSignature("setCanaryOperator(address,bool)", provider, true));
        assertTrue(set, "owner authorizes the provider as an operator (of other providers' sessions)");
        (ok, err) = _commitAs(provider, sid, c);
        assertTrue(!ok, "an authorized provider still cannot commit its own canaries");
        assertEq(
            keccak256(err),
            keccak256(abi.encodeWithSignature("ProviderIsCanaryOperator(uint256)", sid)),
            "ProviderIsCanaryOperator"
        );
        // The operator commits the session's real canary (segment 7, a PASS canary it wrote); the honest
        // panel's FAIL on segment 4 stands and nobody is scored against a false truth.
        c[0] = _canaryCommitment(sid, 7, PASS);
        _commitCanaries(sid, c);
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 1 << WRONG, 0, 0);
        vm.roll(block.number + 1);
        vm.prank(provider);
        (ok, err) = address(canaries)
            .call(
                abi.encodeCall(
                    ICanaryModule.revealCanary,
                    (
                        sid,
                        ICanaryModule.CanaryReveal({
                        slot: 0, index: 7, verdict: PASS, salt: _canarySalt(sid, 7)
                    })
                    )
                )
            );
        assertTrue(!ok, "the provider cannot reveal either");
        _revealCanary(sid, 0, 7, PASS);
        (,, uint256 passW, uint256 totalW,) = escrow.verdictOf(sid);
        assertEq(totalW, 9, "only the operator's canary leaves the verdict; segment 4 stays in");
        assertEq(passW, 8, "segment 4 counts as failed");
        (uint256 wrong, uint256 slashes, uint256 voters) = _settleAndCount(sid);
        assertTrue(voters > 0, "segment 4 had voters");
        assertEq(wrong, 0, "no honest FAIL voter scored wrong");
        assertEq(slashes, 0, "no honest FAIL voter slashed");
        assertEq(_outcomeOf(sid, WRONG), FAIL, "segment 4's final outcome is the panel's FAIL");
    }

    /// @dev The attack on a contract that lets the provider commit: everyone votes FAIL on segment 4 (the
    /// honest verdict), the provider reveals its PASS "truth", and the session settles.
    function _playAttack(uint256 sid) internal {
        _drawAll(sid);
        _publish(sid);
        _voteRound0(sid, 1 << WRONG, 0, 0);
        vm.roll(block.number + 1);
        vm.prank(provider);
        _revealCanary(sid, 0, WRONG, PASS);
        bool passed = escrowPassed(sid);
        (uint256 wrong, uint256 slashes, uint256 voters) = _settleAndCount(sid);
        _fail(
            string.concat(
                "provider wrote a canary truth: ",
                Strings.toString(wrong),
                " of ",
                Strings.toString(voters),
                " honest FAIL voters on the copied segment scored wrong, ",
                Strings.toString(slashes),
                " slashed; trace passed: ",
                passed ? "yes" : "no"
            )
        );
    }

    function escrowPassed(uint256 sid) internal view returns (bool passed) {
        (passed,,,,) = escrow.verdictOf(sid);
    }

    /// @dev Settle, and count over segment 4's voters the votes scored wrong and the slashes applied.
    function _settleAndCount(uint256 sid) internal returns (uint256 wrong, uint256 slashes, uint256 voters) {
        vm.recordLogs();
        _closeAndSettle(sid);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bytes32 topic = ISettlementModule.AuditorSettled.selector;
        for (uint256 i = 0; i < logs.length; ++i) {
            if (logs[i].topics.length == 0 || logs[i].topics[0] != topic) continue;
            address a = address(uint160(uint256(logs[i].topics[2])));
            if (!_sitsOn(sid, a, WRONG)) continue;
            (,, uint256 incorrect,, uint256 s,,,) = abi.decode(
                logs[i].data, (uint256, uint256, uint256, uint256, uint256, uint256, uint256, uint256)
            );
            ++voters;
            wrong += incorrect;
            slashes += s;
        }
    }

    function _sitsOn(uint256 sid, address a, uint256 segment) internal view returns (bool) {
        uint256[] memory segs = _seats(sid, a);
        for (uint256 j = 0; j < segs.length; ++j) {
            if (segs[j] == segment) return true;
        }
        return false;
    }
}
