"""Appeals and canaries of `Web3Port` (issue 15).

Until the contracts that implement issue 15 are deployed, a v2 deployment has neither: the
reads say so (appeals disabled, no canary required, the outcome final at finalization) and the
writes revert as the contracts do for a round above 0 (`UnsupportedRound`).
"""

from __future__ import annotations

from collections.abc import Sequence

from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port.types import TxRef
from trustnode.chain.port.types_appeals import (
    AppealOpened,
    AppealQuote,
    AppealStatus,
    CanaryReveal,
    CanaryState,
    RoundInfo,
)
from trustnode.chain.protocol import Protocol


class AppealOps:
    """Issue-15 operations of `Web3Port` (mixed in)."""

    protocol: Protocol

    @staticmethod
    def _unsupported() -> ContractRevertError:
        return ContractRevertError("UnsupportedRound", {"round": 1}, "0x")

    def commit_canaries(self, session_id: int, commitments: Sequence[bytes]) -> TxRef:
        raise self._unsupported()

    def reveal_canaries(self, session_id: int, reveals: Sequence[CanaryReveal]) -> TxRef:
        raise self._unsupported()

    def canaries(self, session_id: int) -> CanaryState:
        info = self.protocol.session(session_id)
        return CanaryState(session_id=session_id, required=0, commitments=[], commit_until=info.draw_deadline)

    def appeal_quote(self, session_id: int, segments: Sequence[int]) -> AppealQuote:
        return AppealQuote(
            session_id=session_id, segments=list(segments), round=1, depth=0, seats=[], bonds=[], bond=0,
            appealable_until=None, refusal="AppealsDisabled", reason="this deployment has no appeals",
        )  # fmt: skip

    def appeal(self, session_id: int, segments: Sequence[int], max_bond: int) -> AppealOpened:
        raise self._unsupported()

    def appeal_status(self, session_id: int) -> AppealStatus:
        status = self.protocol.session(session_id).status
        return AppealStatus(session_id=session_id, enabled=False, final=status.terminal)

    def rounds(self, session_id: int) -> list[RoundInfo]:
        return []


__all__ = ["AppealOps"]
