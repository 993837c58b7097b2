"""Sessions with gold canaries and appeal rounds, driven on a `V2Chain` with the issue-15 modules.

`AppealRun` plays one session end to end with scripted auditors and random appeals, canaries and
withheld keys, and records what the reference rules need to settle it independently: every
panel's seats, votes and draw-time reputations, each appeal's appellant, bond and contested
outcome, the canaries revealed and the slash seed. `record()` turns that into a
`final_settlement.SessionRecord`; nothing here computes a rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from eth_utils import keccak

from tests.consensus.v2_chain import V2Chain, as_dict
from trustnode.consensus.appeals import Appeal, Panel, PanelSeat, PanelStatus, SegmentRecord, Vote, min_bond
from trustnode.consensus.canaries import canary_commitment
from trustnode.consensus.encoding import SegmentLane
from trustnode.consensus.final_settlement import RevealedCanary, SessionRecord
from trustnode.consensus.rules import pack_tiers_weights, verdicts_word
from trustnode.models.enums import SegmentOutcome

#: IAuditSessions.Status of a round that ended: Finalized (decided), Expired (keys withheld), Cancelled
#: (unfillable; refused when the round's `refused` is set).
ENDED = {6: PanelStatus.DECIDED, 8: PanelStatus.KEYS_WITHHELD, 7: PanelStatus.UNFILLABLE}


@dataclass
class Auditor:
    address: str
    tier: int
    behaviour: str  # honest, malicious, lazy (always PASS), random (abstains, sometimes hides)


@dataclass
class RoundRecord:
    number: int
    appellant: str
    segments: list[int]
    depth: int
    bond: int  # what the appeal took, the sum of the segments' bonds
    appealed: list[SegmentOutcome]
    status: PanelStatus | None = None
    votes: dict[str, list[Vote]] = field(default_factory=dict)  # auditor -> votes in seat order
    seats: dict[str, list[int]] = field(default_factory=dict)


class AppealRun:
    """One session on chain with its canary and its appeal rounds."""

    def __init__(self, ch: V2Chain, rng: np.random.Generator, auditors: list[Auditor], provider: int) -> None:
        self.ch, self.rng, self.auditors = ch, rng, {a.address: a for a in auditors}
        self.provider = ch.client(provider)
        self.sid = 0
        self.flawed: list[bool] = []
        self.tiers: list[int] = []
        self.weights: list[int] = []
        self.fee = 0
        self.round0_votes: dict[str, list[Vote]] = {}
        self.round0_seats: dict[str, list[int]] = {}
        self.draw_rep: dict[tuple[int, str], int] = {}
        self.canaries: list[tuple[int, SegmentOutcome, bytes]] = []  # (index, verdict, salt) per slot
        self.revealed: list[RevealedCanary] = []
        self.rounds: list[RoundRecord] = []

    # -- round 0 ----------------------------------------------------------------------------------
    def open(self, n: int, tiers: list[int], weights: list[int], fee: int, canaries: int) -> None:
        ch = self.ch
        self.tiers, self.weights, self.fee = tiers, weights, fee
        root = keccak(f"appeal-trace-{self.rng.integers(1 << 62)}".encode())
        self.sid, _ = ch.open(self.provider, root, pack_tiers_weights(tiers, weights), fee)
        self.flawed = [bool(x) for x in self.rng.random(n) < 0.4]
        slots = self.rng.choice(n, size=canaries, replace=False)
        for i in slots:
            verdict = SegmentOutcome.FAIL if self.flawed[int(i)] else SegmentOutcome.PASS
            self.canaries.append((int(i), verdict, keccak(f"salt-{self.sid}-{i}".encode())))
        hashes = [canary_commitment(self.sid, i, v, s) for i, v, s in self.canaries]
        # the canary operator (the owner here), never the provider, commits
        ch.owner.transact(ch.c["canaries"].functions.commitCanaries(self.sid, hashes))

    def _ballot(self, a: str, segs: list[int]) -> tuple[list[Vote], bool]:
        """(votes, hidden): what `a` votes on `segs` and whether it never reveals."""
        b = self.auditors[a].behaviour
        if b == "honest":
            return [Vote.FAIL if self.flawed[s] else Vote.PASS for s in segs], False
        if b == "malicious":
            return [Vote.PASS if self.flawed[s] else Vote.FAIL for s in segs], False
        if b == "lazy":
            return [Vote.PASS for _ in segs], False
        votes = [Vote(str(self.rng.choice(["PASS", "FAIL", "ABSTAIN"]))) for _ in segs]
        return votes, bool(self.rng.random() < 0.3)

    def _vote(self, rnd: int, seats: dict[str, list[int]]) -> dict[str, list[Vote]]:
        """Commit every seated auditor (one relayed batch), reveal all but the hidden ones."""
        ch = self.ch
        ballots, openings, out = {}, [], {}
        for a, segs in seats.items():
            votes, hidden = self._ballot(a, segs)
            word = verdicts_word([v is Vote.FAIL for v in votes], [v is Vote.ABSTAIN for v in votes])
            salt = keccak(f"salt-{self.sid}-{rnd}-{a}".encode())
            ballots[a] = (word, salt)
            if not hidden:
                openings.append((a, word, salt))
            out[a] = [Vote.UNREVEALED] * len(votes) if hidden else votes
        ch.commit_signed(self.sid, ballots, rnd)
        if openings:
            ch.reveal_batch(self.sid, openings, rnd)
        return out

    def _seats(self, rnd: int) -> dict[str, list[int]]:
        seats = {}
        for a in self.auditors:
            segs = self.ch.seats_of(self.sid, a, rnd)
            if segs:
                seats[a] = segs
                self.draw_rep[(rnd, a)] = self.ch.seat_word(self.sid, a, rnd) >> 128 & (2**64 - 1)
        return seats

    def round0(self) -> None:
        ch = self.ch
        ch.wait_draw_randomness(self.sid)
        ch.draw_all(self.sid, 64)
        self.provider.transact(ch.c["sessions"].functions.publishKeys(self.sid, "manifest-0"))
        self.round0_seats = self._seats(0)
        self.round0_votes = self._vote(0, self.round0_seats)
        ch.mine_to(ch.session(self.sid)["revealDeadline"] + 1)
        ch.owner.transact(ch.c["sessions"].functions.finalize(self.sid))

    def reveal_canaries(self, keep: float) -> None:
        """Reveal each canary with probability `keep` inside the canary window (it opens the block
        after round 0 finalized: gas estimation runs at the latest block)."""
        m = self.ch.c["canaries"]
        self.ch.owner.mine(1)
        for slot, (i, verdict, salt) in enumerate(self.canaries):
            if self.rng.random() < keep:
                self.ch.owner.transact(m.functions.revealCanary(self.sid, (slot, i, int(verdict), salt)))
                self.revealed.append(RevealedCanary(index=i, verdict=verdict))

    # -- appeal rounds ----------------------------------------------------------------------------
    def appeals(self) -> dict[str, object]:
        ap = self.ch.c["appeals"]
        return as_dict(ap, "sessionAppeals", self.ch.call(ap.functions.sessionAppeals(self.sid)))

    def outcome(self, seg: int) -> SegmentOutcome:
        return SegmentOutcome(int(self.ch.call(self.ch.c["appeals"].functions.outcomeOf(self.sid, seg))))

    def appeal(self, segments: list[int], appellant: int) -> int:
        """Appeal `segments` as dev account `appellant` (bond approved to the AppealSettlement)."""
        ch = self.ch
        who = ch.client(appellant)
        q = as_dict(ch.c["appeals"], "quote", ch.call(ch.c["appeals"].functions.quote(self.sid, segments)))
        ch.fund(who.address, int(q["bond"]))
        who.transact(ch.c["token"].functions.approve(ch.c["appeals"].address, int(q["bond"])))
        appealed = [self.outcome(i) for i in segments]
        who.transact(ch.c["appeals"].functions.appeal(self.sid, segments, int(q["bond"])))
        rnd = int(q["round"])
        self.rounds.append(
            RoundRecord(rnd, who.address, list(segments), int(q["depth"]), int(q["bond"]), appealed)
        )
        return rnd

    def run_round(self, rnd: int, withhold: bool) -> None:
        """Draw the panel, publish its keys (or withhold them), vote, and let the round end."""
        ch, ap = self.ch, self.ch.c["appeals"]
        rec = self.rounds[rnd - 1]
        view = as_dict(ap, "roundOf", ch.call(ap.functions.roundOf(self.sid, rnd)))
        ch.mine_to(int(ch.call(ch.c["randomness"].functions.targetBlockOf(view["drawRequest"]))) + 1)
        for _ in range(64):
            ch.owner.transact(ap.functions.drawPanel(self.sid, rnd, 64))
            view = as_dict(ap, "roundOf", ch.call(ap.functions.roundOf(self.sid, rnd)))
            if view["drawnSeats"] == view["totalSeats"] or view["status"] != 2:
                break
        rec.seats = self._seats(rnd)
        if view["status"] == 2 and not withhold:
            self.provider.transact(ap.functions.publishPanelKeys(self.sid, rnd, f"manifest-{rnd}"))
            rec.votes = self._vote(rnd, rec.seats)
            view = as_dict(ap, "roundOf", ch.call(ap.functions.roundOf(self.sid, rnd)))
            ch.mine_to(int(view["revealDeadline"]) + 1)
        elif view["status"] == 2:
            ch.mine_to(int(view["keyDeadline"]) + 1)
            rec.votes = {a: [Vote.UNREVEALED] * len(s) for a, s in rec.seats.items()}
        ch.owner.transact(ap.functions.advance(self.sid))
        view = as_dict(ap, "roundOf", ch.call(ap.functions.roundOf(self.sid, rnd)))
        rec.status = PanelStatus.REFUSED if view["refused"] else ENDED[int(view["status"])]
        if rec.status in (PanelStatus.UNFILLABLE, PanelStatus.REFUSED):
            rec.votes = {a: [Vote.UNREVEALED] * len(s) for a, s in rec.seats.items()}

    def close(self) -> int:
        """Let every window pass, make the outcome final, fix the slash seed; returns the request id."""
        ch, ap = self.ch, self.ch.c["appeals"]
        ch.mine_to(int(self.appeals()["lastWindowEnd"]) + 1)
        ch.owner.transact(ap.functions.advance(self.sid))
        assert self.appeals()["outcomeFinal"]
        request = int(ch.session(self.sid)["slashRequest"])
        ch.mine_to(int(ch.call(ch.c["randomness"].functions.targetBlockOf(request))) + 1)
        return request

    # -- the record the rules settle --------------------------------------------------------------
    def _panel_seats(self, rnd: int, seats: dict[str, list[int]], votes: dict[str, list[Vote]], seg: int) -> list[PanelSeat]:  # fmt: skip
        return [
            PanelSeat(auditor=a, vote=votes[a][segs.index(seg)], reputation=self.draw_rep[(rnd, a)])
            for a, segs in seats.items()
            if seg in segs
        ]

    def record(self, k0: tuple[int, int, int], tau: int, beta: int, reward: int, mult: int) -> SessionRecord:
        """The session as the reference rules take it (each segment's bond: `min_bond` of its panel)."""
        segments = []
        for i, (t, w) in enumerate(zip(self.tiers, self.weights, strict=True)):
            panels = [Panel(round=0, seats=self._panel_seats(0, self.round0_seats, self.round0_votes, i))]
            for r in self.rounds:
                if i in r.segments:
                    pos = r.segments.index(i)
                    bond = min_bond(k0[t], r.depth, reward, mult)
                    appeal = Appeal(appellant=r.appellant, bond=bond, appealed=r.appealed[pos])
                    seats = self._panel_seats(r.number, r.seats, r.votes, i)
                    assert r.status is not None
                    panels.append(Panel(round=r.number, seats=seats, status=r.status, appeal=appeal))
            segments.append(SegmentRecord(index=i, tier=t, weight=w, panels=panels))
        return SessionRecord(
            fee=self.fee, seats=k0, tau_bps=tau, beta_bps=beta, segments=segments,
            canaries_committed=len(self.canaries), canaries_revealed=list(self.revealed),
        )  # fmt: skip

    def lanes(self) -> list[SegmentLane]:
        words = self.ch.segment_words(self.sid, len(self.tiers))
        return [SegmentLane(words[i // 8], i) for i in range(len(self.tiers))]
