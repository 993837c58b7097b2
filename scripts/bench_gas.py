#!/usr/bin/env python3
"""Gas of one audited trace on protocol v2 (anvil), against a per-seat commit-reveal baseline.

Compiles `contracts/src`, deploys the v2 protocol on a fresh anvil (core + draw, voting and
settlement modules, Staking v2 with epoch snapshots, lookahead randomness) with k = --seats
auditors per segment and the seat cap at 25% of the segments, registers --auditors LLM-tier
auditors, moves to the next epoch (their stake enters the snapshot), then runs one whole trace:
open (draw randomness requested), paginated draw, keys, one relayed `commitBatch` of EIP-712
signed commitments, one `revealBatch`, finalize (slash randomness requested), one `settleBatch`.

    gas_per_segment_vote    (commit + reveal + settle + 2 randomness requests + the draw seed's
                            fulfilment) / seats; the slash seed's fulfilment is inside settle
    baseline_gas_per_segment_vote  per-seat commit and reveal transactions of
                            BaselineCommitReveal for the same seats / seats
    whole_trace_gas         every transaction from open to the last settle
    draw_gas_per_seat       all draw transactions / seats
    finalize_gas_by_segments  finalize gas at --finalize-sizes too (linear in segments)

With the issue-15 modules deployed (as `trustnode deploy` does), one more session of 4 segments
with one gold canary measures an appeal round on segment 0 (`appeal_round`: appeal, panel draw,
panel keys, commitBatch and revealBatch of the 7-seat panel, the round's end, the advance that makes
the outcome final, settleAppeals, settleBatch of round 1) and the canary's commit and reveal
(`--no-appeal` skips it).

Figures are receipts' gasUsed (intrinsic and calldata included); the randomness source's own
request and fulfil are measured as direct calls minus 21,000 and calldata (as in
contracts/test/GasBench.t.sol).  Targets (docs/protocol-v2.md): segment vote <= 10,000 and >= 8x
below the baseline, whole trace <= 2.5 M gas, at 32 segments x 3 seats with 16 auditors.
"""

from __future__ import annotations

import argparse
import json
import math
import socket
import sys
from pathlib import Path

from eth_abi import encode
from eth_utils import keccak
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the harness lives with the tests

from tests.consensus.v2_chain import V2Chain, v2_chain  # noqa: E402

from trustnode.consensus.canaries import canary_commitment  # noqa: E402
from trustnode.consensus.rules import pack_tiers_weights, verdicts_word  # noqa: E402
from trustnode.models.enums import SegmentOutcome as O  # noqa: E402

TOKEN = 10**18
TARGET_SEGMENT_VOTE = 10_000
TARGET_RATIO = 8
TARGET_TRACE = 2_500_000
MAX_AUDITORS = 18  # anvil's 20 dev accounts minus the owner and the provider


class SessionGas(BaseModel):
    segments: int
    auditors_drawn: int
    draw_transactions: int
    open_gas: int
    draw_gas: int
    keys_gas: int
    commit_gas: int
    reveal_gas: int
    finalize_gas: int
    settle_gas: int
    outcome_final_gas: int = 0  # with the issue-15 modules: the advance after the last window

    @property
    def trace(self) -> int:
        return (
            self.open_gas + self.draw_gas + self.keys_gas + self.commit_gas + self.reveal_gas
            + self.finalize_gas + self.outcome_final_gas + self.settle_gas
        )  # fmt: skip


class BenchResult(BaseModel):
    segments: int
    seats: int
    seat_cap: int
    auditors_registered: int
    auditors_drawn: int
    gas_per_segment_vote: float
    baseline_gas_per_segment_vote: float
    ratio_baseline_over_segment_vote: float
    whole_trace_gas: int
    draw_gas_per_seat: float
    phases: dict[str, int]
    randomness_request_exec_gas: int
    randomness_fulfil_exec_gas: int
    finalize_gas_by_segments: dict[int, int]
    meets_segment_vote_target: bool
    meets_whole_trace_target: bool
    appeal_round: dict[str, int] | None = None
    canary_commit_gas: int | None = None
    canary_reveal_gas: int | None = None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _exec_gas(receipt_gas: int, data: bytes) -> int:
    """Execution gas of a direct call: receipt gas minus intrinsic and calldata gas."""
    return receipt_gas - 21_000 - sum(4 if b == 0 else 16 for b in data)


class Bench:
    def __init__(self, ch: V2Chain, auditors: int) -> None:
        self.ch = ch
        self.provider = ch.client(1)
        self.auditors = [ch.register(2 + i, 1, 200 * TOKEN) for i in range(auditors)]
        ch.fund(self.provider.address, 10**6 * TOKEN)
        self.provider.transact(ch.c["token"].functions.approve(ch.c["sessions"].address, 2**256 - 1))
        ch.next_epoch()

    def run_session(self, segments: int, seats: int, reward: int) -> tuple[SessionGas, dict[str, list[int]]]:
        ch = self.ch
        fee = 2 * segments * seats * reward
        tw = pack_tiers_weights([1] * segments, [1] * segments)
        sid, opened = ch.open(self.provider, keccak(text=f"root-{segments}"), tw, fee)
        ch.wait_draw_randomness(sid)
        draws = ch.draw_all(sid, segments * seats)
        info = ch.session(sid)
        if info["drawnSeats"] != segments * seats:
            raise SystemExit(f"draw did not complete (status {info['status']}): too few auditors for the cap")
        keys = self.provider.transact(ch.c["sessions"].functions.publishKeys(sid, "bafy-bench-manifest"))
        seats_of = {a: s for a in self.auditors if (s := ch.seats_of(sid, a))}
        ballots = {
            a: (
                verdicts_word([g % 7 == 3 for g in segs], [False] * len(segs)),
                keccak(text=f"salt-{sid}-{a}"),
            )
            for a, segs in seats_of.items()
        }
        commit = ch.commit_signed(sid, ballots)
        reveal = ch.reveal_batch(sid, [(a, w, s) for a, (w, s) in ballots.items()])
        finalize = ch.owner.transact(ch.c["sessions"].functions.finalize(sid))
        final_gas = 0
        if "appeals" in ch.c:  # nobody appeals: the outcome is final once the windows closed
            ap = ch.c["appeals"]
            ch.mine_to(int(ch.call(ap.functions.sessionAppeals(sid))[3]) + 1)
            final_gas = int(ch.owner.transact(ap.functions.advance(sid))["gasUsed"])
        slash_request = ch.session(sid)["slashRequest"]
        ch.mine_to(int(ch.call(ch.c["randomness"].functions.targetBlockOf(slash_request))) + 1)
        settle = ch.settle_batch(sid, list(seats_of))
        if ch.balance(ch.c["sessions"].address) != 0:
            raise SystemExit("the session's pool was not fully paid out: settlement incomplete")
        gas = SessionGas(
            segments=segments, auditors_drawn=len(seats_of), draw_transactions=len(draws),
            open_gas=int(opened["gasUsed"]), draw_gas=sum(int(r["gasUsed"]) for r in draws),
            keys_gas=int(keys["gasUsed"]), commit_gas=int(commit["gasUsed"]), reveal_gas=int(reveal["gasUsed"]),
            finalize_gas=int(finalize["gasUsed"]), settle_gas=int(settle["gasUsed"]), outcome_final_gas=final_gas,
        )  # fmt: skip
        return gas, seats_of

    def randomness_costs(self) -> tuple[int, int]:
        """The lookahead source's request and fulfil, as direct calls (execution gas only)."""
        ch = self.ch
        rnd = ch.c["randomness"]
        fn = rnd.functions.request()
        request = _exec_gas(
            int(ch.owner.transact(fn)["gasUsed"]), bytes.fromhex(fn._encode_transaction_data()[2:])
        )
        rid = int(ch.call(rnd.functions.requestCount()))
        ch.mine_to(int(ch.call(rnd.functions.targetBlockOf(rid))) + 1)
        fn = rnd.functions.fulfil(rid)
        fulfil = _exec_gas(
            int(ch.owner.transact(fn)["gasUsed"]), bytes.fromhex(fn._encode_transaction_data()[2:])
        )
        return request, fulfil

    def run_baseline(self, seats_of: dict[str, list[int]]) -> tuple[int, int]:
        """The same seats, one commit and one reveal transaction per seat, sent by each auditor."""
        ch = self.ch
        base = ch._deploy("BaselineCommitReveal")
        receipt = ch.owner.transact(base.functions.openRound())
        round_id = int(base.events.RoundOpened().process_receipt(receipt)[0]["args"]["round"])
        segs = [s for a in seats_of for s in seats_of[a]]
        auds = [a for a in seats_of for _ in seats_of[a]]
        ch.owner.transact(base.functions.assign(round_id, segs, auds))
        index = {cl.address: i for i, cl in ch.clients.items()}
        commit_gas = reveal_gas = 0
        openings = []
        for a, segments in seats_of.items():
            client = ch.client(index[a])
            for seg in segments:
                fail, salt = seg % 7 == 3, keccak(text=f"baseline-{a}-{seg}")
                c = keccak(
                    encode(
                        ["uint256", "address", "uint256", "uint256", "address", "bool", "bytes32"],
                        [client.chain_id, base.address, round_id, seg, a, fail, salt],
                    )
                )
                commit_gas += int(client.transact(base.functions.commit(round_id, seg, c))["gasUsed"])
                openings.append((client, seg, fail, salt))
        for client, seg, fail, salt in openings:
            reveal_gas += int(client.transact(base.functions.reveal(round_id, seg, fail, salt))["gasUsed"])
        return commit_gas, reveal_gas


APPEAL_PARAMS = {
    "appealBlocks": 20, "maxRounds": 1, "appealBondMultiplierBps": 10_000, "appealRewardBps": 1000,
    "appealBudget": 100 * TOKEN, "canaryRateBps": 2500, "canaryRevealBlocks": 5, "canaryGamma": 2 * 10**17,
    "canaryRefundBps": 2500,
}  # fmt: skip


def _gas(receipts: list[dict[str, int]] | dict[str, int]) -> int:
    return sum(int(r["gasUsed"]) for r in (receipts if isinstance(receipts, list) else [receipts]))


def run_appeal_round(bench: Bench, seats: int, reward: int) -> tuple[dict[str, int], int, int]:
    """4 LLM segments, one canary; round 0 FAILs segment 0, round 1 (k = 2 seats + 1) overturns it."""
    ch = bench.ch
    ap, esc, can = ch.c["appeals"], ch.c["escrow"], ch.c["canaries"]
    n = 4
    sid, _ = ch.open(bench.provider, keccak(text="appeal-root"), pack_tiers_weights([1] * n, [1] * n),
                     2 * n * seats * reward)  # fmt: skip
    salt = keccak(text="canary-salt")
    # Canaries are written by an operator the core's owner authorizes, never the provider: here the
    # owner's own account plays the operator (its one-off authorization is not counted).
    ch.owner.transact(can.functions.setCanaryOperator(ch.owner.address, True))
    canary = ch.owner.transact(can.functions.commitCanaries(sid, [canary_commitment(sid, 3, O.PASS, salt)]))
    ch.wait_draw_randomness(sid)
    ch.draw_all(sid, n * seats)
    bench.provider.transact(ch.c["sessions"].functions.publishKeys(sid, "bafy-r0"))

    def vote(rnd: int, fail: bool) -> tuple[dict[str, int], dict[str, int]]:
        held = {a: s for a in bench.auditors if (s := ch.seats_of(sid, a, rnd))}
        ballots = {a: (verdicts_word([fail and g == 0 for g in s], [False] * len(s)), keccak(text=f"{rnd}{a}"))
                   for a, s in held.items()}  # fmt: skip
        commit = ch.commit_signed(sid, ballots, rnd)
        return commit, ch.reveal_batch(sid, [(a, w, x) for a, (w, x) in ballots.items()], rnd)

    vote(0, True)
    ch.owner.transact(ch.c["sessions"].functions.finalize(sid))
    ch.owner.mine(1)
    reveal = ch.owner.transact(can.functions.revealCanary(sid, (0, 3, int(O.PASS), salt)))
    ch.mine_to(int(ch.call(ap.functions.sessionAppeals(sid))[1]) + 1)
    ch.owner.transact(ch.c["token"].functions.approve(ap.address, 2**256 - 1))
    appeal = ch.owner.transact(ap.functions.appeal(sid, [0], 2**96))
    request = int(ch.call(ap.functions.roundOf(sid, 1))[6])
    ch.mine_to(int(ch.call(ch.c["randomness"].functions.targetBlockOf(request))) + 1)
    draws = [ch.owner.transact(ap.functions.drawPanel(sid, 1, 64))]
    keys = bench.provider.transact(ap.functions.publishPanelKeys(sid, 1, "bafy-r1"))
    commit, reveal1 = vote(1, False)
    end = ch.owner.transact(ap.functions.finalizeRound(sid, 1))
    ch.mine_to(int(ch.call(ap.functions.sessionAppeals(sid))[3]) + 1)
    final = ch.owner.transact(ap.functions.advance(sid))
    slash = int(ch.session(sid)["slashRequest"])
    ch.mine_to(int(ch.call(ch.c["randomness"].functions.targetBlockOf(slash))) + 1)
    panel = [a for a in bench.auditors if ch.seats_of(sid, a, 1)]
    money = ch.owner.transact(esc.functions.settleAppeals(sid, 64))
    ch.settle_batch(sid, [a for a in bench.auditors if ch.seats_of(sid, a, 0)], 0)  # fixes the slash seed
    settle = ch.settle_batch(sid, panel, 1)
    phases = {
        "appeal": _gas(appeal), "draw": _gas(draws), "keys": _gas(keys), "commit": _gas(commit),
        "reveal": _gas(reveal1), "round_end": _gas(end), "outcome_final": _gas(final),
        "settle_appeals": _gas(money), "settle": _gas(settle), "panel_seats": len(panel),
    }  # fmt: skip
    phases["total"] = sum(v for k, v in phases.items() if k != "panel_seats")
    return phases, _gas(canary), _gas(reveal)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--segments", type=int, default=32)
    ap.add_argument("--seats", type=int, default=3, help="auditors per segment (k)")
    ap.add_argument(
        "--auditors", type=int, default=16, help=f"registered LLM-tier auditors (<= {MAX_AUDITORS})"
    )
    ap.add_argument(
        "--finalize-sizes", default="8,16", help="extra session sizes for finalize gas ('' for none)"
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--no-appeal", action="store_true", help="skip the appeal round and canary figures")
    args = ap.parse_args(argv)
    cap = max(1, math.ceil(args.segments * 25 / 100))
    if not 1 <= args.seats <= 31 or not 1 <= args.segments <= 1024:
        ap.error("--seats must be in 1..31 and --segments in 1..1024")
    if (
        args.auditors > MAX_AUDITORS
        or args.auditors * cap < args.segments * args.seats
        or args.auditors < args.seats
    ):
        ap.error(
            f"need {args.seats}..{MAX_AUDITORS} auditors, enough to fill every seat under the 25% seat cap"
        )
    reward = TOKEN // 10
    params = {"seatsPerTier": [args.seats] * 3, "seatCap": cap, "reward": reward, "slashAmount": reward}
    say = (lambda _m: None) if args.json else (lambda m: print(m, file=sys.stderr))
    appeals = None if args.no_appeal else APPEAL_PARAMS
    with v2_chain(session_params=params, port=_free_port(), appeal_params=appeals) as ch:
        say(f"deployed v2 on {ch.rpc_url}; registering {args.auditors} auditors")
        bench = Bench(ch, args.auditors)
        say(f"session {args.segments} x {args.seats}")
        gas, seats_of = bench.run_session(args.segments, args.seats, reward)
        request, fulfil = bench.randomness_costs()
        say("baseline: one commit and one reveal per seat")
        base_commit, base_reveal = bench.run_baseline(seats_of)
        finalize_by = {args.segments: gas.finalize_gas}
        for size in [int(x) for x in args.finalize_sizes.split(",") if x.strip()]:
            if size != args.segments and size * args.seats <= args.auditors * max(
                1, math.ceil(args.segments / 4)
            ):
                say(f"finalize at {size} segments")
                finalize_by[size] = bench.run_session(size, args.seats, reward)[0].finalize_gas
        appeal_round, canary_commit, canary_reveal = None, None, None
        if not args.no_appeal:
            say("appeal round on one segment, one canary")
            appeal_round, canary_commit, canary_reveal = run_appeal_round(bench, args.seats, reward)
    votes = args.segments * args.seats
    ours = (gas.commit_gas + gas.reveal_gas + gas.settle_gas + 2 * request + fulfil) / votes
    baseline = (base_commit + base_reveal) / votes
    result = BenchResult(
        segments=args.segments, seats=args.seats, seat_cap=cap, auditors_registered=args.auditors,
        auditors_drawn=gas.auditors_drawn, gas_per_segment_vote=round(ours, 1),
        baseline_gas_per_segment_vote=round(baseline, 1), ratio_baseline_over_segment_vote=round(baseline / ours, 2),
        whole_trace_gas=gas.trace, draw_gas_per_seat=round(gas.draw_gas / votes, 1),
        phases={k: v for k, v in gas.model_dump().items() if k.endswith(("_gas", "_transactions"))},
        randomness_request_exec_gas=request, randomness_fulfil_exec_gas=fulfil,
        finalize_gas_by_segments=dict(sorted(finalize_by.items())),
        meets_segment_vote_target=ours <= TARGET_SEGMENT_VOTE and baseline / ours >= TARGET_RATIO,
        meets_whole_trace_target=gas.trace <= TARGET_TRACE, appeal_round=appeal_round,
        canary_commit_gas=canary_commit, canary_reveal_gas=canary_reveal,
    )  # fmt: skip
    if args.json:
        print(json.dumps(result.model_dump()))
    else:
        for k, v in result.model_dump().items():
            print(f"{k:34s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
