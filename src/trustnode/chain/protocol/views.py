"""Reads of sessions, segments, seats, ballots and events across the core and its modules.

Seats live in the DrawModule (one seat word per panel and auditor; the drawn auditors are
named by its `SeatsDrawn` events), ballots in the VotingModule, settlement flags in the
SettlementModule, segment words (tier, weight, tally, outcome) in the core.
"""

from __future__ import annotations

from typing import Any

from eth_utils import to_checksum_address
from web3.types import EventData

from trustnode.chain.errors import ChainError
from trustnode.chain.protocol.base import ProtocolBase
from trustnode.chain.protocol.models import SegmentInfo, SessionInfo, VoteInfo
from trustnode.chain.protocol.params import SessionParams, SessionStatus, Termination
from trustnode.consensus.rules import panel_key
from trustnode.models.enums import SegmentOutcome

_SEAT_COUNT_SHIFT = 192
_SEAT_REPUTATION_SHIFT = 128


def _hex(b: bytes) -> str:
    return "0x" + bytes(b).hex()


class ViewOps(ProtocolBase):
    """Public reads (mixed into `Protocol`)."""

    _fees: dict[int, int]

    def session_count(self) -> int:
        return int(self._call(self.sessions.functions.sessionCount()))

    def session(self, session_id: int) -> SessionInfo:
        t = self._call(self.sessions.functions.sessionOf(session_id))
        if t[1] == SessionStatus.NONE:
            raise ChainError(f"no session {session_id}")
        return SessionInfo(
            session_id=session_id,
            provider=t[0],
            status=SessionStatus(t[1]),
            termination=Termination(t[2]),
            passed=t[3],
            params_version=t[4],
            segment_count=t[5],
            score_bps=t[6],
            source=t[7],
            merkle_root=_hex(t[8]),
            pool=t[9],
            total_seats=t[10],
            epoch=t[11],
            draw_request=t[12],
            slash_request=t[13],
            draw_deadline=t[14],
            key_deadline=t[15],
            commit_deadline=t[16],
            reveal_deadline=t[17],
            drawn_seats=t[18],
            auditor_count=t[20],
            committed_count=t[21],
            revealed_count=t[22],
            settled_count=t[23],
        )

    def status(self, session_id: int) -> SessionStatus:
        return SessionStatus(self._call(self.sessions.functions.statusOf(session_id)))

    def params_version(self) -> int:
        return int(self._call(self.sessions.functions.paramsVersion()))

    def params(self, version: int | None = None) -> SessionParams:
        if version is None:
            version = self.params_version()
        return SessionParams.from_abi(self._call(self.sessions.functions.paramsAt(version)))

    def fee_of(self, session_id: int) -> int:
        """The fee the provider paid (SessionOpened; cached: it never changes)."""
        if session_id not in self._fees:
            logs = self.events("AuditSessions", "SessionOpened", session_id=session_id)
            if not logs:
                raise ChainError(f"no SessionOpened event for session {session_id}")
            self._fees[session_id] = int(logs[0]["args"]["fee"])
        return self._fees[session_id]

    def segments(self, session_id: int, round: int = 0) -> list[SegmentInfo]:
        """Every segment's tier, weight, tally and outcome (8 segments per packed word)."""
        n = self.session(session_id).segment_count
        out: list[SegmentInfo] = []
        for w in range((n + 7) // 8):
            word = int(self._call(self.sessions.functions.segmentWord(session_id, round, w)))
            for i in range(w * 8, min(n, w * 8 + 8)):
                lane = word >> ((i % 8) * 32)
                out.append(
                    SegmentInfo(
                        index=i,
                        tier=(lane >> 14) & 3,
                        weight=(lane >> 16) & 0xFFFF,
                        pass_votes=(lane >> 6) & 63,
                        fail_votes=lane & 63,
                        outcome=SegmentOutcome((lane >> 12) & 3),
                    )
                )
        return out

    def auditors_of(self, session_id: int, round: int = 0) -> list[str]:
        """Drawn auditors in draw order (from the DrawModule's SeatsDrawn events)."""
        seen: dict[str, None] = {}
        for ev in self.events("DrawModule", "SeatsDrawn", session_id=session_id):
            if int(ev["args"]["round"]) == round:
                for a in ev["args"]["auditors"]:
                    seen.setdefault(str(a), None)
        return list(seen)

    def seat_word(self, session_id: int, auditor: str, round: int = 0) -> int:
        key = panel_key(session_id, round)
        return int(self._call(self.draw_module.functions.seatWordOf(key, to_checksum_address(auditor))))

    def seats_of(self, session_id: int, auditor: str, round: int = 0) -> list[int]:
        """The auditor's seats as segment indices in seat order (bit j of its verdicts word)."""
        segs = self._call(self.draw_module.functions.seatsOf(session_id, round, to_checksum_address(auditor)))
        return [int(s) for s in segs]

    def vote(self, session_id: int, auditor: str, round: int = 0) -> VoteInfo:
        a = to_checksum_address(auditor)
        key = panel_key(session_id, round)
        seat = self.seat_word(session_id, a, round)
        ballots, revealed = self._call(self.voting.functions.ballotsOf(key, [a], [seat]))
        ballot, opened = int(ballots[0]), bool(revealed[0])
        return VoteInfo(
            seat_count=(seat >> _SEAT_COUNT_SHIFT) & 0xFF,
            draw_reputation=(seat >> _SEAT_REPUTATION_SHIFT) & ((1 << 64) - 1),
            committed=opened or ballot != 0,
            revealed=opened,
            settled=seat != 0 and self.is_settled(session_id, a, round),
            commit_nonce=int(self._call(self.voting.functions.commitNonce(session_id, round, a))),
            verdicts=ballot if opened else None,
            commitment=_hex(ballot.to_bytes(32, "big")) if ballot and not opened else None,
        )

    def is_settled(self, session_id: int, auditor: str, round: int = 0) -> bool:
        return bool(
            self._call(self.settlement.functions.isSettled(session_id, round, to_checksum_address(auditor)))
        )

    def verify_segment(
        self, session_id: int, index: int, cid: str, tier: int, weight: int, proof: list[bytes]
    ) -> bool:
        """The leaf is under the root and (tier, weight) are the ones stored for the segment."""
        return bool(
            self._call(
                self.sessions.functions.verifySegment(session_id, index, cid, tier, weight, list(proof))
            )
        )

    def assignments(self, auditor: str, *, from_block: int = 0) -> list[tuple[int, int]]:
        """(session id, segment index) of every round-0 seat `auditor` was drawn for."""
        a = to_checksum_address(auditor)
        sessions: dict[int, None] = {}
        for ev in self.draw_module.events.SeatsDrawn().get_logs(from_block=from_block):
            if a in ev["args"]["auditors"] and int(ev["args"]["round"]) == 0:
                sessions.setdefault(int(ev["args"]["sessionId"]), None)
        return [(sid, seg) for sid in sessions for seg in self.seats_of(sid, a)]

    def events(
        self, contract: str, event: str, *, from_block: int = 0, session_id: int | None = None
    ) -> list[EventData]:
        """Decoded logs of `contract`.`event` (optionally one session's), oldest first."""
        c = self.contract_named(contract)
        filters: dict[str, Any] = {"sessionId": session_id} if session_id is not None else {}
        logs = getattr(c.events, event)().get_logs(from_block=from_block, argument_filters=filters or None)
        return list(logs)
