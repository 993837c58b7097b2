"""What the API refuses at the door, before any work is queued.

A trace that cannot become a session must be refused at submit, with the limit it breaks,
not after minutes of decomposition and pinning (`openSession` reverts `InvalidSegments`
beyond the contract's segment cap, and the job would otherwise fail late).

- Segments: `AuditSessions.MAX_SEGMENTS` (1,024) per session. The goal is one segment and every
  pre-split step at least one more; the offline decomposer (the default) makes one segment per
  unit of text, so with it the exact floor is known at submit.
- Text: the segmenter reads at most `MAX_TEXT_CHARS` characters of trace text.
- Nesting: a JSON body nested deeper than `MAX_JSON_DEPTH` is refused before it is parsed
  (a recursive parser would otherwise fail on a few kilobytes of brackets).
"""

from __future__ import annotations

import re
from typing import Literal

import numpy as np

from trustnode.api.errors import FieldError
from trustnode.hdag.offline import unit_spans
from trustnode.models.trace import TraceInput

DecomposerMode = Literal["offline", "llm-single", "llm-five-step"]

#: `AuditSessions.MAX_SEGMENTS`: the most segments the contract accepts in one session.
MAX_SESSION_SEGMENTS = 1024
#: The longest trace text (problem, thinking, output) the segmenter reads. Equal to
#: `hdag.text.MAX_TEXT_CHARS` of the segmenter's length cap; to be imported from there.
MAX_TEXT_CHARS = 1_000_000
#: Deepest nesting of arrays/objects in a JSON body (a trace needs 2).
MAX_JSON_DEPTH = 32

# A string token: from a quote to its closing quote, or to the end when there is none. Matched
# greedily without backtracking and never rescanned, so stripping strings is linear.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"?', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth_exceeds(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `raw` nests arrays/objects deeper than `limit`, in linear time.

    Strings are removed first (brackets inside them do not count), then the running depth of
    the remaining brackets is computed in one vectorised pass. Malformed JSON (a closing bracket
    too many) only lowers the count, and the parser refuses it anyway without recursing.
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    brackets = np.frombuffer(_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS), dtype=np.uint8)
    steps = np.where((brackets == ord("[")) | (brackets == ord("{")), 1, -1)
    return int(np.cumsum(steps).max(initial=0)) > limit


def trace_text_chars(trace: TraceInput) -> int:
    """Characters of the trace's canonical text (what the segmenter reads)."""
    return len(trace.to_document().text)


def segment_floor(trace: TraceInput, decomposer: DecomposerMode) -> int:
    """The fewest segments `trace` can become: the goal plus one per pre-split step, or, with the
    offline decomposer, the goal plus one per unit of text (exactly what it will build)."""
    if decomposer == "offline":
        return 1 + len(unit_spans(trace.to_document()))
    return 1 + len(trace.steps or [])


def trace_limit_errors(trace: TraceInput, decomposer: DecomposerMode) -> list[FieldError]:
    """Every limit `trace` breaks, each naming the limit; empty when it may fit a session.

    The text cap is checked first: the segment count is only worked out for text the
    segmenter accepts.
    """
    field = "steps" if trace.steps is not None else "thinking"
    chars = trace_text_chars(trace)
    if chars > MAX_TEXT_CHARS:
        message = f"the trace text is {chars:,} characters; at most {MAX_TEXT_CHARS:,} are accepted"
        return [FieldError(field=field, message=message)]
    floor = segment_floor(trace, decomposer)
    if floor > MAX_SESSION_SEGMENTS:
        what = "steps" if trace.steps is not None and decomposer != "offline" else "units of text"
        message = (
            f"the trace makes at least {floor:,} segments (the goal and {floor - 1:,} {what}); "
            f"a session holds at most {MAX_SESSION_SEGMENTS:,} segments: split the trace"
        )
        return [FieldError(field=field, message=message)]
    return []
