"""The `trustnode` command.

Each command group lives in its own module exposing `register(app)`, so capabilities add
commands without touching each other's code.
"""

from __future__ import annotations

import importlib

import typer

from trustnode.cli.labels import LabelledGroup

app = typer.Typer(
    name="trustnode",
    help="Node of a decentralized network that audits LLM reasoning traces.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=LabelledGroup,
)

COMMAND_MODULES: tuple[str, ...] = (
    "trustnode.cli.contracts",
    "trustnode.cli.devnet",
    "trustnode.cli.ipfs",
    "trustnode.cli.demo",
    "trustnode.cli.node",
    "trustnode.cli.user",
    "trustnode.cli.appeal",
    "trustnode.cli.params",
    "trustnode.cli.simulate",
    "trustnode.cli.eval",
    "trustnode.cli.web",
    "trustnode.cli.deploy",
    "trustnode.cli.decompose",
    "trustnode.cli.llm",
)


def _register_all() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)


_register_all()


if __name__ == "__main__":
    app()
