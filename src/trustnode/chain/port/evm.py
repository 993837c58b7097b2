"""The chain port over the deployed protocol v2 contracts, delegating to `chain.protocol.Protocol`.

Everything specific to this contract version lives here and in `evm_auditor`: the status
numbering, the verdicts word (bit j FAIL, bit 128 + j abstain), seats in the DrawModule, ballots
in the VotingModule, the `DrawFailed` reason, and the two randomness requests (the draw's,
fixed by the first draw call; the slash coins', fixed by the first settle call).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import reverts
from trustnode.chain.port.evm_appeals import AppealOps
from trustnode.chain.port.evm_auditor import AuditorOps, ref
from trustnode.chain.port.evm_provider import ProviderOps
from trustnode.chain.port.types import (
    Capabilities,
    DrawFailure,
    DrawStep,
    KeysPublished,
    NotReady,
    PoolState,
    SegmentTally,
    SessionInfo,
    TxRef,
)
from trustnode.chain.protocol import Protocol, RequestStatus, SessionParams, SessionStatus, Termination
from trustnode.consensus.canaries import trace_verdict_with_canaries
from trustnode.models.enums import SegmentOutcome
from trustnode.models.verdict import SessionState, TierName

#: (contract attribute, event, phase) of every transaction `session_transactions` reports.
_PHASES = (
    ("sessions", "SessionOpened", "open"),
    ("draw_module", "SeatsDrawn", "draw"),
    ("sessions", "KeysPublished", "publish_keys"),
    ("voting", "Committed", "commit"),
    ("voting", "Revealed", "reveal"),
    ("sessions", "SessionFinalized", "finalize"),
    ("settlement", "AuditorSettled", "settle"),
    ("appeal_module", "AppealOpened", "appeal"),
    ("appeal_module", "PanelKeysPublished", "publish_keys"),
    ("appeal_module", "RoundFinalized", "finalize"),
    ("canary_module", "CanariesCommitted", "canaries"),
    ("canary_module", "CanaryRevealed", "canaries"),
)


_UNDRAWN = (SessionState.CREATED, SessionState.DRAWING)


def _hex(b: Any) -> str:
    return "0x" + bytes(b).hex()


def _state(status: SessionStatus) -> SessionState:
    return SessionState(status.name.lower())


#: Finalized sessions whose `SessionInfo` a port keeps (the oldest is dropped first).
FINAL_SESSIONS_KEPT = 4096


class Web3Port(ProviderOps, AppealOps, AuditorOps):
    """`ChainPort` over a `Protocol` (one signer, one deployment)."""

    capabilities = Capabilities(protocol_version=2, abstain=True, refund_cancel=False)

    def __init__(self, protocol: Protocol, *, deploy_block: int = 0) -> None:
        super().__init__()
        self.protocol = protocol
        self._deploy_block = deploy_block
        # Sessions whose outcome is final never change again: daemons that wait on many of them
        # (to settle, to show a verdict) read each once instead of on every poll.
        self._final: OrderedDict[int, SessionInfo] = OrderedDict()

    # -- identity and chain --------------------------------------------------------------------
    @property
    def chain_id(self) -> int:
        return self.protocol.client.chain_id

    @property
    def contract(self) -> str:
        return str(self.protocol.sessions.address)

    @property
    def deploy_block(self) -> int:
        return self._deploy_block

    def block_number(self) -> int:
        return self.protocol.client.block_number()

    def chain_time(self) -> int:
        return self.protocol.block_timestamp()

    def block_timestamp(self, block: int) -> int:
        return self.protocol.block_timestamp(block)

    def _logs(self, contract: Any, event: str, **filters: Any) -> list[Any]:
        return list(
            getattr(contract.events, event)().get_logs(
                from_block=self._deploy_block, argument_filters=filters or None
            )
        )

    # -- parameters and auditors ---------------------------------------------------------------
    def params(self, version: int | None = None) -> SessionParams:
        """The core's parameters with the appeal and canary parameters in force now (the
        AppealSettlement versions them by session: `appeal_params_of`)."""
        p = self.protocol
        core = p.params(version)
        if p.appeal_module is None:
            return core
        return core.model_copy(update=p.appeal_params_of(p.session_count() + 1).model_dump())

    @cached_property
    def _max_segments(self) -> int:
        return int(self.protocol.client.call(self.protocol.sessions.functions.MAX_SEGMENTS()))

    def max_segments(self) -> int:
        return self._max_segments

    def pool(self, auditor: str) -> PoolState:
        pool = self.protocol.pool(auditor)
        return PoolState(
            assets=pool.assets,
            locked=pool.locked,
            total_shares=pool.total_shares,
            reputation=pool.reputation,
            commission_bps=pool.commission_bps,
        )

    def token_balance(self, holder: str) -> int:
        return self.protocol.balance_of(holder)

    def draw(self, session_id: int, max_seats: int, round: int = 0) -> DrawStep:
        if round != 0:
            return self._draw_round(session_id, max_seats, round)
        p = self.protocol
        info = p.session(session_id)
        if info.status == SessionStatus.CREATED:
            state = p.draw_randomness(session_id)
            if state.status == RequestStatus.PENDING:
                wait = max(1, state.target_block + 1 - p.client.block_number()) if state.target_block else 1
                raise NotReady(
                    f"session {session_id}: the draw's randomness is not fixed yet", retry_blocks=wait
                )
            if state.status in (RequestStatus.EXPIRED, RequestStatus.FAILED):
                receipt = p.advance(session_id)  # ends the session (draw would revert and undo it)
                after = p.session(session_id)
                return DrawStep(
                    tx=ref(receipt), state=_state(after.status), drawn_seats=after.drawn_seats,
                    total_seats=after.total_seats,
                )  # fmt: skip
        try:
            receipt = p.draw(session_id, max_seats)
        except ContractRevertError as exc:
            if reverts.is_revert(exc, reverts.TOO_EARLY):
                raise NotReady(f"session {session_id}: the draw's randomness is not fixed yet") from exc
            raise
        after = p.session(session_id)
        return DrawStep(
            tx=ref(receipt), state=_state(after.status), drawn_seats=after.drawn_seats,
            total_seats=after.total_seats,
        )  # fmt: skip

    def _draw_round(self, session_id: int, max_seats: int, round: int) -> DrawStep:
        """Draw an appeal round's panel; NotReady while the round's own randomness is not fixed."""
        p = self.protocol
        if p.appeal_module is None:
            raise self._unsupported()
        rv = p.round_of(session_id, round)
        if rv.status == SessionStatus.CREATED:
            state = p.randomness_state(p.source_of(session_id), rv.draw_request)
            if state.status == RequestStatus.PENDING:
                wait = max(1, state.target_block + 1 - p.client.block_number()) if state.target_block else 1
                raise NotReady(
                    f"session {session_id} round {round}: randomness not fixed yet", retry_blocks=wait
                )
        try:
            receipt = p.draw_panel(session_id, round, max_seats)
        except ContractRevertError as exc:
            if reverts.is_revert(exc, reverts.TOO_EARLY):
                raise NotReady(f"session {session_id} round {round}: randomness not fixed yet") from exc
            raise
        after = p.round_of(session_id, round)
        return DrawStep(
            tx=ref(receipt), state=_state(p.session(session_id).status), drawn_seats=after.drawn_seats,
            total_seats=after.total_seats,
        )  # fmt: skip

    def draw_failure(self, session_id: int) -> DrawFailure | None:
        """The DrawModule's `DrawFailed` reason of a cancelled session."""
        p = self.protocol
        logs = self._logs(p.draw_module, "DrawFailed", sessionId=session_id)
        if not logs:
            return None
        a = logs[0]["args"]
        tier = int(a["tier"])
        info = p.session(session_id)
        k = p.params(info.params_version).seats_per_tier[tier]
        segments = sum(1 for s in p.segments(session_id) if s.tier == tier)
        return DrawFailure(
            tier=TierName.of(tier),
            seats_needed=k * segments,
            eligible=int(a["eligibleLeft"]),
            per_segment=k,
            refused=int(a["lockRefusals"]),
        )

    def seats(self, session_id: int, round: int = 0) -> dict[str, list[int]]:
        p = self.protocol
        return {a: p.seats_of(session_id, a, round) for a in p.auditors_of(session_id, round)}

    def publish_keys(self, session_id: int, manifest_cid: str, round: int = 0) -> TxRef:
        if round != 0:
            if self.protocol.appeal_module is None:
                raise self._unsupported()
            return ref(self.protocol.publish_panel_keys(session_id, round, manifest_cid))
        return ref(self.protocol.publish_keys(session_id, manifest_cid))

    def keys_published(self, session_id: int, round: int = 0) -> KeysPublished | None:
        p = self.protocol
        if round != 0:
            if p.appeal_module is None:
                return None
            logs = self._logs(p.appeal_module, "PanelKeysPublished", sessionId=session_id, round=round)
        else:
            logs = self._logs(p.sessions, "KeysPublished", sessionId=session_id)
        return self._keys_event(logs[0]) if logs else None

    @staticmethod
    def _keys_event(ev: Any) -> KeysPublished:
        return KeysPublished(
            session_id=int(ev["args"]["sessionId"]),
            round=int(ev["args"].get("round", 0)),
            manifest_cid=str(ev["args"]["manifestCid"]),
            tx=ref(ev),
            log_index=int(ev["logIndex"]),
        )

    def events(self, from_block: int, to_block: int) -> list[KeysPublished]:
        """Round-0 `KeysPublished` of the core and every round's `PanelKeysPublished`, in chain order."""
        p = self.protocol
        logs = list(p.sessions.events.KeysPublished().get_logs(from_block=from_block, to_block=to_block))
        if p.appeal_module is not None:
            logs += p.appeal_module.events.PanelKeysPublished().get_logs(
                from_block=from_block, to_block=to_block
            )
        ordered = sorted(logs, key=lambda lg: (lg["blockNumber"], lg["logIndex"]))
        return [self._keys_event(lg) for lg in ordered]

    def advance(self, session_id: int) -> tuple[SessionState, TxRef]:
        """The core's transitions; once finalized, the appeal module's (rounds, the outcome's finality)."""
        p = self.protocol
        if p.session(session_id).status == SessionStatus.FINALIZED and p.appeal_module is not None:
            receipt = p.advance_appeals(session_id)
        else:
            receipt = p.advance(session_id)
        return _state(p.session(session_id).status), ref(receipt)

    def finalized(self, session_id: int) -> TxRef | None:
        logs = self._logs(self.protocol.sessions, "SessionFinalized", sessionId=session_id)
        return ref(logs[0]) if logs else None

    # -- public reads ---------------------------------------------------------------------------
    def session_count(self) -> int:
        return self.protocol.session_count()

    def session(self, session_id: int) -> SessionInfo:
        """The core's session; with issue 15, the verdict over the current outcomes (appeal rounds'
        included) with canaries out of the sums, as the appeal module computes it."""
        if (known := self._final.get(session_id)) is not None:
            return known
        info = self._read_session(session_id)
        p = self.protocol
        if info.state == SessionState.FINALIZED and (
            p.appeal_module is None or p.is_outcome_final(session_id)
        ):
            self._final[session_id] = info
            if len(self._final) > FINAL_SESSIONS_KEPT:
                self._final.popitem(last=False)
        return info

    def _read_session(self, session_id: int) -> SessionInfo:
        p = self.protocol
        s = p.session(session_id)
        pass_weight = total_weight = 0
        if s.status == SessionStatus.FINALIZED and p.appeal_module is not None:
            segs = self.segments(session_id)
            revealed = sorted(self._revealed_canaries(session_id))
            owed = p.canaries_owed(session_id, len(segs))
            tv = trace_verdict_with_canaries(
                [g.outcome for g in segs], [g.weight for g in segs], revealed,
                max(0, owed - len(revealed)), p.params(s.params_version).beta_bps,
            )  # fmt: skip
            s = s.model_copy(update={"passed": tv.passed, "score_bps": tv.score_bps})
            pass_weight, total_weight = tv.weight_passed, tv.total_weight
        elif s.status == SessionStatus.FINALIZED:
            words = p.segments(session_id)
            total_weight = sum(g.weight for g in words)
            pass_weight = sum(g.weight for g in words if g.outcome == SegmentOutcome.PASS)
        return SessionInfo(
            session_id=session_id, provider=s.provider, state=_state(s.status),
            params_version=s.params_version, segment_count=s.segment_count, auditor_count=s.auditor_count,
            merkle_root=s.merkle_root, fee=p.fee_of(session_id), total_seats=s.total_seats,
            drawn_seats=s.drawn_seats, committed_count=s.committed_count, revealed_count=s.revealed_count,
            draw_deadline=s.draw_deadline, key_deadline=s.key_deadline, commit_deadline=s.commit_deadline,
            reveal_deadline=s.reveal_deadline, passed=s.passed, score_bps=s.score_bps,
            pass_weight=pass_weight, total_weight=total_weight,
            termination=None if s.termination == Termination.NONE else s.termination.name.lower(),
            draw_until=p.snapshot_readable_until(s.epoch) if _state(s.status) in _UNDRAWN else 0,
        )  # fmt: skip

    def segments(self, session_id: int) -> list[SegmentTally]:
        """Round 0's tallies with each segment's current outcome (an appeal round's replaces it)."""
        p = self.protocol
        out = [SegmentTally.model_validate(s.model_dump()) for s in p.segments(session_id)]
        if p.appeal_module is not None and p.session_appeals(session_id).appealed_count:
            for seg in out:
                history = p.segment_appeals(session_id, seg.index)
                if history.depth:
                    seg.outcome = SegmentOutcome(history.outcome)
        return out

    def session_transactions(self, session_id: int) -> dict[str, list[str]]:
        txs: dict[str, list[str]] = {}
        for attr, event, phase in _PHASES:
            contract = getattr(self.protocol, attr)
            if contract is None:
                continue
            logs = self._logs(contract, event, sessionId=session_id)
            hashes = [_hex(lg["transactionHash"]) for lg in logs]
            if hashes:
                txs[phase] = list(dict.fromkeys([*txs.get(phase, []), *hashes]))
        return txs

    def verify_segment(
        self, session_id: int, index: int, cid: str, tier: int, weight: int, proof: Sequence[bytes]
    ) -> bool:
        return self.protocol.verify_segment(session_id, index, cid, tier, weight, list(proof))
