"""What the API refuses at the door, before any work is queued.

A trace that cannot become a session must be refused at submit, with the limit it breaks,
not after minutes of decomposition and pinning (`openSession` reverts `InvalidSegments`
beyond the contract's segment cap, and the job would otherwise fail late).

- Segments: the contract's `MAX_SEGMENTS` per session (1,024), read once through the chain port
  (`SegmentCap`), the same value the provider checks before pinning. The goal is one segment and
  every pre-split step at least one more; the offline decomposer (the default) makes one segment
  per unit of text, so with it the exact floor is known at submit. While the chain cannot be
  read the cap is unknown: the trace is queued and the provider refuses it before pinning.
- Text: the segmenter reads at most `MAX_TEXT_CHARS` characters of trace text.
- Privacy: reasoning too short to cut so that no segment holds more than the node's privacy
  share (`privacy.max_decrypt_share`) is refused: one seat would read most of the trace.
- Nesting: a JSON body nested deeper than `MAX_JSON_DEPTH` is refused before it is parsed
  (a recursive parser would otherwise fail on a few kilobytes of brackets).
"""

from __future__ import annotations

import re
import threading
import time
from typing import Literal

import numpy as np

from trustnode.api.errors import FieldError, unavailable
from trustnode.hdag.offline import unit_spans
from trustnode.hdag.spans import MAX_SEGMENT_SHARE, too_short_for_share
from trustnode.hdag.text import MAX_TEXT_CHARS
from trustnode.models.trace import TraceInput
from trustnode.node.context import NodeContext

DecomposerMode = Literal["offline", "llm-single", "llm-five-step"]

#: Seconds between attempts to read the segment cap while the chain is down.
CAP_RETRY_S = 30.0
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


class SegmentCap:
    """The contract's most segments per session, read once through the chain port.

    None while the chain cannot be read (asked again at most every CAP_RETRY_S, so a chain
    outage does not slow every submission down).
    """

    def __init__(self, ctx: NodeContext) -> None:
        self.ctx = ctx
        self.value: int | None = None
        self._next_try = 0.0
        self._lock = threading.Lock()

    def get(self) -> int | None:
        with self._lock:
            if self.value is not None or time.monotonic() < self._next_try:
                return self.value
            try:
                self.value = self.ctx.port().max_segments()
            except Exception as exc:
                if unavailable(exc) is None:
                    raise
                self._next_try = time.monotonic() + CAP_RETRY_S
            return self.value


def trace_limit_errors(
    trace: TraceInput,
    decomposer: DecomposerMode,
    max_segments: int | None,
    share: float = MAX_SEGMENT_SHARE,
) -> list[FieldError]:
    """Every limit `trace` breaks, each naming the limit; empty when it may fit a session.

    The text cap is checked first: the segment count is only worked out for text the
    segmenter accepts, and only when the segment cap is known. `share` is the node's privacy
    share: a trace too short to cut within it is refused (the provider checks it exactly after
    decomposition, `hdag.spans.privacy_problem`).
    """
    field = "steps" if trace.steps is not None else "thinking"
    chars = trace_text_chars(trace)
    if chars > MAX_TEXT_CHARS:
        message = f"the trace text is {chars:,} characters; at most {MAX_TEXT_CHARS:,} are accepted"
        return [FieldError(field=field, message=message)]
    short = too_short_for_share(trace.to_document(), share)
    if short is not None:
        return [FieldError(field=field, message=short)]
    if max_segments is None:
        return []
    floor = segment_floor(trace, decomposer)
    if floor > max_segments:
        what = "steps" if trace.steps is not None and decomposer != "offline" else "units of text"
        message = (
            f"the trace makes at least {floor:,} segments (the goal and {floor - 1:,} {what}); "
            f"a session holds at most {max_segments:,} segments: split the trace"
        )
        return [FieldError(field=field, message=message)]
    return []
