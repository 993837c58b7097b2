// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {StakingFixture} from "./utils/StakingFixture.sol";
import {IAuditSessions} from "../src/interfaces/IAuditSessions.sol";
import {IVotingModule} from "../src/interfaces/IVotingModule.sol";
import {BaselineCommitReveal} from "../src/bench/BaselineCommitReveal.sol";

/// @notice Gas of one whole audit trace, phase by phase (a benchmark: it logs figures and asserts only
/// that the session ran). Run with
/// `forge test --match-contract GasBench -vv` (each call is its own transaction: isolate mode).
/// Figures are receipt gas (`vm.lastCallGas().gasTotalUsed` in isolate mode: intrinsic 21,000 and
/// calldata included, refunds applied).
contract GasBenchTest is StakingFixture {
    uint256 internal constant SEGMENTS = 32;
    uint256 internal constant SEATS = 3;
    uint256 internal constant AUDITORS = 16;

    event log_named_uint(string key, uint256 val);
    event log_string(string val);

    function _sessionParams() internal pure override returns (IAuditSessions.SessionParams memory p) {
        p = super._sessionParams();
        p.seatsPerTier = [uint8(1), uint8(SEATS), uint8(3)];
        p.seatCap = uint8(SEGMENTS / 4);
    }

    function setUp() public {
        _deploy();
        _addAuditors(1, AUDITORS, STAKE);
        _nextEpoch();
    }

    function _gas() internal view returns (uint256) {
        return vm.lastCallGas().gasTotalUsed;
    }

    struct Phases {
        uint256 open;
        uint256 draw;
        uint256 keys;
        uint256 commit;
        uint256 reveal;
        uint256 finalize;
        uint256 settle;
        uint256 request;
        uint256 fulfil;
    }

    /// forge-config: default.isolate = true
    function test_gasOfOneTrace() public {
        Phases memory g;
        uint256 sid = _openBench(g);
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        sessions.draw(sid, SEGMENTS * SEATS);
        g.draw = _gas();
        assertEq(sessions.sessionOf(sid).drawnSeats, SEGMENTS * SEATS, "one draw call");
        vm.prank(provider);
        sessions.publishKeys(sid, "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi");
        g.keys = _gas();
        address[] memory list = _auditors(sid);
        _vote(sid, list, g);
        sessions.finalize(sid);
        g.finalize = _gas();
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        settlement.settleBatch(sid, 0, list);
        g.settle = _gas();
        assertEq(token.balanceOf(address(sessions)), 0, "settled");
        _randomnessCosts(g);
        _report(g, list.length);
        _baseline();
    }

    function _openBench(Phases memory g) internal returns (uint256 sid) {
        uint256 fee = 2000e18;
        vm.prank(provider);
        token.approve(address(sessions), fee);
        vm.prank(provider);
        sid = sessions.openSession(keccak256("root"), _uniform(SEGMENTS, 1), fee);
        g.open = _gas();
    }

    function _vote(uint256 sid, address[] memory list, Phases memory g) internal {
        uint256 failMask = (1 << 3) | (1 << 17) | (1 << 30);
        IVotingModule.SignedCommit[] memory items = new IVotingModule.SignedCommit[](list.length);
        IVotingModule.RevealItem[] memory openings = new IVotingModule.RevealItem[](list.length);
        for (uint256 i = 0; i < list.length; ++i) {
            uint256 v = _verdicts(sid, list[i], failMask, false);
            items[i] = _signCommit(sid, list[i], _commitment(sid, list[i], v));
            openings[i] = IVotingModule.RevealItem({auditor: list[i], verdicts: v, salt: _salt(sid, list[i])});
        }
        voting.commitBatch(sid, 0, items);
        g.commit = _gas();
        voting.revealBatch(sid, 0, openings);
        g.reveal = _gas();
    }

    /// @dev The randomness source's own work, measured as direct calls (execution gas only).
    function _randomnessCosts(Phases memory g) internal {
        randomness.request();
        g.request = _gas() - 21_000 - _calldataGas(abi.encodeCall(randomness.request, ()));
        uint256 id = randomness.requestCount();
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        randomness.fulfil(id);
        g.fulfil = _gas() - 21_000 - _calldataGas(abi.encodeCall(randomness.fulfil, (id)));
    }

    function _report(Phases memory g, uint256 drawn) internal {
        uint256 seats = SEGMENTS * SEATS;
        uint256 trace = g.open + g.draw + g.keys + g.commit + g.reveal + g.finalize + g.settle;
        // Segment vote: commit + reveal + settle (which fixes the slash seed) + both requests + the
        // draw seed's fulfilment, over seats.
        uint256 segmentVote = (g.commit + g.reveal + g.settle + 2 * g.request + g.fulfil) / seats;
        emit log_named_uint("auditors drawn", drawn);
        emit log_named_uint("open", g.open);
        emit log_named_uint("draw (one call, 96 seats)", g.draw);
        emit log_named_uint("draw per seat", g.draw / seats);
        emit log_named_uint("publishKeys", g.keys);
        emit log_named_uint("commitBatch", g.commit);
        emit log_named_uint("revealBatch", g.reveal);
        emit log_named_uint("finalize (with slash request)", g.finalize);
        emit log_named_uint("settleBatch", g.settle);
        emit log_named_uint("randomness request (exec)", g.request);
        emit log_named_uint("randomness fulfil (exec)", g.fulfil);
        emit log_named_uint("gas per segment-vote", segmentVote);
        emit log_named_uint("whole trace", trace);
    }

    /// @dev The per-seat textbook commit-reveal for the same number of seats.
    function _baseline() internal {
        BaselineCommitReveal b = new BaselineCommitReveal();
        uint256 round = b.openRound();
        uint256[] memory segs = new uint256[](1);
        address[] memory who = new address[](1);
        address voter = address(0xBEEF);
        segs[0] = 0;
        who[0] = voter;
        b.assign(round, segs, who);
        bytes32 salt = keccak256("salt");
        bytes32 c = keccak256(abi.encode(block.chainid, address(b), round, uint256(0), voter, true, salt));
        vm.prank(voter);
        b.commit(round, 0, c);
        uint256 commitGas = _gas();
        vm.prank(voter);
        b.reveal(round, 0, true, salt);
        uint256 revealGas = _gas();
        emit log_named_uint("baseline gas per segment-vote", commitGas + revealGas);
    }

    function _calldataGas(bytes memory data) internal pure returns (uint256 g) {
        for (uint256 i = 0; i < data.length; ++i) {
            g += data[i] == 0 ? 4 : 16;
        }
    }
}
