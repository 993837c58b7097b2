"""Bindings of the issue-15 modules: appeals (IAppealModule, with the IAppealSettlement bound to it,
which holds the bonds, the parameters and the money) and gold canaries (ICanaryModule).

They are optional parts of a deployment (`AuditSessions.appealModule()` / `canaryModule()` read
zero without them: the outcome is then final at `finalize`). Appeal rounds > 0 live in the appeal
module: their draw, keys and phases; their votes go through the VotingModule and their settlement
through the SettlementModule with `round = a`, like round 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from web3 import Web3
from web3.contract import Contract
from web3.logs import DISCARD
from web3.types import TxReceipt

from trustnode.chain.errors import ChainError
from trustnode.chain.protocol.base import ProtocolBase
from trustnode.chain.protocol.models_appeals import (
    AppealModuleParams,
    CanaryStateView,
    QuoteView,
    RoundView,
    SegmentAppealsView,
    SessionAppealsView,
    SessionMoneyView,
)
from trustnode.consensus.canaries import CanaryReveal

ZERO = "0x" + "00" * 20


class AppealBindings(ProtocolBase):
    """Appeal and canary calls (mixed into `Protocol`)."""

    def _module(self, name: str, getter: str) -> Contract | None:
        addr = self.addresses.get(name)
        if addr is None:
            fns = {f.get("name") for f in self.sessions.abi if f.get("type") == "function"}
            if getter not in fns:
                return None
            addr = str(self._call(getattr(self.sessions.functions, getter)()))
        if int(addr, 16) == 0:
            return None
        self.addresses[name] = addr
        return self.client.contract(name, addr)

    @cached_property
    def appeal_module(self) -> Contract | None:
        return self._module("AppealModule", "appealModule")

    @cached_property
    def canary_module(self) -> Contract | None:
        return self._module("CanaryModule", "canaryModule")

    @cached_property
    def appeal_settlement(self) -> Contract | None:
        """The AppealSettlement bound to the appeal module (bonds, parameters, money)."""
        m = self.appeal_module
        if m is None:
            return None
        addr = self.addresses.get("AppealSettlement") or str(self._call(m.functions.settlement()))
        self.addresses["AppealSettlement"] = addr
        return self.client.contract("AppealSettlement", addr)

    def _escrow(self) -> Contract:
        if self.appeal_settlement is None:
            raise ChainError("this deployment has no appeal module (issue 15)")
        return self.appeal_settlement

    def _appeals(self) -> Contract:
        if self.appeal_module is None:
            raise ChainError("this deployment has no appeal module (issue 15)")
        return self.appeal_module

    def _canaries(self) -> Contract:
        if self.canary_module is None:
            raise ChainError("this deployment has no canary module (issue 15)")
        return self.canary_module

    # -- parameters ------------------------------------------------------------------------------
    def appeal_params_of(self, session_id: int) -> AppealModuleParams:
        """The appeal and canary parameters `session_id` runs under (a future id: the current ones)."""
        return AppealModuleParams.from_abi(self._call(self._escrow().functions.paramsOf(session_id)))

    def set_appeal_params(self, params: AppealModuleParams) -> TxReceipt:
        """A new version for sessions opened from now on (the owner of the AppealSettlement)."""
        return self._tx(self._escrow().functions.setParams(params.as_abi()))

    # -- appeals ---------------------------------------------------------------------------------
    def appeal_quote(
        self,
        session_id: int,
        segments: Sequence[int],
        *,
        block: int | str = "pending",
        leavers: Sequence[str] = (),
    ) -> QuoteView:
        """What `appeal` would open in the next block (the one a transaction sent now lands in); the
        refusal's revert otherwise.  `leavers`: proven leavers (the 3-argument `quote`, outside review 22;
        strictly ascending as numbers: sorted here)."""
        m = self._appeals()
        if leavers:
            fn = m.functions.quote(session_id, list(segments), _sorted_addresses(leavers))
        else:
            fn = m.functions.quote(session_id, list(segments))
        return QuoteView.from_abi(self.client.call(fn, block=block))

    def appeal(
        self,
        session_id: int,
        segments: Sequence[int],
        max_bond: int,
        *,
        require_charged: bool = False,
        leavers: Sequence[str] = (),
    ) -> tuple[int, TxReceipt]:
        """Appeal (approving the appeal module, which moves the bond to its AppealSettlement, up to
        `max_bond`); returns the round opened and the receipt. `require_charged`: the 4-argument
        `appeal`, reverting RefusalsNotCharged unless the round's lock refusals are charged when mined
        (outside review 17: pass the quote's flag). `leavers`: proven leavers (the 5-argument `appeal`,
        outside review 22)."""
        m = self._appeals()
        self.ensure_allowance(m.address, max_bond)
        if leavers:
            call = m.functions.appeal(
                session_id, list(segments), max_bond, require_charged, _sorted_addresses(leavers)
            )
        else:
            call = m.functions.appeal(session_id, list(segments), max_bond, require_charged)
        receipt = self._tx(call)
        events = m.events.AppealOpened().process_receipt(receipt, errors=DISCARD)
        return int(events[0]["args"]["round"]), receipt

    def draw_panel(self, session_id: int, round: int, max_seats: int) -> TxReceipt:
        return self._tx(self._appeals().functions.drawPanel(session_id, round, max_seats))

    def publish_panel_keys(self, session_id: int, round: int, manifest_cid: str) -> TxReceipt:
        return self._tx(self._appeals().functions.publishPanelKeys(session_id, round, manifest_cid))

    def finalize_round(self, session_id: int, round: int) -> TxReceipt:
        return self._tx(self._appeals().functions.finalizeRound(session_id, round))

    def advance_appeals(self, session_id: int) -> TxReceipt:
        """Every due round transition, and the outcome's finality when every window closed."""
        return self._tx(self._appeals().functions.advance(session_id))

    def settle_appeals(self, session_id: int, max_segments: int = 64) -> TxReceipt:
        """Resolve the money of up to `max_segments` appealed segments (after the outcome is final)."""
        return self._tx(self._escrow().functions.settleAppeals(session_id, max_segments))

    def session_money(self, session_id: int) -> SessionMoneyView:
        return SessionMoneyView.from_abi(self._call(self._escrow().functions.sessionMoney(session_id)))

    def round_of(self, session_id: int, round: int) -> RoundView:
        return RoundView.from_abi(self._call(self._appeals().functions.roundOf(session_id, round)))

    def round_segments(self, session_id: int, round: int) -> list[int]:
        return [int(x) for x in self._call(self._appeals().functions.roundSegments(session_id, round))]

    def segment_appeals(self, session_id: int, segment: int) -> SegmentAppealsView:
        t = self._call(self._appeals().functions.segmentAppeals(session_id, segment))
        return SegmentAppealsView.from_abi(t)

    def session_appeals(self, session_id: int) -> SessionAppealsView:
        return SessionAppealsView.from_abi(self._call(self._appeals().functions.sessionAppeals(session_id)))

    def round_word(self, session_id: int, round: int, word: int) -> int:
        return int(self._call(self._appeals().functions.roundWord(session_id, round, word)))

    def appealable_until(self, session_id: int) -> int:
        return int(self._call(self._appeals().functions.appealableUntil(session_id)))

    def is_outcome_final(self, session_id: int) -> bool:
        if self.appeal_module is None:
            return True
        return bool(self._call(self._appeals().functions.isOutcomeFinal(session_id)))

    # -- canaries --------------------------------------------------------------------------------
    def set_canary_operator(self, operator: str, allowed: bool) -> TxReceipt:
        """Authorize or revoke a canary operator (the core's owner only: NotCoreOwner)."""
        return self._tx(self._canaries().functions.setCanaryOperator(operator, allowed))

    def is_canary_operator(self, address: str) -> bool:
        return bool(self._call(self._canaries().functions.isCanaryOperator(address)))

    def commit_canaries(self, session_id: int, commitments: Sequence[bytes]) -> TxReceipt:
        return self._tx(
            self._canaries().functions.commitCanaries(session_id, [bytes(h) for h in commitments])
        )

    def reveal_canary(self, session_id: int, reveal: CanaryReveal) -> TxReceipt:
        item = (reveal.slot, reveal.index, int(reveal.verdict), reveal.salt)
        return self._tx(self._canaries().functions.revealCanary(session_id, item))

    def reveal_canaries(self, session_id: int, reveals: Sequence[CanaryReveal]) -> TxReceipt:
        """Batch reveal: bad or already revealed items are skipped (`ItemSkipped`)."""
        items = [(r.slot, r.index, int(r.verdict), r.salt) for r in reveals]
        return self._tx(self._canaries().functions.revealCanaries(session_id, items))

    def canary_state(self, session_id: int) -> CanaryStateView:
        return CanaryStateView.from_abi(self._call(self._canaries().functions.canariesOf(session_id)))

    def canaries_owed(self, session_id: int, segment_count: int) -> int:
        """Canaries the session owes, as the chain decides (0 for a session opened before the canary
        module was wired: it got no commit window)."""
        return int(self._call(self._canaries().functions.canariesOwed(session_id, segment_count)))

    def canary_commitments(self, session_id: int) -> list[bytes]:
        return [bytes(h) for h in self._call(self._canaries().functions.commitmentsOf(session_id))]

    def revealed_canaries(self, session_id: int) -> list[tuple[int, int]]:
        """(segment index, verdict 1 PASS / 2 FAIL) in reveal order."""
        indices, verdicts = self._call(self._canaries().functions.revealedOf(session_id))
        return [(int(i), int(v)) for i, v in zip(indices, verdicts, strict=True)]


def _sorted_addresses(addresses: Sequence[str]) -> list[str]:
    """Checksummed, strictly ascending as 160-bit numbers (AppealAdmission's `LeaversNotAscending`)."""
    unique = {int(a, 16): a for a in addresses}
    return [Web3.to_checksum_address(unique[k]) for k in sorted(unique)]
