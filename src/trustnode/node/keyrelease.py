"""Seal a session's keys after the draw, under the privacy share (see `privacy.py`).

Each drawn auditor gets the keys of its seats and of the context that fits its share; the
rest of its context is described in an outline of node summaries sealed to its encryption
key. The bundle (key manifest, public shape, sealed outlines) is what `publishKeys` posts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence

from trustnode.node.privacy import MAX_DECRYPT_SHARE, Span, plan_release
from trustnode.node.structure import OutlineEntry, SealedOutline, SessionBundle, SessionShape
from trustnode.storage.envelopes import seal_bytes
from trustnode.storage.segments import PreparedSession

log = logging.getLogger(__name__)


def seal_session(
    prepared: PreparedSession,
    shape: SessionShape,
    spans: Sequence[Sequence[Span]],
    summaries: Sequence[str],
    *,
    session_id: int,
    seats: Mapping[str, list[int]],
    auditor_keys: Mapping[str, str],
    share: float = MAX_DECRYPT_SHARE,
    round: int = 0,
) -> SessionBundle:
    """The bundle to publish for a drawn panel (round 0, or an appeal round's panel).

    `shape`, `spans` (thinking spans for the share) and `summaries` are per session leaf,
    canaries included (`node.canaries`)."""
    plans = plan_release(shape, spans, seats, share=share)
    pairs: list[tuple[str, int]] = []
    outlines: list[SealedOutline] = []
    for auditor, plan in plans.items():
        pairs += [(auditor, i) for i in plan.keys]
        if plan.seats_share > share:
            log.warning(
                "session %d: auditor %s holds seats covering %.0f%% of the thinking, over the %.0f%% "
                "privacy share (a network too small for its seat cap); it gets no context beyond them",
                session_id,
                auditor,
                100 * plan.seats_share,
                100 * share,
            )
        if plan.withheld:
            entries = [
                OutlineEntry(index=i, node_id=shape.nodes[i].node_id, summary=summaries[i]).model_dump()
                for i in plan.withheld
            ]
            sealed = seal_bytes(json.dumps(entries).encode(), auditor_keys[auditor])
            outlines.append(SealedOutline(auditor=auditor, sealed="0x" + sealed.hex()))
    manifest = prepared.manifest(session_id=session_id, seats=pairs, auditor_keys=dict(auditor_keys))
    return SessionBundle(manifest=manifest, shape=shape, outlines=outlines, round=round)
