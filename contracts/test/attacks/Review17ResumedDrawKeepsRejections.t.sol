// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {NoCanaryAppealsFixture} from "./AppealAttackKit.sol";
import {IAppealModule} from "../../src/interfaces/IAppealModule.sol";
import {IAuditSessions} from "../../src/interfaces/IAuditSessions.sol";
import {ISortition} from "../../src/interfaces/ISortition.sol";

/// @title Review17ResumedDrawKeepsRejections (outside review 17 of 92327f6; regression, holds)
/// @notice Property: the new `_resumeAt` layout (1 | seat << 8 | refusals << 16 | rejections << 32, the
/// earlier-panel count dropped) resumes an appeal draw stopped by MAX_REJECTIONS_PER_CALL inside a segment
/// at exactly the seat, rejection count and exclusions it stopped at: the panel drawn over several calls
/// is the one a single uninterrupted walk of the documented rule gives (seat word keccak(seed, segment,
/// seat, rejections) modulo the snapshot weight left, earlier-panel and refusing accounts excluded for the
/// segment), in the same order.
/// Set-up: 210 tier-1 accounts of 100 TRUST, a 1-segment PASS session, depth-1 appeal (k = 7,
/// refusalsCharged); 200 accounts then have their stake locked elsewhere, so about 19 in 20 samples are
/// refusals and the 7 seats need more than 64 rejections: the draw pages mid-segment with a seat taken
/// and rejections pending. The test replays the walk from the views (`sampleAt`, `leafWeightAt`, the
/// seed) and compares the seated accounts and their order.
/// Result on 92327f6: holds (3 drawPanel calls, 160 rejections in the segment, the 7 seats in the walk's order). Mutation tried: decoding `rejections` from
/// bit 48 (the old layout) makes it fail (the resumed seat words differ: another panel is seated).
/// Command: `scripts/forge test --match-path 'contracts/test/attacks/Review17ResumedDraw*' -vv`.
contract Review17ResumedDrawKeepsRejections is NoCanaryAppealsFixture {
    event log_named_uint(string key, uint256 val);

    uint256 internal constant HONEST = 10;
    uint256 internal constant BUSY = 200;

    mapping(address => bool) internal busy;

    function test_pagedDrawMatchesOneWalk() public {
        _deployAppeals();
        _addAuditors(1, HONEST + BUSY, 100e18);
        _nextEpoch();
        uint256 sid = _passedSession(1, FEE);
        uint256 round = _appeal(sid, _segs(0));
        assertTrue(appeals.roundOf(sid, round).refusalsCharged, "setup: charged");
        for (uint256 i = HONEST; i < HONEST + BUSY; ++i) {
            _busyElsewhere(auditorAddrs[i], 0);
            busy[auditorAddrs[i]] = true;
        }
        vm.roll(block.number + RANDOMNESS_DELAY + 1);
        uint256 calls = 0;
        bool midSegment = false;
        while (appeals.roundOf(sid, round).status != IAuditSessions.Status.KeysPublished) {
            IAppealModule.Round memory rd = appeals.roundOf(sid, round);
            if (rd.status == IAuditSessions.Status.Drawing && rd.drawnSeats == rd.totalSeats) break;
            if (rd.status == IAuditSessions.Status.Cancelled) break;
            if (calls > 0 && rd.drawnSeats > 0) midSegment = true;
            appeals.drawPanel(sid, round, 16);
            ++calls;
        }
        IAppealModule.Round memory end = appeals.roundOf(sid, round);
        emit log_named_uint("drawPanel calls", calls);
        assertEq(end.drawnSeats, 7, "filled");
        assertTrue(calls >= 2 && midSegment, "setup: the draw paged inside the segment with a seat taken");
        (address[] memory expected, uint256 rejections) = _replay(sid, end);
        emit log_named_uint("rejections in the walk", rejections);
        assertTrue(rejections > 64, "setup: more than one call's rejections");
        address[] memory got = _roundAuditors(sid, round);
        assertEq(got.length, expected.length, "seated count");
        for (uint256 i = 0; i < got.length; ++i) {
            assertEq(got[i], expected[i], "the paged draw seats what one walk seats, in order");
        }
    }

    struct Walk {
        bytes32 seed;
        uint256 total;
        uint256 epoch;
        uint256[] ex;
        uint256 n;
        uint256 exWeight;
        uint256 seat;
        uint256 rej;
    }

    /// @dev One uninterrupted walk of segment 0 of the round (the documented rule) from the views.
    function _replay(uint256 sid, IAppealModule.Round memory rd)
        internal
        view
        returns (address[] memory seated, uint256 rejections)
    {
        Walk memory k;
        k.seed = sessions.sourceOf(sid).valueOf(rd.drawRequest);
        k.epoch = rd.epoch;
        k.total = _sortition().totalWeightAt(1, k.epoch);
        k.ex = new uint256[](HONEST + BUSY);
        seated = new address[](7);
        while (k.seat < 7) {
            (address a, uint256 leaf, uint256 w) = _sample(k);
            k.ex[k.n++] = leaf;
            k.exWeight += w;
            if (_seatedOn(sid, a, 0) || busy[a]) {
                ++k.rej;
                ++rejections;
            } else {
                seated[k.seat++] = a;
                k.rej = 0;
            }
        }
    }

    function _sample(Walk memory k) internal view returns (address, uint256, uint256) {
        uint256 value =
            uint256(keccak256(abi.encode(k.seed, uint256(0), k.seat, k.rej))) % (k.total - k.exWeight);
        uint256[] memory list = new uint256[](k.n);
        for (uint256 i = 0; i < k.n; ++i) {
            list[i] = k.ex[i];
        }
        return _sortition().sampleAt(1, uint256(k.epoch), value, list);
    }
}
