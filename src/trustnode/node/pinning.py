"""What the provider does with a decomposed trace's secrets, for round 0 and every appeal round.

`pin`: lay out the session's leaves (real segments and the canary operator's gold canaries,
`node.canaries`), encrypt and pin each, and record keys, CIDs and canary places in the job before
anything is paid. `placement`: what the operator is told after the open (where each canary went).
`seal_panel`: the key bundle of a drawn panel (round 0's or an appeal round's), each auditor's
seats and context under the privacy share. `job_outcome`: the provider's own report.
"""

from __future__ import annotations

import random

from trustnode.chain.port import ChainPort, SessionInfo
from trustnode.chain.protocol import SessionParams
from trustnode.models.canary_operator import CanaryBatch, CanaryPlacement, CanaryPlacementItem
from trustnode.models.jobs import SegmentRecord, TraceJob
from trustnode.models.verdict import SessionOutcome
from trustnode.node import canaries
from trustnode.node.keyrelease import seal_session
from trustnode.node.round_views import RevealedTruth as Truth
from trustnode.node.structure import SessionBundle
from trustnode.node.verdict import build_outcome
from trustnode.storage.base import BlobStore
from trustnode.storage.segments import PreparedSession, SegmentSecret, prepare_session


def weight_of(params: SessionParams, tier: int) -> int:
    """The weight a segment of `tier` must carry (1 where the provider may choose)."""
    return params.tier_weight[tier] or 1


def fee_for(params: SessionParams, tiers: list[int]) -> int:
    """The smallest fee whose 80% audit pool covers R for every seat."""
    need = sum(params.seats_per_tier[t] for t in tiers) * params.reward
    return -(-need * 10_000 // 8_000)


class TooManySegments(ValueError):
    """The trace (with its canaries) does not fit one session."""


def pin(
    job: TraceJob,
    store: BlobStore,
    port: ChainPort,
    *,
    batch: CanaryBatch | None,
    rng: random.Random | None = None,
) -> PreparedSession:
    """Encrypt and pin every leaf; the job holds keys, CIDs and canaries afterwards."""
    assert job.hdag is not None
    hdag, params = job.hdag, port.params()
    leaves = canaries.layout(hdag, batch, rng=rng)
    limit = port.max_segments()
    if len(leaves) > limit:
        extra = f" ({len(leaves)} with its gold canaries)" if len(leaves) > len(hdag.nodes) else ""
        raise TooManySegments(
            f"the trace decomposes into {len(hdag.nodes)} segments{extra}; a session holds at most {limit}"
        )
    texts = [canaries.plaintext(job, leaf, i) for i, leaf in enumerate(leaves)]
    tiers = [int(t.auditor.tier) for t in texts]
    weights = [weight_of(params, t) for t in tiers]
    plaintexts = [t.model_dump_json().encode() for t in texts]
    prepared = prepare_session(store, plaintexts, tiers, weights, chain_id=port.chain_id)
    job.session_nonce = prepared.session_nonce
    job.merkle_root = "0x" + prepared.merkle_root.hex()
    job.segments = [
        SegmentRecord(
            index=s.index,
            node_id=leaf.node_id,
            cid=s.cid,
            key_hex=s.key,
            tier=s.tier,
            weight=s.weight,
            hdag_index=leaf.hdag_index,
            canary=leaf.canary is not None,
        )
        for s, leaf in zip(prepared.segments, leaves, strict=True)
    ]
    job.canaries = [leaf.canary for leaf in leaves if leaf.canary is not None]
    job.canary_ticket = batch.ticket if batch is not None and job.canaries else None
    return prepared


def placement(job: TraceJob, chain_id: int) -> CanaryPlacement:
    """Where each of the job's canaries went: index, CID, content key and Merkle proof, so the
    operator can decrypt its own text from IPFS and prove the leaf under the session's root."""
    assert job.session_id is not None and job.session_nonce is not None
    tree = prepared_of(job, chain_id).tree()
    seg = {s.index: s for s in job.segments}
    return CanaryPlacement(
        session_id=job.session_id,
        session_nonce=job.session_nonce,
        items=[
            CanaryPlacementItem(
                slot=c.slot if c.slot is not None else n,
                index=c.index,
                cid=seg[c.index].cid,
                key_hex=seg[c.index].key_hex,
                proof=tree.proof_hex(c.index),
            )
            for n, c in enumerate(job.canaries)
        ],
    )


def prepared_of(job: TraceJob, chain_id: int) -> PreparedSession:
    """The pinned session's secrets back from the job (to seal a panel's keys)."""
    assert job.session_nonce is not None
    return PreparedSession(
        chain_id=chain_id,
        session_nonce=job.session_nonce,
        segments=[
            SegmentSecret(index=s.index, cid=s.cid, tier=s.tier, weight=s.weight, key=s.key_hex)
            for s in job.segments
        ],
    )


def seal_panel(port: ChainPort, job: TraceJob, *, share: float, round: int = 0) -> SessionBundle:
    """The key bundle of `round`'s drawn panel: seats and context, under the privacy share."""
    assert job.session_id is not None
    seats = port.seats(job.session_id, round)
    return seal_session(
        prepared_of(job, port.chain_id),
        canaries.session_shape(job),
        canaries.session_spans(job),
        canaries.session_summaries(job),
        session_id=job.session_id,
        seats=seats,
        auditor_keys={a: port.profile(a).encryption_key for a in seats},
        share=share,
        round=round,
    )


def job_outcome(
    port: ChainPort, job: TraceJob, info: SessionInfo, *, reason: str | None = None
) -> SessionOutcome:
    """The provider's report of its session: HDAG ids and steps, its committed canaries apart."""
    return build_outcome(
        info,
        port.segments(info.session_id),
        beta_bps=port.params(info.params_version).beta_bps,
        hdag=job.hdag,
        hdag_index={s.index: h for s in job.segments if (h := canaries.hdag_index(s)) is not None},
        canaries={
            i: Truth(verdict=c.verdict, revealed=c.revealed)
            for i, c in canaries.canary_of(job).items()
            if c.committed and c.verdict is not None
        },
        cids={s.index: s.cid for s in job.segments},
        reason=reason,
    )
