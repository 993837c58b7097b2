"""Registry, staking pools with their FIFO ledger, withdrawals, and settlement (SettlementModule).

A session's rewards and slashes reach a pool through its ledger, in draw order: `settle`
delivers an auditor's result to Staking, which applies it when the entry reaches the head
(`drain` applies ready entries; stake and withdrawal requests drain a few as a side effect).
Deposits and withdrawal requests made while the ledger holds entries wait in FLOW entries,
so a withdrawal's amount and readiness are known only once its FLOW entry is applied.
"""

from __future__ import annotations

from collections.abc import Sequence

from eth_utils import to_checksum_address
from web3.logs import DISCARD
from web3.types import TxReceipt

from trustnode.chain.protocol.base import ProtocolBase
from trustnode.chain.protocol.models import AuditorProfile, PoolInfo, WithdrawalInfo
from trustnode.chain.protocol.params import StakingParams

#: Ledger entries a `drain` call applies at most (Staking bounds it by the ring of 256 anyway).
DRAIN_MAX = 64


def _hex(b: bytes) -> str:
    return "0x" + bytes(b).hex()


class StakingOps(ProtocolBase):
    """Registry, staking and settlement calls (mixed into `Protocol`)."""

    # -- registry ---------------------------------------------------------------------------

    def register(self, tier: int, expertise: int, encryption_key: bytes) -> TxReceipt:
        """Register this signer as an auditor (encryption_key: 32-byte X25519 public key)."""
        if len(encryption_key) != 32:
            raise ValueError("the encryption key must be a 32-byte X25519 public key")
        return self._tx(self.registry.functions.register(tier, expertise, encryption_key))

    def update_profile(self, expertise: int, encryption_key: bytes) -> TxReceipt:
        return self._tx(self.registry.functions.updateProfile(expertise, encryption_key))

    def deregister(self) -> TxReceipt:
        return self._tx(self.registry.functions.deregister())

    def profile(self, auditor: str) -> AuditorProfile:
        t = self._call(self.registry.functions.profileOf(to_checksum_address(auditor)))
        return AuditorProfile(
            tier=t[0], registered=t[1], registered_at=t[2], expertise=t[3], encryption_key=_hex(t[4])
        )

    def registered_auditors(self, page: int = 200) -> list[str]:
        count = int(self._call(self.registry.functions.auditorCount()))
        out: list[str] = []
        for start in range(0, count, page):
            out += [str(a) for a in self._call(self.registry.functions.auditors(start, page))]
        return out

    # -- staking ----------------------------------------------------------------------------

    def staking_params(self) -> StakingParams:
        return StakingParams.from_abi(self._call(self.staking.functions.params()))

    def stake(self, auditor: str, amount: int, *, approve: bool = True) -> TxReceipt:
        """Deposit into `auditor`'s pool (self-stake, or delegation when another signer)."""
        if approve:
            self.ensure_allowance(self.staking.address, amount)
        return self._tx(self.staking.functions.stake(to_checksum_address(auditor), amount))

    def request_withdrawal(self, auditor: str, shares: int) -> int:
        """Redeem shares (now, or when their FLOW entry applies); returns the withdrawal id."""
        receipt = self._tx(self.staking.functions.requestWithdrawal(to_checksum_address(auditor), shares))
        events = self.staking.events.WithdrawalRequested().process_receipt(receipt, errors=DISCARD)
        return int(events[0]["args"]["id"])

    def withdrawal(self, withdrawal_id: int) -> WithdrawalInfo:
        record, amount, ready_at = self._call(self.staking.functions.withdrawalOf(withdrawal_id))
        return WithdrawalInfo(
            id=withdrawal_id,
            owner=str(record[0]),
            claimed=bool(record[2]),
            auditor=str(record[3]),
            flow=int(record[4]),
            shares=int(record[6]),
            park_epoch=int(record[8]),
            amount=int(amount),
            ready_at=int(ready_at),
        )

    def hold_epochs(self) -> int:
        """Epochs after its own that a parked batch stays held (protocol-v2 5.1)."""
        return int(self._call(self.staking.functions.HOLD_EPOCHS()))

    def claim_withdrawal(self, withdrawal_id: int) -> TxReceipt:
        return self._tx(self.staking.functions.claimWithdrawal(withdrawal_id))

    def set_commission(self, bps: int) -> TxReceipt:
        return self._tx(self.staking.functions.setCommission(bps))

    def drain(self, auditor: str, max_entries: int = DRAIN_MAX) -> TxReceipt:
        """Apply ready entries at the head of `auditor`'s ledger (anyone)."""
        return self._tx(self.staking.functions.drain(to_checksum_address(auditor), max_entries))

    def ledger(self, auditor: str) -> tuple[int, int]:
        """(head, tail): entries [head, tail) of the auditor's ledger are pending."""
        head, tail = self._call(self.staking.functions.ledgerOf(to_checksum_address(auditor)))
        return int(head), int(tail)

    def pool(self, auditor: str) -> PoolInfo:
        a = to_checksum_address(auditor)
        v = self._call(self.staking.functions.poolOf(a))
        tier, registered, commission = self._call(self.staking.functions.auditorOf(a))
        return PoolInfo(
            assets=v[0],
            pending_deposits=v[1],
            total_shares=v[2],
            exiting_shares=v[3],
            backing=v[4],
            locked=v[5],
            reputation=v[6],
            generation=v[7],
            tier=int(tier),
            registered=bool(registered),
            commission_bps=int(commission),
        )

    def shares_of(self, auditor: str, holder: str) -> int:
        return int(
            self._call(
                self.staking.functions.sharesOf(to_checksum_address(auditor), to_checksum_address(holder))
            )
        )

    def position(self, auditor: str, holder: str) -> tuple[int, int, int]:
        """(shares now, pending deposit amount, its FLOW entry) of `holder` in `auditor`'s pool."""
        t = self._call(
            self.staking.functions.positionOf(to_checksum_address(auditor), to_checksum_address(holder))
        )
        return int(t[0]), int(t[1]), int(t[2])

    def preview_redeem(self, auditor: str, shares: int) -> int:
        return int(self._call(self.staking.functions.previewRedeem(to_checksum_address(auditor), shares)))

    def reputation(self, auditor: str) -> int:
        return int(self._call(self.staking.functions.reputationOf(to_checksum_address(auditor))))

    def weight(self, auditor: str) -> int:
        """Current sortition weight (what a session opened from the next epoch on draws from)."""
        return int(self._call(self.staking.functions.weightOf(to_checksum_address(auditor))))

    def snapshot_weight(self, tier: int, auditor: str, epoch: int | None = None) -> int:
        """Weight in the tier's snapshot "start of `epoch`" (default: the current epoch)."""
        exists, leaf = self._call(self.sortition.functions.leafOf(tier, to_checksum_address(auditor)))
        if not exists:
            return 0
        epoch = self.current_epoch() if epoch is None else epoch
        return int(self._call(self.sortition.functions.leafWeightAt(tier, epoch, leaf)))

    def live_members(self, tier: int, *, excluding: str, block: int | str = "pending") -> int:
        """Members of `tier` with weight in the snapshot of the epoch at `block` (a round appealed
        then draws from it), `excluding` not counted: AppealModule._members, from one
        `liveCountAt` read and the excluded one's leaf, whatever the tier's size."""
        sortition = self.sortition.functions
        epoch = int(self.client.call(sortition.currentEpoch(), block=block))
        live = int(self.client.call(sortition.liveCountAt(tier, epoch), block=block))
        exists, leaf = self.client.call(sortition.leafOf(tier, to_checksum_address(excluding)), block=block)
        if exists and int(self.client.call(sortition.leafWeightAt(tier, epoch, leaf), block=block)) > 0:
            live -= 1
        return live

    # -- settlement -------------------------------------------------------------------------

    def settle(self, session_id: int, auditor: str, round: int = 0) -> TxReceipt:
        """Settle one auditor (reverts AlreadySettled, NotSeated, SlashSeedPending...)."""
        return self._tx(self.settlement.functions.settle(session_id, round, to_checksum_address(auditor)))

    def settle_batch(self, session_id: int, auditors: Sequence[str], round: int = 0) -> TxReceipt:
        """Settle many auditors; unknown or settled ones are skipped (`ItemSkipped`)."""
        return self._tx(
            self.settlement.functions.settleBatch(
                session_id, round, [to_checksum_address(a) for a in auditors]
            )
        )
