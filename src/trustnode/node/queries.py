"""What users may read about audits, all from the chain and public IPFS data: never plaintext.

A session's verdicts, votes and transactions come from contract views and events; the
segment CIDs and the HDAG's shape come from the published session bundle, which is checked
against the on-chain Merkle root before it is trusted.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from web3 import Web3

from trustnode.chain.errors import ChainError
from trustnode.chain.protocol import Protocol, SessionInfo
from trustnode.chain.units import parse_trust
from trustnode.models.enums import Tier
from trustnode.models.verdict import SegmentResult, SessionOutcome, SessionState, TraceVerdict
from trustnode.node.context import NodeContext
from trustnode.node.structure import SessionBundle, SessionShape
from trustnode.node.verdict import build_outcome, legacy_facts
from trustnode.storage.merkle import SegmentCommitment, SegmentMerkleTree, segment_leaf, verify


class UnknownSessionError(LookupError):
    pass


class VoteView(BaseModel):
    auditor: str
    committed: bool
    revealed: bool
    settled: bool
    seats: list[int]
    verdicts: list[str] | None = Field(default=None, description="Per seat once revealed (PASS/FAIL).")


class SessionSummary(BaseModel):
    session_id: int
    state: SessionState
    verdict: TraceVerdict | None
    summary: str
    segments: int
    score_bps: int | None


class SessionView(BaseModel):
    """A session as the public sees it: its verdict (`outcome`), votes, transactions, deadlines."""

    session_id: int
    provider: str
    merkle_root: str
    manifest_cid: str | None
    outcome: SessionOutcome
    votes: list[VoteView]
    tx_hashes: dict[str, list[str]]
    deadlines: dict[str, int]

    # Read-only shortcuts for the pages and the CLI while they move to `outcome` (not serialised).
    @property
    def status(self) -> str:
        return self.outcome.state.value

    @property
    def verdict(self) -> str | None:
        return None if self.outcome.verdict is None else self.outcome.verdict.value

    @property
    def passed(self) -> bool | None:
        return self.outcome.passed

    @property
    def score_bps(self) -> int | None:
        return self.outcome.score_bps

    @property
    def segments(self) -> list[SegmentResult]:
        return self.outcome.segments

    @property
    def fee(self) -> int:
        """Token wei (from the decimal `outcome.fee`)."""
        return parse_trust(self.outcome.fee)


class ProofView(BaseModel):
    session_id: int
    index: int
    cid: str
    tier: int
    weight: int
    leaf: str
    proof: list[str]
    merkle_root: str
    verifies_locally: bool


class SettlementView(BaseModel):
    session_id: int
    correct: int
    incorrect: int
    slashes: int
    reward: int
    reputation: int
    block: int
    tx_hash: str


class AuditorView(BaseModel):
    address: str
    registered: bool
    tier: str | None
    expertise: int
    stake: int
    locked: int
    total_shares: int
    self_shares: int
    delegated_shares: int
    reputation: int
    reputation_float: float
    commission_bps: int
    history: list[SettlementView]


def _hex(b: Any) -> str:
    return "0x" + bytes(b).hex()


class SessionQueries:
    def __init__(self, ctx: NodeContext) -> None:
        self.ctx = ctx
        self._protocol: Protocol | None = None
        self._bundles: dict[int, SessionBundle] = {}
        self._betas: dict[int, int] = {}

    @property
    def protocol(self) -> Protocol:
        return self.ctx.protocol()

    def _logs(self, event: str, **filters: Any) -> list[Any]:
        p = self.protocol
        return list(
            getattr(p.sessions.events, event)().get_logs(
                from_block=self.ctx.deploy_block, argument_filters=filters or None
            )
        )

    def sessions(self, limit: int = 50) -> list[SessionSummary]:
        p = self.protocol
        count = p.session_count()
        out = []
        for sid in range(count, max(0, count - limit), -1):
            o = self.outcome(sid)
            out.append(
                SessionSummary(
                    session_id=sid,
                    state=o.state,
                    verdict=o.verdict,
                    summary=o.summary,
                    segments=len(o.segments),
                    score_bps=o.score_bps,
                )
            )
        return out

    def outcome(self, session_id: int, *, cids: dict[int, str] | None = None) -> SessionOutcome:
        """The session's verdict (node ids from the published shape when it is at hand)."""
        p = self.protocol
        info = self._session(session_id)
        shape = None
        if cids is not None:
            shape = self._bundles.get(session_id)
        return build_outcome(
            legacy_facts(info),
            p.segments(session_id),
            beta_bps=self._beta(info.params_version),
            node_ids={n.index: n.node_id for n in shape.shape.nodes} if shape else None,
            cids=cids,
        )

    def _beta(self, version: int) -> int:
        if version not in self._betas:
            self._betas[version] = self.protocol.params(version).beta_bps
        return self._betas[version]

    def manifest_cid(self, session_id: int) -> str | None:
        logs = self._logs("KeysPublished", sessionId=session_id)
        return str(logs[0]["args"]["manifestCid"]) if logs else None

    def bundle(self, session_id: int) -> SessionBundle | None:
        """The published bundle, checked against the on-chain root (None before keys are out)."""
        if session_id in self._bundles:
            return self._bundles[session_id]
        cid = self.manifest_cid(session_id)
        if cid is None:
            return None
        bundle = SessionBundle.model_validate_json(self.ctx.store.cat(cid))
        root = self._session(session_id).merkle_root
        tree = SegmentMerkleTree(
            [
                SegmentCommitment(index=s.index, cid=s.cid, tier=s.tier, weight=s.weight)
                for s in bundle.manifest.segments
            ]
        )
        if tree.root_hex.lower() != root.lower():
            raise ValueError(f"the bundle of session {session_id} does not match its on-chain Merkle root")
        self._bundles[session_id] = bundle
        return bundle

    def shape(self, session_id: int) -> SessionShape | None:
        b = self.bundle(session_id)
        return None if b is None else b.shape

    def _session(self, session_id: int) -> SessionInfo:
        p = self.protocol
        if not 1 <= session_id <= p.session_count():
            raise UnknownSessionError(f"no session {session_id}")
        try:
            return p.session(session_id)
        except ChainError as exc:
            if "no session" in str(exc):
                raise UnknownSessionError(str(exc)) from exc
            raise

    def session(self, session_id: int) -> SessionView:
        p = self.protocol
        s = self._session(session_id)
        try:
            bundle = self.bundle(session_id)
        except Exception:  # noqa: BLE001 - IPFS down: show what the chain says
            bundle = None
        cids = {seg.index: seg.cid for seg in bundle.manifest.segments} if bundle else {}
        votes = []
        for a in p.auditors_of(session_id):
            vote = p.vote(session_id, a)
            seats = p.seats_of(session_id, a)
            verdicts = None
            if vote.verdicts is not None:
                verdicts = ["FAIL" if vote.verdicts >> j & 1 else "PASS" for j in range(len(seats))]
            votes.append(
                VoteView(
                    auditor=a,
                    seats=seats,
                    verdicts=verdicts,
                    committed=vote.committed,
                    revealed=vote.revealed,
                    settled=vote.settled,
                )
            )
        txs: dict[str, list[str]] = {}
        for name, key in (
            ("SessionOpened", "open"),
            ("DrawCompleted", "draw"),
            ("KeysPublished", "publish_keys"),
            ("Committed", "commit"),
            ("Revealed", "reveal"),
            ("SessionFinalized", "finalize"),
            ("AuditorSettled", "settle"),
        ):
            hashes = [_hex(lg["transactionHash"]) for lg in self._logs(name, sessionId=session_id)]
            if hashes:
                txs[key] = list(dict.fromkeys(hashes))
        return SessionView(
            session_id=session_id,
            provider=s.provider,
            merkle_root=s.merkle_root,
            manifest_cid=self.manifest_cid(session_id),
            outcome=self.outcome(session_id, cids=cids),
            votes=votes,
            tx_hashes=txs,
            deadlines={
                "draw": s.draw_deadline,
                "keys": s.key_deadline,
                "commit": s.commit_deadline,
                "reveal": s.reveal_deadline,
            },
        )

    def proof(self, session_id: int, index: int) -> ProofView:
        bundle = self.bundle(session_id)
        if bundle is None:
            raise UnknownSessionError(f"session {session_id} has published no segment list yet")
        segs = bundle.manifest.segments
        if not 0 <= index < len(segs):
            raise UnknownSessionError(f"session {session_id} has no segment {index} (it has {len(segs)})")
        tree = SegmentMerkleTree(
            [SegmentCommitment(index=s.index, cid=s.cid, tier=s.tier, weight=s.weight) for s in segs]
        )
        seg = segs[index]
        leaf = segment_leaf(seg.index, seg.cid, seg.tier, seg.weight)
        proof = tree.proof_hex(index)
        return ProofView(
            session_id=session_id,
            index=index,
            cid=seg.cid,
            tier=seg.tier,
            weight=seg.weight,
            leaf=_hex(leaf),
            proof=proof,
            merkle_root=tree.root_hex,
            verifies_locally=verify(leaf, tree.proof(index), tree.root),
        )

    def verify_on_chain(self, pv: ProofView) -> bool:
        proof = [bytes.fromhex(x[2:]) for x in pv.proof]
        return self.protocol.verify_segment(pv.session_id, pv.index, pv.cid, pv.tier, pv.weight, proof)

    def auditor(self, address: str) -> AuditorView:
        p = self.protocol
        if not Web3.is_address(address):
            raise ValueError(f"{address!r} is not an address")
        a = Web3.to_checksum_address(address)
        prof = p.profile(a)
        pool = p.pool(a)
        self_shares = p.shares_of(a, a)
        history = [
            SettlementView(
                session_id=int(lg["args"]["sessionId"]),
                correct=int(lg["args"]["correct"]),
                incorrect=int(lg["args"]["incorrect"]),
                slashes=int(lg["args"]["slashes"]),
                reward=int(lg["args"]["reward"]),
                reputation=int(lg["args"]["reputation"]),
                block=int(lg["blockNumber"]),
                tx_hash=_hex(lg["transactionHash"]),
            )
            for lg in self._logs("AuditorSettled", auditor=a)
        ]
        return AuditorView(
            address=a,
            registered=prof.registered,
            tier=Tier(prof.tier).name.lower() if prof.registered else None,
            expertise=prof.expertise,
            stake=pool.assets,
            locked=pool.locked,
            total_shares=pool.total_shares,
            self_shares=self_shares,
            delegated_shares=pool.total_shares - self_shares,
            reputation=pool.reputation,
            reputation_float=pool.reputation / 10**18,
            commission_bps=pool.commission_bps,
            history=history,
        )
