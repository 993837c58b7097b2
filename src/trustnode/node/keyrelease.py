"""Seal a session's keys after the draw, under the privacy share (see `privacy.py`).

Each drawn auditor gets the keys of its seats and of the context that fits its share; the
rest of its context is described in an outline of node summaries sealed to its encryption
key. The bundle (key manifest, public shape, sealed outlines) is what `publishKeys` posts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from trustnode.models.hdag import HDAG
from trustnode.node.privacy import MAX_DECRYPT_SHARE, plan_release, thinking_spans
from trustnode.node.structure import OutlineEntry, SealedOutline, SessionBundle, SessionShape
from trustnode.storage.envelopes import seal_bytes
from trustnode.storage.segments import PreparedSession

log = logging.getLogger(__name__)


def seal_session(
    prepared: PreparedSession,
    hdag: HDAG,
    shape: SessionShape,
    *,
    session_id: int,
    seats: Mapping[str, list[int]],
    auditor_keys: Mapping[str, str],
    share: float = MAX_DECRYPT_SHARE,
) -> SessionBundle:
    """The bundle to publish for a drawn session."""
    plans = plan_release(shape, thinking_spans(hdag), seats, share=share)
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
                OutlineEntry(index=i, node_id=hdag.nodes[i].id, summary=hdag.nodes[i].summary).model_dump()
                for i in plan.withheld
            ]
            sealed = seal_bytes(json.dumps(entries).encode(), auditor_keys[auditor])
            outlines.append(SealedOutline(auditor=auditor, sealed="0x" + sealed.hex()))
    manifest = prepared.manifest(session_id=session_id, seats=pairs, auditor_keys=dict(auditor_keys))
    return SessionBundle(manifest=manifest, shape=shape, outlines=outlines)
