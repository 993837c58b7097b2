"""docker-compose.yml and Dockerfile against the real CLI and settings (no Docker engine here).

Every trustnode service's command must be a real command path whose options exist and parse;
every TRUSTNODE_* variable must name a setting and validate; ports, service URLs, volumes,
accounts and tiers must fit together.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import typer
import yaml
from typer.testing import CliRunner

from trustnode.chain.accounts import dev_account
from trustnode.cli.main import app
from trustnode.config import Settings
from trustnode.config_keys import unknown_settings
from trustnode.models.enums import Tier

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
NODE_SERVICES = {
    n: s for n, s in SERVICES.items() if s.get("build") or s.get("image", "").startswith("trustnode")
}
KUBO_PORTS = {4001, 5001, 8080}

_INTERP = re.compile(r"\$\{(\w+)(?:(:?[-?])([^}]*))?\}")


def interpolate(value: str) -> str:
    """Compose variable substitution with what an operator would set (`:?` ones get a value)."""

    def sub(m: re.Match[str]) -> str:
        op, arg = m.group(2), m.group(3) or ""
        if op in (":-", "-"):
            return arg
        if op in (":?", "?"):
            return f"operator-set-{m.group(1).lower()}"
        return ""

    return _INTERP.sub(sub, value)


def env_of(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: interpolate(str(v)) for k, v in env.items()}


def setting_errors(env: dict[str, str]) -> list[str]:
    """TRUSTNODE_* variables that do not name a field of `Settings` (with `__` nesting): the
    node's own check (`trustnode.config_keys`), every variable counted."""
    return unknown_settings(Settings, {}, "", env, every_variable=True)


def settings_from(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    import os

    for key in list(os.environ):
        if key.startswith("TRUSTNODE_"):
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return Settings()


def _is_group(cmd: Any) -> bool:
    # Typer ships its own copy of click, so test for the group interface, not a class.
    return getattr(cmd, "commands", None) is not None


def resolve(argv: list[str]) -> tuple[list[str], Any, list[str]]:
    """(command path, leaf command, its arguments) for `trustnode ...` argv."""
    assert argv and argv[0] == "trustnode", f"command must start with trustnode: {argv}"
    cmd: Any = typer.main.get_command(app)
    path: list[str] = []
    rest = argv[1:]
    while _is_group(cmd) and rest:
        sub = cmd.get_command(cmd.context_class(cmd), rest[0])
        if sub is None:
            raise AssertionError(f"{' '.join(['trustnode', *path])} has no command {rest[0]!r}")
        cmd, path, rest = sub, [*path, rest[0]], rest[1:]
    assert not _is_group(cmd), f"{argv} names a command group, not a command"
    return path, cmd, rest


def option_errors(argv: list[str]) -> list[str]:
    """Options in argv that the command does not have, or arguments that do not parse."""
    path, cmd, rest = resolve(argv)
    known = {o for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", []))}
    errors = [
        f"{' '.join(path)}: no option {tok.split('=')[0]}"
        for tok in rest
        if tok.startswith("-") and tok.split("=")[0] not in known
    ]
    if not errors:
        try:
            cmd.make_context(" ".join(path), list(rest))
        except Exception as exc:  # noqa: BLE001 - typer's vendored click UsageError/BadParameter
            if not hasattr(exc, "format_message"):
                raise
            errors.append(f"{' '.join(path)}: {exc.format_message()}")
    return errors


def option_value(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def ports_of(service: dict[str, Any]) -> list[tuple[str, int]]:
    out = []
    for p in service.get("ports", []):
        parts = str(p).split(":")
        out.append((":".join(parts[:-1]), int(parts[-1].split("/")[0])))
    return out


# -- the checks themselves can fail ---------------------------------------------------------------


def test_checker_rejects_unknown_settings_and_options() -> None:
    assert setting_errors({"TRUSTNODE_CHAIN__RPCURL": "x"}) == [
        "TRUSTNODE_CHAIN__RPCURL: 'rpcurl' is not a setting (did you mean rpc_url?)"
    ]
    assert setting_errors({"TRUSTNODE_LLM": "x"}) == ["TRUSTNODE_LLM: 'llm' is a whole section, not a value"]
    assert setting_errors({"TRUSTNODE_LOG_LEVEL__X": "x"}) == [
        "TRUSTNODE_LOG_LEVEL__X: 'log_level' is not a section"
    ]
    assert setting_errors({"TRUSTNODE_API__PORT": "1", "OTHER": "x"}) == []
    assert option_errors(["trustnode", "api", "serve", "--prot", "1"]) == ["api serve: no option --prot"]
    assert option_errors(["trustnode", "api", "serve", "--port", "eighty"])
    assert option_errors(["trustnode", "auditor", "run"]), "--tier is required"
    with pytest.raises(AssertionError, match="no command 'sevre'"):
        resolve(["trustnode", "api", "sevre"])


# -- the compose file ------------------------------------------------------------------------------


def test_services_are_a_whole_network() -> None:
    assert SERVICES["anvil"]["image"].startswith("ghcr.io/foundry-rs/foundry:")
    # Blocks at a steady rate only: a block per transaction would end a person's commit window early.
    assert (
        "--block-time" in SERVICES["anvil"]["command"]
        and "--mixed-mining" not in SERVICES["anvil"]["command"]
    )
    assert SERVICES["ipfs"]["image"].startswith("ipfs/kubo:")
    tiers = sorted(
        option_value(s["command"], "--tier") or ""
        for s in NODE_SERVICES.values()
        if s["command"][1:3] == ["auditor", "run"]
    )
    assert tiers == ["computer", "human", "llm"], "three auditor daemons, one per tier"
    for t in tiers:
        Tier.parse(t)
    assert any(s["command"][1:3] == ["api", "serve"] for s in NODE_SERVICES.values())
    for name, s in SERVICES.items():
        for dep in s.get("depends_on", {}):
            assert dep in SERVICES, f"{name} depends on unknown service {dep}"
        for v in s.get("volumes", []):
            src = str(v).split(":")[0]
            assert src.startswith((".", "/")) or src in COMPOSE["volumes"], f"{name}: undeclared volume {src}"


@pytest.mark.parametrize("name", sorted(NODE_SERVICES))
def test_command_matches_the_cli(name: str) -> None:
    argv = [str(a) for a in NODE_SERVICES[name]["command"]]
    path, _, _ = resolve(argv)
    res = CliRunner().invoke(app, [*path, "--help"])
    assert res.exit_code == 0, res.output
    assert option_errors(argv) == []


@pytest.mark.parametrize("name", sorted(NODE_SERVICES))
def test_environment_matches_the_settings(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    env = env_of(NODE_SERVICES[name])
    assert env, f"{name} has no environment"
    assert [k for k in env if not k.startswith("TRUSTNODE_")] == []
    assert setting_errors(env) == []
    s = settings_from(env, monkeypatch)  # values validate too (types, ranges, JSON lists)
    assert str(s.data_dir) == "/data"
    assert str(s.deployment_file) == "/shared/deployment.json"
    rpc = urlsplit(s.chain.rpc_url or "")
    assert rpc.hostname in SERVICES and rpc.hostname == "anvil"
    assert str(rpc.port) == option_value(SERVICES["anvil"]["command"], "--port")
    argv = NODE_SERVICES[name]["command"]
    if argv[1] != "deploy":
        ipfs = urlsplit(s.ipfs.api_url or "")
        assert ipfs.hostname == "ipfs" and ipfs.port == 5001
        mounts = {str(v).split(":")[1] for v in NODE_SERVICES[name]["volumes"]}
        assert {"/data", "/shared"} <= mounts
    if option_value(argv, "--tier") == "llm":
        assert s.llm.base_url, "the LLM auditor needs an endpoint"
    if argv[1:3] == ["api", "serve"] and "--no-worker" not in argv:
        assert s.api.api_keys and s.api.worker


def test_dockerfile_env_matches_the_settings() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim\b", text, re.M)
    assert re.search(r"^RUN pip install \.", text, re.M)
    assert not re.search(r"apt-get|gcc|build-essential", text), "artifacts ship: no compiler in the image"
    env_lines = re.findall(r"(TRUSTNODE_\w+)=(\S+)", text)
    assert env_lines and setting_errors(dict(env_lines)) == []
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".venv" in ignored and "node_modules" in ignored and "src" not in ignored


def test_ports_are_the_ones_listened_on() -> None:
    host_ports: list[str] = []
    for name, s in SERVICES.items():
        for host, container in ports_of(s):
            host_ports.append(host.split(":")[-1])
            argv = [str(a) for a in s.get("command", [])]
            if name == "ipfs":
                assert container in KUBO_PORTS
            else:
                assert str(container) == option_value(argv, "--port"), (
                    f"{name} does not listen on {container}"
                )
    assert len(host_ports) == len(set(host_ports)), "two services publish the same host port"
    assert ports_of(SERVICES["anvil"])[0][0].startswith("127.0.0.1"), "the dev chain stays on the host"


def test_accounts_are_distinct_and_funded(monkeypatch: pytest.MonkeyPatch) -> None:
    deploy_argv = [str(a) for a in SERVICES["deploy"]["command"]]
    funded = {deploy_argv[i + 1] for i, tok in enumerate(deploy_argv) if tok == "--fund"}
    by_data: dict[str, set[int]] = {}
    for name, s in NODE_SERVICES.items():
        if name == "deploy":
            continue
        index = settings_from(env_of(s), monkeypatch).chain.account_index
        assert dev_account(index).address in funded, f"{name} signs with an unfunded account"
        data = next(str(v).split(":")[0] for v in s["volumes"] if str(v).endswith(":/data"))
        by_data.setdefault(data, set()).add(index)
    # One account per data volume, and no two volumes share an account (one key, one node).
    assert all(len(v) == 1 for v in by_data.values())
    accounts = [next(iter(v)) for v in by_data.values()]
    assert len(accounts) == len(set(accounts))


def test_human_page_reads_the_human_daemons_queue() -> None:
    human = next(s for s in NODE_SERVICES.values() if option_value(s["command"], "--tier") == "human")
    web = [
        s
        for s in NODE_SERVICES.values()
        if s["command"][1:3] == ["api", "serve"]
        and "--no-worker" in s["command"]
        and env_of(s).get("TRUSTNODE_CANARY_OPERATOR__ENABLED") != "true"
    ]
    assert len(web) == 1
    assert {v for v in human["volumes"] if str(v).endswith(":/data")} == {
        v for v in web[0]["volumes"] if str(v).endswith(":/data")
    }


def test_the_canary_operator_is_authorized_and_the_provider_finds_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """One operator service, signing with an account the deployment authorizes (never the
    provider's), and the provider pointed at its URL with the key it accepts."""
    ops = {
        n: s
        for n, s in NODE_SERVICES.items()
        if env_of(s).get("TRUSTNODE_CANARY_OPERATOR__ENABLED") == "true"
    }
    assert len(ops) == 1, "one canary operator"
    name, op = next(iter(ops.items()))
    assert "--no-worker" in op["command"], "an operator runs no provider pipeline"
    op_settings = settings_from(env_of(op), monkeypatch)
    operator = dev_account(op_settings.chain.account_index).address
    deploy = settings_from(env_of(SERVICES["deploy"]), monkeypatch)
    assert operator in deploy.protocol.canary_operators, "deploy authorizes the operator's account"
    providers = [
        s
        for s in NODE_SERVICES.values()
        if s["command"][1:3] == ["api", "serve"] and "--no-worker" not in s["command"]
    ]
    assert len(providers) == 1
    prov = settings_from(env_of(providers[0]), monkeypatch)
    assert dev_account(prov.chain.account_index).address != operator, "the provider is never its operator"
    url = urlsplit(prov.canaries.operator_url or "")
    assert url.hostname == name and str(url.port) == option_value(op["command"], "--port")
    assert prov.canaries.operator_api_key in [k.get_secret_value() for k in op_settings.api.api_keys]
    anvil_accounts = int(option_value(SERVICES["anvil"]["command"], "--accounts") or 0)
    assert op_settings.chain.account_index < anvil_accounts, "anvil creates the operator's account"
