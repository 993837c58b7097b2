"""The demo's appeal act (issue 15), on a running `LocalCluster`: a lazy auditor (always PASS) is
the only computer auditor when a flawed calculation trace is drawn, so round 0 passes its wrong
step (a wrong PASS) and the auditor votes PASS on the session's FAIL canaries (written, committed
and revealed by the cluster's canary operator node; the provider only placed them). Honest computer
auditors join after that draw; the lazy auditor takes its free stake out (so later sessions do
not draw it); after the canary reveals an appellant appeals the wrong step, a 3-seat panel of the
honest auditors overturns it and the trace verdict is recomputed. `trustnode demo` and the
end-to-end test run this same act and read the same report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
from pydantic import BaseModel, Field

from trustnode.chain.accounts import dev_account
from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import reverts
from trustnode.chain.protocol import DEVNET_EPOCH_BLOCKS
from trustnode.chain.units import TOKEN
from trustnode.consensus.rules import WAD
from trustnode.models.trace import TraceInput
from trustnode.node.appellant import appeal
from trustnode.node.cluster import LocalCluster

WRONG_STEP = "2880 − 130 = 2760"
_STEPS = [
    "Each day the warehouse receives 12 × 48 = 576 boxes.",
    "Over 5 days that makes 576 × 5 = 2880 boxes.",
    f"The first truck takes 130 boxes, so {WRONG_STEP} boxes are left.",
    "The second truck takes 2 × 95 = 190 boxes.",
    "After it leaves, 2760 − 190 = 2570 boxes are left.",
    "Each box weighs 3 kg, so the stock weighs 2570 × 3 = 7710 kg.",
    "A shelf holds 250 kg, so 7710 / 250 = 30.84 shelves of weight are needed.",
    "Rounding up gives 31 shelves, and 31 − 24 = 7 shelves must be added to the 24 in place.",
    "Each new shelf costs 85 dollars, so 7 × 85 = 595 dollars are spent on shelves.",
    "Each shelf needs 4 brackets, so 7 × 4 = 28 brackets are ordered.",
    "Brackets cost 3 dollars each, so 28 × 3 = 84 dollars go on brackets.",
    "Shelves and brackets together cost 595 + 84 = 679 dollars.",
    "The delivery fee of 40 dollars brings it to 679 + 40 = 719 dollars.",
    "A 5 dollar discount per shelf saves 7 × 5 = 35 dollars, so the bill is 719 − 35 = 684 dollars.",
]
#: A calculation trace with one wrong subtraction (2880 - 130 is 2750): expected FAIL.
APPEAL_TRACE = TraceInput(
    problem=(
        "A warehouse receives 12 pallets a day, each holding 48 boxes. After 5 days, a first truck takes "
        "130 boxes and a second truck takes two loads of 95 boxes. Each box weighs 3 kg and a shelf holds "
        "250 kg; 24 shelves are in place. New shelves cost 85 dollars each with a 5 dollar discount per "
        "shelf, each needs 4 brackets at 3 dollars, and delivery costs 40 dollars. What does the warehouse spend?"
    ),
    steps=_STEPS,
    output="684 dollars.",
)
#: Appeals and canaries on, with windows short enough for a demo (blocks of 0.5 s).
DEMO_PROTOCOL: dict[str, int] = {
    "appeal_blocks": 80,  # 40 s: the honest auditors must join and wait an epoch inside it, under load too
    "max_rounds": 2,
    "appeal_bond_multiplier_bps": 10_000,
    "appeal_reward_bps": 2000,
    "appeal_budget": 100 * TOKEN,
    "canary_rate_bps": 3000,
    "canary_reveal_blocks": 10,
    "canary_gamma": WAD // 5,
    "canary_refund_bps": 2500,  # the most setParams accepts (a refund above it could pay a provider)
}


class CanaryCatch(BaseModel):
    """A FAIL canary the lazy auditor voted PASS on."""

    session_id: int
    index: int
    truth: str = Field(description="Its truth as the canary operator revealed it on chain.")
    mutation: str | None = Field(default=None, description="Known to the operator only (None here).")
    text: str
    votes: list[str] = Field(description="'address: vote (right|wrong)' per voter.")


class AppealEvidence(BaseModel):
    session_id: int
    segment: int
    text: str
    verdict_before: str
    round: int
    seats: int
    bond: str
    panel: list[str] = Field(description="'address: vote' per panel seat.")
    outcome: str
    result: str
    verdict_after: str
    summary_after: str


class LazyScore(BaseModel):
    correct: int
    incorrect: int
    slashes: int
    reputation: float


class AppealActReport(BaseModel):
    trace_id: str
    canaries: list[CanaryCatch]
    appeal: AppealEvidence
    lazy: LazyScore | None = Field(description="The lazy auditor's settlement of round 0, once settled.")


class AppealAct:
    """Drive the act on `cluster`: `submit`, then `after_draw` (before other traces), then `finish`."""

    def __init__(
        self,
        cluster: LocalCluster,
        *,
        lazy: str,
        honest: list[str],
        appellant_account: int = 8,
        say: Callable[[str], None] = lambda m: None,
    ) -> None:
        self.cluster, self.lazy_name, self.honest, self.say = cluster, lazy, honest, say
        self.lazy_account = next(a.account for a in cluster.cfg.auditors if a.name == lazy)
        self.lazy = str(dev_account(self.lazy_account).address)
        self.appellant_account = appellant_account
        self.trace_id = ""
        self.joined_block = 0

    def submit(self) -> str:
        self.trace_id = self.cluster.submit(APPEAL_TRACE.model_dump(mode="json", exclude_none=True))
        return self.trace_id

    def after_draw(self, timeout_s: float = 120) -> None:
        """Once the act's panel is drawn: the lazy auditor leaves the draw, honest ones join
        (returns when they are registered and staked, so later sessions can be drawn)."""
        drawn = ("keys_published", "finalized")
        self._wait(
            lambda v: v.get("stage") in drawn or v["status"] in ("done", "failed"), timeout_s, "the draw"
        )
        self._withdraw_free_stake()
        for name in self.honest:
            self.cluster.start_auditor(name)
        self.cluster.wait_registered(self.honest, timeout_s=timeout_s)
        # An appeal panel is drawn from the staking snapshot of its epoch: stake added now counts
        # from the next epoch on, so the act appeals no earlier than one epoch from here.
        self.joined_block = self.cluster.port(self.appellant_account).block_number()
        self.say(
            f"{self.lazy_name} took its free stake out of the draw; honest computer auditors "
            f"{', '.join(self.honest)} joined"
        )

    def _withdraw_free_stake(self) -> None:
        port = self.cluster.port(self.lazy_account)
        pool = port.pool(self.lazy)
        shares, _ = port.self_stake(self.lazy)
        free = pool.assets - pool.locked
        for num, den in ((1, 1), (999, 1000), (99, 100)):
            want = shares * free * num // (pool.assets * den)
            if want <= 0:
                return
            try:
                port.request_withdrawal(want)
                return
            except ContractRevertError as exc:
                if not reverts.is_revert(exc, reverts.INSUFFICIENT_SHARES):
                    raise

    def finish(self, timeout_s: float = 240, settle_wait_s: float = 60) -> AppealActReport:
        """Appeal the wrong step as soon as its window opens, follow the round, read the evidence;
        the lazy auditor's settlement waits for the final outcome (at most `settle_wait_s`)."""
        view = self._wait(
            lambda v: v["status"] in ("done", "failed"), timeout_s, "round 0 and the canary reveals"
        )
        if view["status"] == "failed":
            raise RuntimeError(f"the appeal act's trace failed: {view.get('error')}")
        sid = int(view["session_id"])
        before = view["outcome"]
        wrong = self._wrong_segment(view)
        canaries = self._catches(sid, view)
        port = self.cluster.port(self.appellant_account)
        self.cluster.fund(port.address, 1_000 * TOKEN)
        ready = self.joined_block + DEVNET_EPOCH_BLOCKS
        self._until(
            lambda: wrong in port.appeal_status(sid).appealable and port.block_number() >= ready,
            timeout_s,
            "the appeal window",
        )
        quote, opened = appeal(port, sid, [wrong])
        self.say(
            f"appealed segment {wrong} of session {sid}: round {opened.round}, {quote.seats[0]} seats, bond {opened.bond / TOKEN:g} TRUST"
        )
        self._until(lambda: any(r.state.ended for r in port.rounds(sid)), timeout_s, "the appeal round")
        rnd = next(r for r in port.rounds(sid) if r.round == opened.round)
        self.say(f"appeal round {rnd.round} {rnd.state.value}")
        after = self._wait(
            lambda v: (v.get("outcome") or {}).get("verdict") != before["verdict"] or v.get("final") is True,
            timeout_s,
            "the provider's recomputed verdict",
        )
        lazy = self._lazy_score(sid, settle_wait_s)  # settles once the outcome is final
        public = self._session(sid)
        r1 = next(r for r in public["rounds"] if r["round"] == opened.round)
        seg = r1["segments"][0]
        return AppealActReport(
            trace_id=self.trace_id,
            canaries=canaries,
            appeal=AppealEvidence(
                session_id=sid, segment=wrong, text=self._text(view, wrong), verdict_before=before["verdict"],
                round=opened.round, seats=quote.seats[0], bond=r1["bond"],
                panel=[f"{v['auditor']}: {', '.join(v['verdicts'] or ['hidden'])}" for v in r1["votes"]],
                outcome=seg["outcome"], result=seg["result"] or f"{rnd.state.value} (its result is known once final)",
                verdict_after=after["outcome"]["verdict"], summary_after=after["outcome"]["summary"],
            ),
            lazy=lazy,
        )  # fmt: skip

    # -- reading -------------------------------------------------------------------------------

    def _wrong_segment(self, view: dict[str, Any]) -> int:
        node = next(n["id"] for n in view["hdag"]["nodes"] if WRONG_STEP in n["content"])
        return int(next(s["index"] for s in view["outcome"]["segments"] if s["node_id"] == node))

    def _text(self, view: dict[str, Any], index: int) -> str:
        node = next(s["node_id"] for s in view["outcome"]["segments"] if s["index"] == index)
        return str(next(n["content"] for n in view["hdag"]["nodes"] if n["id"] == node))

    def _catches(self, sid: int, view: dict[str, Any]) -> list[CanaryCatch]:
        mine = {c["index"]: c for c in view.get("canaries") or []}
        out = []
        for c in self._session(sid)["canaries"]:
            lazy = [v for v in c["votes"] if v["auditor"] == self.lazy and v["agrees"] is False]
            if lazy and c["index"] in mine:
                out.append(
                    CanaryCatch(
                        session_id=sid, index=c["index"], truth=c["truth"], mutation=mine[c["index"]].get("mutation"),
                        text=mine[c["index"]]["text"],
                        votes=[f"{v['auditor']}: {v['vote']} ({'right' if v['agrees'] else 'wrong'})" for v in c["votes"]],
                    )
                )  # fmt: skip
        return out

    def _lazy_score(self, sid: int, wait_s: float) -> LazyScore | None:
        port = self.cluster.port(self.lazy_account)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            done = [s for s in port.settlements(auditor=self.lazy, session_id=sid) if s.round == 0]
            if done:
                s = done[0]
                return LazyScore(
                    correct=s.correct, incorrect=s.incorrect, slashes=s.slashes, reputation=s.reputation / WAD
                )
            time.sleep(0.5)
        return None

    def _session(self, sid: int) -> dict[str, Any]:
        r = httpx.get(f"{self.cluster.api_url}/v1/sessions/{sid}", timeout=30)
        r.raise_for_status()
        out: dict[str, Any] = r.json()
        return out

    def _wait(self, done: Callable[[dict[str, Any]], bool], timeout_s: float, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                view = self.cluster.trace(self.trace_id)
                if done(view):
                    return view
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the appeal act did not reach {what} in {timeout_s:.0f}s")
            time.sleep(0.5)

    @staticmethod
    def _until(done: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the appeal act did not reach {what} in {timeout_s:.0f}s")
            time.sleep(0.5)
