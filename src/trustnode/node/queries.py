"""What users may read about audits, all from the chain and public IPFS data: never plaintext.

A session's verdicts, votes and transactions come from the chain port; the segment CIDs and
the HDAG's shape come from the published session bundle, which is checked against the
on-chain Merkle root before it is trusted. A trace this node submitted links to its session
only while the chain id, the contract and the root still match (`session_of_trace`).
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from web3 import Web3

from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import ChainPort, SessionInfo
from trustnode.chain.protocol import Protocol
from trustnode.chain.units import parse_trust
from trustnode.models.jobs import TraceJob
from trustnode.models.verdict import SegmentResult, SessionOutcome, SessionState, TraceVerdict
from trustnode.node.context import NodeContext
from trustnode.node.round_views import (
    AppealView,
    CanaryView,
    RevealedTruth,
    RoundView,
    appeal_view,
    canary_views,
    revealed_canaries,
    round_views,
)
from trustnode.node.seating import cancel_reason
from trustnode.node.structure import SessionBundle, SessionShape
from trustnode.node.verdict import build_outcome
from trustnode.storage.merkle import SegmentCommitment, SegmentMerkleTree, segment_leaf, verify


class UnknownSessionError(LookupError):
    pass


class StaleTraceLinkError(UnknownSessionError):
    """A trace's session link no longer names its session (the chain was reset or redeployed)."""


class VoteView(BaseModel):
    auditor: str
    committed: bool
    revealed: bool
    settled: bool
    seats: list[int]
    verdicts: list[str] | None = Field(
        default=None, description="Per seat once revealed (PASS, FAIL or ABSTAIN)."
    )


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
    appeal: AppealView | None = Field(default=None, description="Appeal window and rounds (issue 15).")
    rounds: list[RoundView] = Field(default_factory=list, description="Every appeal round, 1, 2, ...")
    canaries: list[CanaryView] = Field(
        default_factory=list, description="Revealed gold canaries and how their voters scored."
    )

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


def _hex(b: bytes) -> str:
    return "0x" + bytes(b).hex()


class SessionQueries:
    def __init__(self, ctx: NodeContext) -> None:
        self.ctx = ctx
        self._bundles: dict[int, SessionBundle] = {}
        self._betas: dict[int, int] = {}

    @property
    def port(self) -> ChainPort:
        return self.ctx.port()

    @property
    def protocol(self) -> Protocol:
        """The web3 contracts (for pages that still read them directly; prefer `port`)."""
        return self.ctx.protocol()

    def sessions(self, limit: int = 50) -> list[SessionSummary]:
        count = self.port.session_count()
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
        """The session's verdict: node ids from the published shape when it is cached, and the
        reason when it ended without a verdict."""
        info = self._session(session_id)
        segments = self.port.segments(session_id)
        reason = None
        if info.state.ended_without_verdict:
            reason = cancel_reason(self.port, info, [s.tier for s in segments])
        bundle = self._bundles.get(session_id)
        truths = revealed_canaries(self.port, session_id) if info.state == SessionState.FINALIZED else {}
        return build_outcome(
            info,
            segments,
            beta_bps=self._beta(info.params_version),
            node_ids={n.index: n.node_id for n in bundle.shape.nodes} if bundle else None,
            cids=cids,
            reason=reason,
            canaries={i: RevealedTruth.of(t) for i, t in truths.items()},
        )

    def _beta(self, version: int) -> int:
        if version not in self._betas:
            self._betas[version] = self.port.params(version).beta_bps
        return self._betas[version]

    def manifest_cid(self, session_id: int) -> str | None:
        published = self.port.keys_published(session_id)
        return None if published is None else published.manifest_cid

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
        if not 1 <= session_id <= self.port.session_count():
            raise UnknownSessionError(f"no session {session_id}")
        try:
            return self.port.session(session_id)
        except ContractRevertError as exc:
            raise UnknownSessionError(f"no session {session_id}: {exc}") from exc

    def session_of_trace(self, job: TraceJob) -> int:
        """The session of a trace this node submitted, if the link still holds on this chain."""
        if job.session_id is None:
            raise UnknownSessionError(f"trace {job.id} has no session yet (stage {job.stage.value})")
        port = self.port
        bound = job.chain
        if bound is not None and (bound.chain_id, bound.contract.lower()) != (
            port.chain_id,
            port.contract.lower(),
        ):
            raise StaleTraceLinkError(
                f"trace {job.id} was audited in session {job.session_id} on chain {bound.chain_id} at "
                f"{bound.contract}; this node now follows chain {port.chain_id} at {port.contract} (the chain "
                "was reset or redeployed), so that session cannot be shown"
            )
        root = bound.merkle_root if bound is not None else job.merkle_root
        try:
            info = self._session(job.session_id)
        except UnknownSessionError as exc:
            raise StaleTraceLinkError(
                f"trace {job.id}'s session {job.session_id} does not exist on this chain (was it reset?)"
            ) from exc
        if root is not None and info.merkle_root.lower() != root.lower():
            raise StaleTraceLinkError(
                f"trace {job.id} was audited in session {job.session_id} with root {root}, but session "
                f"{job.session_id} on this chain has root {info.merkle_root}: the chain was reset"
            )
        return job.session_id

    def session(self, session_id: int) -> SessionView:
        port = self.port
        s = self._session(session_id)
        try:
            bundle = self.bundle(session_id)
        except Exception:  # noqa: BLE001 - IPFS down: show what the chain says
            bundle = None
        cids = {seg.index: seg.cid for seg in bundle.manifest.segments} if bundle else {}
        votes = []
        for auditor, seats in port.seats(session_id).items():
            vote = port.vote(session_id, auditor)
            votes.append(
                VoteView(
                    auditor=auditor,
                    seats=seats,
                    verdicts=None if vote.ballot is None else [v.value for v in vote.ballot.votes],
                    committed=vote.committed,
                    revealed=vote.revealed,
                    settled=vote.settled,
                )
            )
        published = port.keys_published(session_id)
        done = s.state == SessionState.FINALIZED
        rounds = round_views(port, session_id) if done else []
        truths = revealed_canaries(port, session_id) if done else {}
        return SessionView(
            session_id=session_id,
            provider=s.provider,
            merkle_root=s.merkle_root,
            manifest_cid=None if published is None else published.manifest_cid,
            outcome=self.outcome(session_id, cids=cids),
            votes=votes,
            tx_hashes=port.session_transactions(session_id),
            deadlines={
                "draw": s.draw_deadline,
                "keys": s.key_deadline,
                "commit": s.commit_deadline,
                "reveal": s.reveal_deadline,
            },
            appeal=appeal_view(port, session_id, rounds, truths) if done else None,
            rounds=rounds,
            canaries=canary_views(port, session_id, truths) if done else [],
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
        return ProofView(
            session_id=session_id,
            index=index,
            cid=seg.cid,
            tier=seg.tier,
            weight=seg.weight,
            leaf=_hex(leaf),
            proof=tree.proof_hex(index),
            merkle_root=tree.root_hex,
            verifies_locally=verify(leaf, tree.proof(index), tree.root),
        )

    def verify_on_chain(self, pv: ProofView) -> bool:
        proof = [bytes.fromhex(x[2:]) for x in pv.proof]
        return self.port.verify_segment(pv.session_id, pv.index, pv.cid, pv.tier, pv.weight, proof)

    def auditor(self, address: str) -> AuditorView:
        port = self.port
        if not Web3.is_address(address):
            raise ValueError(f"{address!r} is not an address")
        a = Web3.to_checksum_address(address)
        prof = port.profile(a)
        pool = port.pool(a)
        self_shares = port.self_stake(a)[0]
        history = [
            SettlementView(
                session_id=st.session_id,
                correct=st.correct,
                incorrect=st.incorrect,
                slashes=st.slashes,
                reward=st.reward,
                reputation=st.reputation,
                block=st.tx.block,
                tx_hash=st.tx.tx_hash,
            )
            for st in port.settlements(auditor=a)
        ]
        return AuditorView(
            address=a,
            registered=prof.registered,
            tier=None if prof.tier is None else prof.tier.value,
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
