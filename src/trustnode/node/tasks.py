"""An auditor's view of one session: decrypt its seats and the context it was given, and turn
them into audit tasks. Context whose key was withheld (the privacy share, see `privacy.py`)
appears as a `ContextSegment` with `withheld=True` and the node's summary."""

from __future__ import annotations

import json

from trustnode.models.audit import AuditTask, ContextSegment, SegmentContext
from trustnode.node.structure import OutlineEntry, SegmentPlaintext, SessionBundle
from trustnode.storage.base import BlobStore
from trustnode.storage.envelopes import open_bytes, open_envelopes
from trustnode.storage.segments import fetch_segment


def open_outline(bundle: SessionBundle, address: str, private_key: bytes) -> dict[int, OutlineEntry]:
    sealed = bundle.outline_for(address)
    if sealed is None:
        return {}
    entries = json.loads(open_bytes(bytes.fromhex(sealed.sealed[2:]), private_key))
    return {e.index: e for e in (OutlineEntry.model_validate(x) for x in entries)}


def build_tasks(
    store: BlobStore,
    bundle: SessionBundle,
    *,
    address: str,
    private_key: bytes,
    seats: list[int],
    onchain_root: bytes,
) -> list[AuditTask]:
    """One task per seat, in seat order, with the context this auditor may see."""
    keys = open_envelopes(bundle.manifest, address, private_key)
    outline = open_outline(bundle, address, private_key)
    shape = bundle.shape
    cache: dict[int, SegmentPlaintext] = {}

    def plain(i: int) -> SegmentPlaintext:
        if i not in cache:
            data = fetch_segment(store, bundle.manifest, i, keys[i], onchain_root=onchain_root)
            cache[i] = SegmentPlaintext.model_validate_json(data)
        return cache[i]

    def context(i: int) -> ContextSegment | None:
        node = shape.nodes[i]
        if i in keys:
            pt = plain(i)
            return ContextSegment(node_id=pt.node_id, level=pt.level, content=pt.content, summary=pt.summary)
        if i in outline:
            return ContextSegment(
                node_id=node.node_id, level=node.level, content="", withheld=True, summary=outline[i].summary
            )
        return None

    goals = [c for c in (context(i) for i in shape.goal_indices()) if c is not None]
    problem = goals[0].content or goals[0].summary if goals else ""
    tasks = []
    for seg in seats:
        node = shape.nodes[seg]
        own = plain(seg)
        tasks.append(
            AuditTask(
                segment_index=seg,
                node_id=own.node_id,
                level=own.level,
                auditor_type=own.auditor,
                content=own.content,
                context=SegmentContext(
                    problem=problem,
                    parents=[c for c in (context(i) for i in node.parents) if c is not None],
                    children=[c for c in (context(i) for i in node.children) if c is not None],
                ),
            )
        )
    return tasks
