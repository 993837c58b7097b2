"""README stays true: every setting documented, the two commands present, CI runs the test command."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from trustnode.chain.devnet import CANARY_OPERATOR_ACCOUNT


def test_settings_table_is_complete_and_current(repo_root: Path) -> None:
    readme = (repo_root / "README.md").read_text()
    table = readme.split("<!-- settings-table:start -->\n", 1)[1].split("<!-- settings-table:end -->", 1)[0]
    generated = subprocess.run(
        [sys.executable, str(repo_root / "scripts" / "settings_table.py")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert table == generated, "regenerate the table with scripts/settings_table.py"
    assert "|  |" not in table, "every setting needs a description"


def test_readme_commands_and_ci(repo_root: Path) -> None:
    readme = (repo_root / "README.md").read_text()
    assert "make demo" in readme and "make test" in readme
    ci = (repo_root / ".ci" / "run").read_text()
    assert "make test" in ci


def _operator_block(readme: str) -> list[tuple[dict[str, str], list[str]]]:
    """(environment, argv) of each command in the README's canary-operator block."""
    section = readme.split("**The canary operator role.**", 1)[1]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        words = shlex.split(line)
        env = dict(w.split("=", 1) for w in words if "=" in w and w.split("=", 1)[0].isupper())
        argv = [w for w in words if not ("=" in w and w.split("=", 1)[0].isupper())]
        commands.append((env, argv))
    return commands


def test_readme_operator_lines_name_real_settings_and_fit_together(repo_root: Path) -> None:
    """The two operator lines are not run by the hand-run network test (canaries are off there):
    every variable is a real setting with a valid value, every option exists, and the provider
    points at the operator's port with one of the operator's keys on the devnet's operator account."""
    (op_env, op_argv), (prov_env, prov_argv) = _operator_block((repo_root / "README.md").read_text())
    for env, argv in ((op_env, op_argv), (prov_env, prov_argv)):
        assert argv[:3] == ["trustnode", "api", "serve"], argv
        clean = {k: v for k, v in os.environ.items() if not k.startswith("TRUSTNODE_")}
        probe = subprocess.run(
            [sys.executable, "-c", "from trustnode.config import Settings; Settings()"],
            env={**clean, **env},
            capture_output=True,
            text=True,
            check=False,
        )
        assert probe.returncode == 0, f"{env}: {probe.stderr[-800:]}"
        unknown = [k for k in env if k not in _setting_variables() and k != "TRUSTNODE_DATA_DIR"]
        assert not unknown, f"not settings: {unknown}"
        help_text = subprocess.run(
            [sys.executable, "-m", "trustnode.cli.main", "api", "serve", "--help"],
            capture_output=True,
            text=True,
            check=True,
            env={**clean, "COLUMNS": "200"},
        ).stdout
        for option in (w for w in argv[3:] if w.startswith("--")):
            assert option in help_text, f"`api serve` has no {option}"
    assert op_env["TRUSTNODE_CHAIN__ACCOUNT_INDEX"] == str(CANARY_OPERATOR_ACCOUNT)
    assert op_env["TRUSTNODE_CANARY_OPERATOR__ENABLED"] == "true" and "--no-worker" in op_argv
    port = op_argv[op_argv.index("--port") + 1]
    assert prov_env["TRUSTNODE_CANARIES__OPERATOR_URL"] == f"http://127.0.0.1:{port}"
    assert prov_env["TRUSTNODE_CANARIES__OPERATOR_API_KEY"] in json.loads(op_env["TRUSTNODE_API__API_KEYS"])


def _setting_variables() -> set[str]:
    """Every TRUSTNODE_ variable the settings table documents."""
    table = subprocess.run(
        [sys.executable, str(Path(__file__).parent.parent / "scripts" / "settings_table.py")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(re.findall(r"`(TRUSTNODE_[A-Z0-9_]+)`", table))
