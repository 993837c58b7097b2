"""Every `--help` of every command shows a real label for each option: none for flags."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from trustnode.cli.labels import label_for
from trustnode.cli.main import app

TYPE_LABEL = re.compile(r"<(bool|str|int|float|path|Path|Decimal)>")


def _commands(cmd: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    subs = getattr(cmd, "commands", None)
    if not subs:
        return [(path, cmd)]
    out = [(path, cmd)]
    for name, sub in subs.items():
        out += _commands(sub, [*path, name])
    return out


ROOT = typer.main.get_command(app)
COMMANDS = _commands(ROOT, [])


def test_the_tree_is_walked() -> None:
    paths = {" ".join(p) for p, _ in COMMANDS}
    assert {"devnet up", "deploy", "api serve", "auditor run", "submit", "query", "ipfs add"} <= paths


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "trustnode")
def test_help_has_real_labels(path: list[str]) -> None:
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "240"})
    assert res.exit_code == 0, res.output
    assert not TYPE_LABEL.search(res.output), f"type placeholder in `{' '.join(path)} --help`:\n{res.output}"
    cmd = dict((tuple(p), c) for p, c in COMMANDS)[tuple(path)]
    for param in cmd.get_params(cmd.context_class(cmd)):  # with --help and the completion flags
        if param.param_type_name != "option" or getattr(param, "hidden", False):
            continue
        opt = next(o for o in param.opts if o.startswith("--"))
        line = next(ln for ln in res.output.splitlines() if re.match(rf"^[│\s*]*{re.escape(opt)}\b", ln))
        after = line.split(opt, 1)[1]
        if param.is_flag:
            assert param.metavar == "", f"{opt} is a flag: no label"
        else:
            assert param.metavar and param.metavar in after, f"{opt} shows no label: {line!r}"
            assert param.metavar.upper() == param.metavar or "|" in param.metavar, param.metavar


def test_labels_follow_names_then_types() -> None:
    cmd = dict((tuple(p), c) for p, c in COMMANDS)
    opts = {p.name: p for p in cmd[("deploy",)].params}
    assert opts["rpc_url"].metavar == "URL"
    assert opts["seats_per_tier"].metavar == "C,L,H"
    assert opts["json_out"].metavar == ""
    serve = {p.name: p for p in cmd[("api", "serve")].params}
    assert serve["port"].metavar == "PORT" and serve["threads"].metavar == "N"
    assert label_for(serve["worker"]) == ""
