#!/usr/bin/env python3
"""Gas of one audit session on anvil, against a per-segment commit-reveal baseline.

Deploys the protocol on a fresh anvil with k = --seats auditors per segment and the
per-auditor seat cap at 25% of the session's segments, registers --auditors LLM-tier
auditors, then runs a full session: open, paginated draw, keys, one relayed `commitBatch`
of EIP-712 signed commitments, one `revealBatch`, finalize, one `settleBatch`.

    gas_per_segment_vote          (commit + reveal + settle gas) / (segments * seats)
    baseline_gas_per_segment_vote (commit + reveal gas of BaselineCommitReveal, one commit and
                                   one reveal transaction per seat, same seats) / (segments * seats)
    finalize_gas                  gas of the finalize transaction
    draw_gas_per_seat             gas of all draw transactions / seats

With --finalize-sizes it also runs sessions of those sizes and prints finalize gas per size,
to show finalize is linear in segments. Figures are receipts' gasUsed (base fee included).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_utils import keccak
from pydantic import BaseModel

from trustnode.chain import devnet
from trustnode.chain.accounts import dev_account
from trustnode.chain.client import ChainClient
from trustnode.chain.deploy import deploy_protocol
from trustnode.chain.protocol import (
    DEVNET_SESSION_PARAMS,
    DEVNET_STAKING_PARAMS,
    TOKEN,
    Protocol,
    RevealItem,
    compute_commitment,
    verdict_bitmap,
)


class SessionGas(BaseModel):
    segments: int
    seats_per_segment: int
    seat_cap: int
    auditors_drawn: int
    draw_transactions: int
    draw_gas: int
    commit_gas: int
    reveal_gas: int
    finalize_gas: int
    settle_gas: int


class BenchResult(BaseModel):
    segments: int
    seats: int
    seat_cap: int
    auditors_registered: int
    auditors_drawn: int
    mean_seats_per_auditor: float
    gas_per_segment_vote: float
    baseline_gas_per_segment_vote: float
    ratio_baseline_over_batched: float
    finalize_gas: int
    draw_gas_per_seat: float
    commit_gas: int
    reveal_gas: int
    settle_gas: int
    commit_reveal_settle_gas_per_auditor: float
    baseline_commit_gas: int
    baseline_reveal_gas: int
    finalize_gas_by_segments: dict[int, int]
    target_gas_per_segment_vote: int = 10_000
    meets_target: bool


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _fund(client: ChainClient, address: str) -> None:
    client.w3.provider.make_request("anvil_setBalance", [address, hex(10**21)])  # type: ignore[arg-type]


class Bench:
    def __init__(self, rpc: str, segments: int, seats: int, auditors: int) -> None:
        self.admin_client = ChainClient.connect(rpc, dev_account(0))
        cap = max(1, math.ceil(segments * 25 / 100))
        self.cap = cap
        self.params = DEVNET_SESSION_PARAMS.model_copy(
            update={
                "seats_per_tier": (seats, seats, seats),
                "seat_cap": cap,
                "reward": TOKEN // 10,
                "slash_amount": TOKEN // 10,
            }
        )
        addresses = deploy_protocol(
            self.admin_client, session_params=self.params, staking_params=DEVNET_STAKING_PARAMS
        )
        self.admin = Protocol(self.admin_client, addresses)
        self.rpc = rpc
        self.accounts: list[LocalAccount] = [
            Account.from_key(keccak(text=f"trustnode-bench-auditor-{i}")) for i in range(auditors)
        ]
        self.by_address: dict[str, LocalAccount] = {str(a.address): a for a in self.accounts}
        for acct in self.accounts:
            _fund(self.admin_client, acct.address)
            self.admin.transfer(acct.address, 200 * TOKEN)
            me = self.admin.as_signer(ChainClient.connect(rpc, acct))
            me.register(1, 2, keccak(text=f"x25519-{acct.address}"))
            me.stake(acct.address, 100 * TOKEN)

    def run_session(self, segments: int, seats: int) -> tuple[SessionGas, int, dict[str, list[int]]]:
        admin = self.admin
        fee = 2 * segments * seats * self.params.reward
        sid = admin.open_session(keccak(text=f"root-{segments}"), [1] * segments, [1] * segments, fee)
        admin.client.mine(admin.blocks_until_drawable(sid))
        draws = admin.draw_all(sid, page=32)
        info = admin.session(sid)
        if not info.draw_complete:
            raise SystemExit(
                f"draw did not complete (status {info.status.name}): too few auditors for the cap"
            )
        admin.publish_keys(sid, "bafy-bench-manifest")
        drawn = admin.auditors_of(sid)
        seats_of = {a: admin.seats_of(sid, a) for a in drawn}
        openings: dict[str, tuple[int, bytes]] = {}
        signed = []
        for a in drawn:
            votes = [seg % 7 == 3 for seg in seats_of[a]]
            verdicts, salt = verdict_bitmap(votes), keccak(text=f"salt-{sid}-{a}")
            openings[a] = (verdicts, salt)
            c = compute_commitment(admin.client.chain_id, admin.sessions.address, sid, a, verdicts, salt)
            signed.append(admin.sign_commit(self.by_address[a], sid, c, nonce=0))
        commit = admin.commit_batch(sid, signed)
        reveal = admin.reveal_batch(
            sid, [RevealItem(auditor=a, verdicts=v, salt=s) for a, (v, s) in openings.items()]
        )
        finalize = admin.finalize(sid)
        settle = admin.settle_batch(sid, drawn)
        gas = SessionGas(
            segments=segments,
            seats_per_segment=seats,
            seat_cap=self.params.seat_cap,
            auditors_drawn=len(drawn),
            draw_transactions=len(draws),
            draw_gas=sum(int(r["gasUsed"]) for r in draws),
            commit_gas=int(commit["gasUsed"]),
            reveal_gas=int(reveal["gasUsed"]),
            finalize_gas=int(finalize["gasUsed"]),
            settle_gas=int(settle["gasUsed"]),
        )
        return gas, sid, seats_of

    def run_baseline(self, seats_of: dict[str, list[int]]) -> tuple[int, int]:
        """Same seats, per-seat commit and reveal transactions sent by each auditor."""
        base = self.admin_client.deploy("BaselineCommitReveal")
        receipt = self.admin_client.transact(base.functions.openRound())
        round_id = int(base.events.RoundOpened().process_receipt(receipt)[0]["args"]["round"])
        segs = [s for a in seats_of for s in seats_of[a]]
        auds = [a for a in seats_of for _ in seats_of[a]]
        self.admin_client.transact(base.functions.assign(round_id, segs, auds))
        chain_id = self.admin_client.chain_id
        commit_gas = reveal_gas = 0
        openings = []
        for a, segments in seats_of.items():
            client = ChainClient.connect(self.rpc, self.by_address[a])
            mine = client.contract("BaselineCommitReveal", base.address)
            for seg in segments:
                fail, salt = seg % 7 == 3, keccak(text=f"baseline-{a}-{seg}")
                c = keccak(
                    _abi_encode(
                        ["uint256", "address", "uint256", "uint256", "address", "bool", "bytes32"],
                        [chain_id, base.address, round_id, seg, a, fail, salt],
                    )
                )
                commit_gas += int(client.transact(mine.functions.commit(round_id, seg, c))["gasUsed"])
                openings.append((client, mine, seg, fail, salt))
        for client, mine, seg, fail, salt in openings:
            reveal_gas += int(client.transact(mine.functions.reveal(round_id, seg, fail, salt))["gasUsed"])
        return commit_gas, reveal_gas


def _abi_encode(types: list[str], values: list[object]) -> bytes:
    from eth_abi import encode

    return encode(types, values)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--segments", type=int, default=32)
    ap.add_argument("--seats", type=int, default=3, help="auditors per segment (k)")
    ap.add_argument("--auditors", type=int, default=16, help="registered LLM-tier auditors")
    ap.add_argument(
        "--finalize-sizes",
        default="8,16",
        help="extra session sizes for finalize gas vs segments ('' for none)",
    )
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    if (
        args.auditors * math.ceil(args.segments / 4) < args.segments * args.seats
        or args.auditors < args.seats
    ):
        ap.error("not enough auditors to fill every seat under the 25% seat cap")

    workdir = Path(tempfile.mkdtemp(prefix="trustnode-bench-gas-"))
    port = _free_port()
    pid = devnet.start_anvil(port, workdir / "anvil.log")
    try:
        bench = Bench(f"http://127.0.0.1:{port}", args.segments, args.seats, args.auditors)
        gas, _sid, seats_of = bench.run_session(args.segments, args.seats)
        base_commit, base_reveal = bench.run_baseline(seats_of)
        finalize_by = {args.segments: gas.finalize_gas}
        for size in [int(x) for x in args.finalize_sizes.split(",") if x.strip()]:
            if size != args.segments:
                finalize_by[size] = bench.run_session(size, args.seats)[0].finalize_gas
    finally:
        devnet.stop_pid(pid)
        shutil.rmtree(workdir, ignore_errors=True)

    votes = args.segments * args.seats
    ours = (gas.commit_gas + gas.reveal_gas + gas.settle_gas) / votes
    baseline = (base_commit + base_reveal) / votes
    result = BenchResult(
        segments=args.segments,
        seats=args.seats,
        seat_cap=gas.seat_cap,
        auditors_registered=args.auditors,
        auditors_drawn=gas.auditors_drawn,
        mean_seats_per_auditor=round(votes / gas.auditors_drawn, 2),
        gas_per_segment_vote=round(ours, 1),
        baseline_gas_per_segment_vote=round(baseline, 1),
        ratio_baseline_over_batched=round(baseline / ours, 2),
        finalize_gas=gas.finalize_gas,
        draw_gas_per_seat=round(gas.draw_gas / votes, 1),
        commit_gas=gas.commit_gas,
        reveal_gas=gas.reveal_gas,
        settle_gas=gas.settle_gas,
        commit_reveal_settle_gas_per_auditor=round(
            (gas.commit_gas + gas.reveal_gas + gas.settle_gas) / gas.auditors_drawn, 1
        ),
        baseline_commit_gas=base_commit,
        baseline_reveal_gas=base_reveal,
        finalize_gas_by_segments=dict(sorted(finalize_by.items())),
        meets_target=ours <= 10_000 and baseline / ours >= 8,
    )
    if args.json:
        print(json.dumps(result.model_dump()))
    else:
        for k, v in result.model_dump().items():
            print(f"{k:32s} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
