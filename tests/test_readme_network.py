"""The README path as a test (issue 13): the commands of "Run a network by hand", run as written.

Every line of that section's shell blocks is taken from README.md and run as its own process
(on free ports on 127.0.0.1, from a scratch directory): the devnet, the IPFS daemon, the LLM
endpoint, the provider's API node, two computer auditors, an LLM auditor, a human auditor and
its audit page. A person's part is played in headless Chromium on the real page: sign in with
the README's `web sign` line, then decide every human seat from the samples' answer key. The
README's `submit` lines must end with each sample's expected verdict. If the README changes,
this test runs the new commands; if they stop working, it fails.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, Field

from tests.browser.conftest import LocalOnly, browser, page, shot  # noqa: F401 - browser and page are fixtures
from tests.conftest import REPO_ROOT, free_port
from trustnode.node.samples import load_samples

pytestmark = [pytest.mark.chain, pytest.mark.ipfs, pytest.mark.browser, pytest.mark.slow]

README_PORTS = (8545, 5001, 8011, 8080, 8081)
SIGN_PLACEHOLDER = "MESSAGE SHOWN ON THE PAGE"
CRITERIA = ("logical_consistency", "mathematical_accuracy", "completeness", "clarity")


class Command(BaseModel):
    """One README line: its environment prefix and argv (as a user would type them)."""

    line: str
    env: dict[str, str] = Field(default_factory=dict)
    argv: list[str]

    @property
    def words(self) -> str:
        return " ".join(self.argv)

    def exec_argv(self) -> list[str]:
        """`trustnode ...` and `python ...` run with this interpreter (the test's virtualenv)."""
        program, *rest = self.argv
        if program == "trustnode":
            return [sys.executable, "-m", "trustnode.cli.main", *rest]
        if program in ("python", "python3"):
            return [sys.executable, *rest]
        raise AssertionError(f"the README runs something other than trustnode or python: {self.line}")


def readme_section(title: str = "## Run a network by hand") -> str:
    text = (REPO_ROOT / "README.md").read_text()
    assert title in text, f"README.md has no section {title!r}"
    return text.split(title, 1)[1].split("\n## ", 1)[0]


def parse_commands(section: str, ports: dict[int, int]) -> tuple[dict[str, str], list[Command]]:
    """(exported environment, commands) of every ```bash block, README ports mapped to `ports`."""
    exported: dict[str, str] = {}
    commands: list[Command] = []
    for block in re.findall(r"```bash\n(.*?)```", section, re.S):
        for raw in block.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            line = re.sub(r"\b(\d{4})\b", lambda m: str(ports.get(int(m.group(1)), m.group(1))), line)
            tokens = shlex.split(line)
            if tokens[0] == "export":
                exported.update(t.split("=", 1) for t in tokens[1:])  # type: ignore[arg-type]
                continue
            env: dict[str, str] = {}
            while re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", tokens[0], re.S):
                key, value = tokens.pop(0).split("=", 1)
                env[key] = value
            commands.append(Command(line=line, env=env, argv=tokens))
    return exported, commands


def test_the_section_lists_every_role() -> None:
    """The section names one process per role, and this parser understands all of them."""
    ports = {p: p for p in README_PORTS}
    exported, commands = parse_commands(readme_section(), ports)
    assert {"TRUSTNODE_CHAIN__DEPLOYMENT_FILE", "TRUSTNODE_IPFS__API_URL"} <= set(exported)
    words = [c.words for c in commands]
    tiers = sorted(c.argv[c.argv.index("--tier") + 1] for c in commands if "auditor run" in c.words)
    assert tiers == ["computer", "computer", "human", "llm"]
    assert any(w.startswith("trustnode devnet up") for w in words)
    assert any(w.startswith("trustnode ipfs daemon") for w in words)
    assert sum(w.startswith("trustnode api serve") for w in words) == 2, "the API node and the human's page"
    assert any("web sign" in w and SIGN_PLACEHOLDER in w for w in words)
    submitted = {c.argv[c.argv.index("--sample") + 1] for c in commands if c.argv[1:2] == ["submit"]}
    assert submitted == {s.name for s in load_samples()}, "every bundled sample is submitted"
    accounts = [c.env.get("TRUSTNODE_CHAIN__ACCOUNT_INDEX") for c in commands if "auditor run" in c.words]
    assert len(set(accounts)) == 4 and None not in accounts, "one account per auditor"


class Process:
    def __init__(self, name: str, cmd: Command, env: dict[str, str], cwd: Path) -> None:
        self.name, self.cmd = name, cmd
        self.log = cwd / "logs" / f"{name}.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as fh:
            self.proc = subprocess.Popen(
                cmd.exec_argv(),
                env=env,
                cwd=cwd,
                stdout=fh,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


class Network:
    """The README's processes, started in README order from a scratch directory."""

    def __init__(self, workdir: Path) -> None:
        self.work = workdir
        self.ports = {p: free_port() for p in README_PORTS}
        exported, self.commands = parse_commands(readme_section(), self.ports)
        base = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTNODE_")}
        self.base_env = {**base, **exported}
        self.daemons: list[Process] = []

    def env(self, cmd: Command) -> dict[str, str]:
        return {**self.base_env, **cmd.env}

    def run(self, cmd: Command, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cmd.exec_argv(), env=self.env(cmd), cwd=self.work, capture_output=True, text=True, timeout=timeout
        )

    def port(self, readme_port: int) -> int:
        return self.ports[readme_port]

    def tails(self) -> str:
        return "\n".join(f"--- {p.name}:\n{p.text()[-2500:]}" for p in self.daemons)

    def _ready(self, proc: Process, check: Any, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if proc.proc.poll() is not None:
                raise AssertionError(f"`{proc.cmd.line}` exited with {proc.proc.returncode}:\n{proc.text()}")
            try:
                if check():
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise AssertionError(f"`{proc.cmd.line}` not ready after {timeout_s}s:\n{proc.text()}")

    def start(self) -> None:
        for i, cmd in enumerate(self.commands):
            w = cmd.words
            if w.startswith("trustnode devnet up"):
                res = self.run(cmd)
                assert res.returncode == 0, f"`{cmd.line}` failed:\n{res.stdout}\n{res.stderr}"
                continue
            if w.startswith(("trustnode submit", "trustnode devnet down")) or "web sign" in w:
                continue
            proc = Process(f"{i:02d}-{cmd.argv[1].replace('.', '-')}", cmd, self.env(cmd), self.work)
            self.daemons.append(proc)
            if "ipfs daemon" in w:
                url = f"http://127.0.0.1:{self.port(5001)}/api/v0/version"
                self._ready(proc, lambda url=url: httpx.post(url, timeout=2).status_code == 200, 120)
            elif "fake_server" in w or "llm fake-serve" in w:
                url = f"http://127.0.0.1:{self.port(8011)}/v1/models"
                self._ready(proc, lambda url=url: httpx.get(url, timeout=2).status_code == 200, 60)
            elif "api serve" in w:
                port = int(cmd.argv[cmd.argv.index("--port") + 1])
                url = f"http://127.0.0.1:{port}/healthz"
                self._ready(proc, lambda url=url: httpx.get(url, timeout=5).status_code > 0, 90)
            elif "auditor run" in w:
                self._ready(proc, lambda proc=proc: "registered and staked" in proc.text(), 120)

    def stop(self) -> None:
        for proc in reversed(self.daemons):
            proc.stop()
        for cmd in self.commands:
            if cmd.words.startswith("trustnode devnet down"):
                self.run(cmd, timeout=60)


@pytest.fixture
def network(tmp_path: Path) -> Iterator[Network]:
    net = Network(tmp_path)
    try:
        net.start()
        yield net
    except BaseException:
        print(net.tails())
        raise
    finally:
        net.stop()
        keep = REPO_ROOT / "test-artifacts" / "readme-network-logs"
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(tmp_path / "logs", keep, dirs_exist_ok=True)


def _sign_in(pg: Any, page_url: str, net: Network) -> None:
    sign = next(c for c in net.commands if "web sign" in c.words)
    pg.goto(f"{page_url}/audit")
    if not pg.url.endswith("/audit/login"):
        return
    message = pg.input_value("#message")
    cmd = sign.model_copy(update={"argv": [message if a == SIGN_PLACEHOLDER else a for a in sign.argv]})
    res = net.run(cmd, timeout=60)
    assert res.returncode == 0, res.stderr
    pg.fill("#signature", res.stdout.strip())
    pg.click("#signin-submit")
    pg.wait_for_url(f"{page_url}/audit")


def _answer_open_seats(pg: Any, page_url: str, answered: set[str], flawed_phrases: list[str]) -> None:
    """Decide every open seat on the page as a careful person with the answer key would."""
    pg.goto(f"{page_url}/audit")
    links = pg.eval_on_selector_all("a.open-seat", "els => els.map(e => e.getAttribute('href'))")
    for href in links:
        if href in answered:
            continue
        pg.goto(f"{page_url}{href}")
        if pg.locator("#verdict-form").count() == 0:
            continue  # closed meanwhile
        reasoning = pg.inner_text("#current-reasoning").lower()
        flawed = [p for p in flawed_phrases if p.lower() in reasoning]
        if flawed:
            pg.check("#verdict-fail")
            pg.fill("#note", f"{flawed[0]!r} is not supported.")
        else:
            for key in CRITERIA:
                pg.check(f"#crit-{key}")
            pg.check("#verdict-pass")
            pg.fill("#note", "Follows from what came before.")
        pg.click("#submit-verdict")
        pg.wait_for_selector("#notice, #error, #closed")
        assert pg.locator("#notice").count() == 1, f"verdict refused: {pg.inner_text('main')[:500]}"
        answered.add(href)


@pytest.fixture
def person(request: pytest.FixtureRequest) -> tuple[Any, LocalOnly]:
    """The human auditor at the audit page: a headless Chromium tab that only reaches 127.0.0.1."""
    tab: tuple[Any, LocalOnly] = request.getfixturevalue("page")
    return tab


def test_readme_network_audits_the_samples(network: Network, person: tuple[Any, LocalOnly]) -> None:
    pg, guard = person
    samples = {s.name: s for s in load_samples()}
    flawed_phrases = [p for s in samples.values() for p in s.flawed_phrases]
    page_cmd = next(c for c in network.commands if "api serve" in c.words and "--no-worker" in c.argv)
    page_url = f"http://127.0.0.1:{page_cmd.argv[page_cmd.argv.index('--port') + 1]}"

    submits: dict[str, subprocess.Popen[str]] = {}
    for cmd in network.commands:
        if cmd.argv[1:2] == ["submit"]:
            name = cmd.argv[cmd.argv.index("--sample") + 1]
            submits[name] = subprocess.Popen(
                [*cmd.exec_argv(), "--json"],
                env=network.env(cmd),
                cwd=network.work,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
    answered: set[str] = set()
    try:
        _sign_in(pg, page_url, network)
        deadline = time.monotonic() + 900
        while any(p.poll() is None for p in submits.values()):
            assert time.monotonic() < deadline, "the samples were not audited in 15 minutes"
            _answer_open_seats(pg, page_url, answered, flawed_phrases)
            time.sleep(1.0)
    finally:
        for p in submits.values():
            if p.poll() is None:
                p.kill()
    assert answered, "the human auditor was drawn and decided its seats on the page"
    shot(pg, "readme-network-audit-page")
    for name, proc in submits.items():
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, (
            f"submit {name} exited {proc.returncode}:\n{err[-3000:]}\n{network.tails()}"
        )
        view = json.loads(out)
        assert view["status"] == "done", view
        outcome = view["outcome"]
        assert outcome["verdict"] == samples[name].expected_verdict, (name, outcome["summary"])
    assert guard.blocked == [], f"pages tried to leave 127.0.0.1: {guard.blocked}"
