"""The canary operator on a real anvil chain with the real contracts, a real js-ipfs daemon and
real HTTP on 127.0.0.1 (issue 15, CANARY-OPERATOR.md).

The test plays the provider by hand (pin, open, place) so it can also place wrongly: every
refusal must name its check and leave the chain without a commitment. The happy path runs the
operator as a real `trustnode api serve` process and kills it (SIGKILL) between commit and reveal:
the restarted process must still reveal.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.chain.port_scenarios import ISSUE15_PARAMS, TOKEN, vote_round, when_ready
from tests.conftest import REPO_ROOT, client_for, free_port, start_server, stop_server
from trustnode.api.app import create_app
from trustnode.chain import devnet
from trustnode.chain.deployment import Deployment
from trustnode.chain.devnet import CANARY_OPERATOR_ACCOUNT
from trustnode.chain.paths import find_tool
from trustnode.chain.port import ChainPort, SeatVote
from trustnode.chain.port.evm import Web3Port
from trustnode.chain.protocol import Protocol
from trustnode.config import Settings
from trustnode.models.canary_operator import (
    CanaryBatch,
    CanaryPlacement,
    CanaryPlacementItem,
    CanaryReceipt,
    CanaryShape,
    CanaryText,
)
from trustnode.models.enums import AuditorType, Level, SegmentOutcome, Tier
from trustnode.node.canary_store import CanaryStore, outcome
from trustnode.node.context import NodeContext
from trustnode.node.structure import SegmentPlaintext
from trustnode.storage.jsipfs import JsIpfsDaemon
from trustnode.storage.kubo import KuboStore
from trustnode.storage.segments import PreparedSession, prepare_session

pytestmark = [pytest.mark.chain, pytest.mark.ipfs]

KEY = "canary-operator-test-key-0123456789"
PROVIDER, OPERATOR, OUTSIDER = 1, 9, 8
AUDITORS = (2, 3, 4)
REALS = [
    "Let A = 12 * 7 = 84 and B = A + 6 = 90.",
    "So the total is 90 / 3 = 30 per box.",
    "Then C = 30 * 4 = 120 for four boxes.",
    "We subtract the 15 spoiled ones: 120 - 15 = 105.",
    "Each shelf takes 105 / 5 = 21 boxes.",
    "Check: 21 * 5 = 105, which matches.",
    "Adding the 5 spare boxes gives 105 + 5 = 110.",
    "So the answer is 110 boxes in all.",
]


@dataclass
class Net:
    dep: Deployment
    dep_file: Path
    ipfs_url: str
    owner: Protocol
    provider: ChainPort
    auditors: dict[str, ChainPort]

    def mine(self, blocks: int) -> None:
        self.owner.client.mine(blocks)

    def nonce(self, account: int) -> int:
        return int(self.owner.client.w3.eth.get_transaction_count(client_for(self.dep, account).address))


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Net]:
    if find_tool("anvil") is None or find_tool("jsipfs") is None:
        pytest.fail("anvil and jsipfs are needed: run `make install`")
    work = tmp_path_factory.mktemp("canary-op")
    dep_file = work / "devnet" / "deployment.json"
    dep = devnet.up(dep_file, port=free_port(), block_time_s=None, params=ISSUE15_PARAMS)
    try:
        with JsIpfsDaemon(work / "ipfs") as ipfs:
            owner = Protocol(client_for(dep, 0), dep.contracts)
            owner_port = Web3Port(owner, deploy_block=dep.deploy_block)
            owner_port.set_canary_operator(client_for(dep, OPERATOR).address, True)
            ports = {}
            for i in (PROVIDER, *AUDITORS):
                proto = Protocol(client_for(dep, i), dep.contracts)
                owner.transfer(proto.address, 10_000 * TOKEN)
                ports[i] = Web3Port(proto, deploy_block=dep.deploy_block)
            for i in AUDITORS:
                ports[i].register(Tier.COMPUTER, 1, bytes([i]) * 32)
                ports[i].stake(200 * TOKEN)
            auditors = {ports[i].address: ports[i] for i in AUDITORS}
            yield Net(dep, dep_file, ipfs.api_url, owner, ports[PROVIDER], auditors)
    finally:
        devnet.down(dep_file)


def operator_env(net: Net, data_dir: Path, account: int | None, port: int) -> dict[str, str]:
    chosen = {} if account is None else {"TRUSTNODE_CHAIN__ACCOUNT_INDEX": str(account)}
    return {
        **chosen,
        "TRUSTNODE_DATA_DIR": str(data_dir),
        "TRUSTNODE_CHAIN__DEPLOYMENT_FILE": str(net.dep_file),
        "TRUSTNODE_IPFS__API_URL": net.ipfs_url,
        "TRUSTNODE_CANARY_OPERATOR__ENABLED": "true",
        "TRUSTNODE_API__API_KEYS": f'["{KEY}"]',
        "TRUSTNODE_API__WORKER": "false",
        "TRUSTNODE_API__HOST": "127.0.0.1",
        "TRUSTNODE_API__PORT": str(port),
    }


def operator_settings(net: Net, data_dir: Path) -> Settings:
    return Settings(
        data_dir=data_dir,
        chain={"deployment_file": net.dep_file, "account_index": OPERATOR},  # type: ignore[arg-type]
        ipfs={"api_url": net.ipfs_url},  # type: ignore[arg-type]
        canary_operator={"enabled": True},  # type: ignore[arg-type]
        api={"api_keys": [KEY], "worker": False},  # type: ignore[arg-type]
    )


AUTH = {"Authorization": f"Bearer {KEY}"}


def ask(url: str, provider: str, count: int = 2) -> CanaryBatch:
    shapes = [CanaryShape(tier=Tier.COMPUTER, chars=len(t)).model_dump(mode="json") for t in REALS]
    r = httpx.post(
        f"{url}/v1/canary/requests",
        json={"provider": provider, "shapes": shapes, "count": count},
        headers=AUTH,
        timeout=30,
    )
    assert r.status_code == 201, r.text
    return CanaryBatch.model_validate(r.json())


@dataclass
class Placed:
    sid: int
    prepared: PreparedSession
    slots: dict[int, int]  # slot -> leaf index
    decoy: int  # a leaf holding slot 0's text under a plaintext index that is not its own

    def item(self, slot: int, index: int | None = None) -> CanaryPlacementItem:
        i = self.slots[slot] if index is None else index
        seg = self.prepared.segments[i]
        return CanaryPlacementItem(
            slot=slot, index=i, cid=seg.cid, key_hex=seg.key, proof=self.prepared.tree().proof_hex(i)
        )

    def placement(self, *items: CanaryPlacementItem) -> CanaryPlacement:
        got = {i.slot: i for i in items}
        return CanaryPlacement(
            session_id=self.sid,
            session_nonce=self.prepared.session_nonce,
            items=[got.get(s) or self.item(s) for s in sorted(self.slots)],
        )


def plain(index: int, text: str) -> bytes:
    return SegmentPlaintext(
        index=index, node_id=f"OP{index + 1}", level=Level.OPERATION, type="calculation",
        auditor=AuditorType.T_AUTO, content=text,
    ).model_dump_json().encode()  # fmt: skip


def pin_and_open(net: Net, batch: CanaryBatch, seed: int) -> Placed:
    """The provider's part: real segments, one decoy and the canaries at random leaves, encrypted,
    pinned to js-ipfs and opened on chain (every leaf computer tier, weight 1)."""
    canaries: list[CanaryText] = batch.canaries
    assert all(c.tier is Tier.COMPUTER for c in canaries)
    n = len(REALS) + 1 + len(canaries)
    rng = random.Random(seed)
    positions = rng.sample(range(n), len(canaries) + 1)
    slots = dict(enumerate(positions[:-1]))
    decoy = positions[-1]
    at = {i: s for s, i in slots.items()}
    reals = iter(REALS)
    texts = [
        plain(i, canaries[at[i]].text) if i in at
        else plain(i + 1, canaries[0].text) if i == decoy
        else plain(i, next(reals))
        for i in range(n)
    ]  # fmt: skip
    with KuboStore(net.ipfs_url) as store:
        prepared = prepare_session(store, texts, [0] * n, [1] * n, chain_id=net.dep.chain_id)
    assert prepared.ready
    opened = when_ready(
        lambda: net.provider.open_session(prepared.merkle_root, [0] * n, [1] * n, 200 * TOKEN), net.mine
    )
    assert net.provider.canaries(opened.session_id).required == len(canaries)
    return Placed(opened.session_id, prepared, slots, decoy)


def place(url: str, ticket: str, p: CanaryPlacement) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/canary/requests/{ticket}/placement",
        content=p.model_dump_json(),
        headers={**AUTH, "Content-Type": "application/json"},
        timeout=60,
    )


def receipt(url: str, ticket: str) -> CanaryReceipt:
    r = httpx.get(f"{url}/v1/canary/requests/{ticket}", headers=AUTH, timeout=30)
    assert r.status_code == 200, r.text
    return CanaryReceipt.model_validate(r.json())


@pytest.fixture
def operator_url(net: Net, tmp_path: Path) -> Iterator[str]:
    """The operator's app in this process, serving real HTTP on 127.0.0.1."""
    app = create_app(NodeContext(operator_settings(net, tmp_path / "operator")))
    server, thread, url = start_server(app)
    try:
        yield url
    finally:
        stop_server(server, thread)
        app.state.canary_operator.store.close()


def test_every_refusal_names_its_check_and_commits_nothing(net: Net, operator_url: str) -> None:
    url, me = operator_url, net.provider.address
    batch = ask(url, me)
    placed = pin_and_open(net, batch, seed=1)
    sid, t = placed.sid, batch.ticket
    outsider = client_for(net.dep, OUTSIDER).address
    other = ask(url, outsider)  # a ticket asked for another provider address
    real = next(
        i
        for i in range(len(placed.prepared.segments))
        if i not in placed.slots.values() and i != placed.decoy
    )
    bad_proof = placed.item(0)
    first = bad_proof.proof[0]  # its last byte flipped: always a different sibling (setting it to 00 was not,
    # 1 time in 256, and the placement was rightly accepted)
    flipped = first[:-2] + f"{int(first[-2:], 16) ^ 0xFF:02x}"
    bad_proof = bad_proof.model_copy(update={"proof": [flipped, *bad_proof.proof[1:]]})
    wrong_key = placed.item(0).model_copy(update={"key_hex": "0x" + "11" * 32})
    other_index = placed.slots[1]
    cases = [
        ("wrong provider", other.ticket, placed.placement(), 422, f"not by the ticket's provider {outsider}"),
        ("content mismatch", t, placed.placement(placed.item(0, real)), 422, "content is not the text issued"),
        ("wrong plaintext index", t, placed.placement(placed.item(0, placed.decoy)), 422, f"the plaintext says index {placed.decoy + 1}"),
        ("index of another leaf", t, placed.placement(placed.item(0).model_copy(update={"index": real})), 422, "Merkle proof does not prove"),
        ("bad proof", t, placed.placement(bad_proof), 422, "Merkle proof does not prove"),
        ("wrong key", t, placed.placement(wrong_key), 422, "does not decrypt"),
        ("same index twice", t, placed.placement(placed.item(0, other_index)), 422, "same leaf index"),
        ("unknown session", t, placed.placement().model_copy(update={"session_id": sid + 100}), 404, f"session {sid + 100} does not exist"),
    ]  # fmt: skip
    nonce = net.nonce(OPERATOR)
    for name, ticket, p, status, phrase in cases:
        r = place(url, ticket, p)
        assert r.status_code == status, (name, r.text)
        assert phrase in r.json()["error"], (name, r.json())
        assert not net.provider.canaries(sid).committed, name
        rec = receipt(url, ticket)
        assert rec.state == "refused" and rec.reason is not None and phrase in rec.reason, (name, rec)
    assert net.nonce(OPERATOR) == nonce, "a refused placement sends nothing"
    # The commit window closes at the draw's randomness target: a correct placement then is refused.
    state = net.provider.canaries(sid)
    net.mine(state.commit_until - net.provider.block_number())
    r = place(url, t, placed.placement())
    assert r.status_code == 422 and f"commit window of session {sid} closed" in r.json()["error"], r.text
    assert not net.provider.canaries(sid).committed and net.nonce(OPERATOR) == nonce


def _spawn(
    net: Net, data_dir: Path, account: int | None, port: int, log: Path, *, worker: bool = False, **extra: str
) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTNODE_")}
    env.update({**operator_env(net, data_dir, account, port), **extra})
    exe = Path(sys.executable).with_name("trustnode")
    out = open(log, "ab")  # noqa: SIM115 - the child owns it
    try:
        return subprocess.Popen(
            [str(exe), "api", "serve", "--worker" if worker else "--no-worker"], env=env, stdout=out, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, cwd=REPO_ROOT, start_new_session=True,
        )  # fmt: skip
    finally:
        out.close()


def _wait_up(proc: subprocess.Popen[bytes], url: str, log: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the operator exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code in (200, 503):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the operator did not start: {log.read_text()[-2000:]}")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def test_operator_commits_a_checked_placement_and_reveals_after_a_kill(net: Net, tmp_path: Path) -> None:
    data, log, port = tmp_path / "operator", tmp_path / "operator.log", free_port()
    url = f"http://127.0.0.1:{port}"
    proc = _spawn(net, data, OPERATOR, port, log)
    try:
        _wait_up(proc, url, log)
        batch = ask(url, net.provider.address)
        placed = pin_and_open(net, batch, seed=2)
        sid = placed.sid
        r = place(url, batch.ticket, placed.placement())
        assert r.status_code == 200, r.text
        first = CanaryReceipt.model_validate(r.json())
        assert first.state == "committed" and first.session_id == sid and first.tx_hash
        state = net.provider.canaries(sid)
        operator_address = client_for(net.dep, OPERATOR).address
        assert len(state.commitments) == 2 and state.operator == operator_address
        nonce = net.nonce(OPERATOR)
        replay = place(url, batch.ticket, placed.placement())
        assert replay.status_code == 200 and CanaryReceipt.model_validate(replay.json()) == first
        assert net.nonce(OPERATOR) == nonce, "a replay sends no second commit"
        swapped = placed.placement(placed.item(0, placed.slots[1]), placed.item(1, placed.slots[0]))
        assert place(url, batch.ticket, swapped).status_code == 409
        _kill(proc)  # between commit and reveal
        vote_round(net.provider, net.auditors, sid, 0, lambda r, g: SeatVote.PASS, net.mine)
        state = net.provider.canaries(sid)
        assert state.reveal_from is not None and not state.revealed
        net.mine(max(0, state.reveal_from - net.provider.block_number()))
        proc = _spawn(net, data, OPERATOR, port, log)
        _wait_up(proc, url, log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(net.provider.canaries(sid).revealed) < 2:
            time.sleep(0.5)
        revealed = {c.slot: (c.index, c.verdict) for c in net.provider.canaries(sid).revealed}
        store = CanaryStore(data / "canary-operator" / "tickets.db")
        ticket = store.get(batch.ticket)
        store.close()
        assert ticket is not None
        truths = {s: (placed.slots[s], outcome(c.verdict)) for s, c in enumerate(ticket.canaries)}
        assert revealed == truths, log.read_text()[-3000:]
        assert {v for _, v in truths.values()} <= {SegmentOutcome.PASS, SegmentOutcome.FAIL}
        final = receipt(url, batch.ticket)
        assert final.state == "revealed" and final.reveal_tx_hash and final.tx_hash == first.tx_hash
    finally:
        _kill(proc)


def test_an_operator_whose_account_is_not_authorized_refuses_to_start(net: Net, tmp_path: Path) -> None:
    log, port = tmp_path / "outsider.log", free_port()
    proc = _spawn(net, tmp_path / "outsider", OUTSIDER, port, log)
    try:
        assert proc.wait(timeout=60) == 1
    finally:
        _kill(proc)
    text = " ".join(log.read_text().split())
    address = client_for(net.dep, OUTSIDER).address
    assert f"account {address} is not an authorized canary operator" in text, text
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)


@pytest.mark.parametrize(
    ("worker", "extra", "phrase"),
    [
        (True, {}, "does not run the provider pipeline"),
        (False, {"TRUSTNODE_IPFS__API_URL": ""}, "set TRUSTNODE_IPFS__API_URL"),
        (False, {"TRUSTNODE_API__API_KEYS": "[]"}, "nobody could ask this canary operator"),
    ],
)
def test_a_misconfigured_operator_refuses_to_start(
    net: Net, tmp_path: Path, worker: bool, extra: dict[str, str], phrase: str
) -> None:
    log = tmp_path / "bad.log"
    proc = _spawn(net, tmp_path / "bad", OPERATOR, free_port(), log, worker=worker, **extra)
    try:
        assert proc.wait(timeout=60) == 1
    finally:
        _kill(proc)
    assert phrase in " ".join(log.read_text().split())


def test_an_operator_without_an_account_signs_as_the_devnet_operator(net: Net, tmp_path: Path) -> None:
    """`devnet up` authorizes dev account 20; an operator node given no account takes it, not the
    provider's account 1 (which the chain would refuse as an operator)."""
    log, port = tmp_path / "default.log", free_port()
    proc = _spawn(net, tmp_path / "default", None, port, log)
    try:
        _wait_up(proc, f"http://127.0.0.1:{port}", log)
    finally:
        _kill(proc)
    assert net.dep.canary_operators == [client_for(net.dep, CANARY_OPERATOR_ACCOUNT).address]
    text = " ".join(log.read_text().split())
    assert f"canary operator {client_for(net.dep, CANARY_OPERATOR_ACCOUNT).address}: authorized" in text, text
