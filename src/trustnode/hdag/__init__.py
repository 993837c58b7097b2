"""HDAG decomposition (SPEC 2): validation, the offline decomposer, the LLM pipeline,
importers and exporters. `decompose` is the one entry point."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from trustnode.hdag.offline import decompose_offline, decompose_offline_report
from trustnode.hdag.spans import MAX_SEGMENT_SHARE
from trustnode.hdag.validate import (
    DEFAULT_MIN_COMPLETENESS,
    HDAGValidationError,
    ValidationReport,
    validate_hdag,
)
from trustnode.models.hdag import HDAG
from trustnode.models.trace import TraceDocument, TraceInput

if TYPE_CHECKING:
    from trustnode.llm.client import LLMClient

Mode = Literal["offline", "llm-five-step", "llm-single"]
MODES: tuple[str, ...] = ("offline", "llm-five-step", "llm-single")


def decompose(
    trace: TraceInput | TraceDocument,
    *,
    mode: Mode = "offline",
    client: LLMClient | None = None,
    min_completeness: float = DEFAULT_MIN_COMPLETENESS,
    trace_id: str | None = None,
    max_share: float = MAX_SEGMENT_SHARE,
) -> tuple[HDAG, ValidationReport]:
    """Decompose a trace into a validated HDAG; returns (hdag, validation report).

    `max_share` is the privacy share (SPEC 3): validation cuts any segment holding more of
    the thinking, so pass the node's configured share.

    `offline` needs no LLM and raises HDAGValidationError only on a decomposer bug; the
    LLM modes need `client` and raise `trustnode.llm.LLMError` subclasses when the model
    is unreachable or never answers validly (nothing partial is returned).
    """
    if mode == "offline":
        return decompose_offline_report(trace, min_completeness=min_completeness, max_share=max_share)
    if mode in ("llm-five-step", "llm-single"):
        if client is None:
            raise ValueError(f"mode {mode!r} needs an LLMClient")
        from trustnode.hdag.llm_pipeline import llm_decompose

        return llm_decompose(
            trace,
            client,
            mode=mode,
            min_completeness=min_completeness,
            trace_id=trace_id,
            max_share=max_share,
        )
    raise ValueError(f"unknown decomposition mode {mode!r}; expected one of {', '.join(MODES)}")


__all__ = [
    "DEFAULT_MIN_COMPLETENESS",
    "MAX_SEGMENT_SHARE",
    "HDAGValidationError",
    "MODES",
    "Mode",
    "ValidationReport",
    "decompose",
    "decompose_offline",
    "validate_hdag",
]
