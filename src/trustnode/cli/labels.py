"""Readable value labels in `--help`: `--rpc-url URL`, `--port PORT`, a bare `--json`.

Typer labels every option by its Python type (`<str>`, `<int>`), and flags as `<bool>`,
which tells a user nothing. The root group walks the whole command tree once it is built
and gives each parameter a label: flags none, an explicit `metavar=` wins, otherwise one
derived from the option's name, then from its type.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperGroup

# Option-name words -> label, tried on the last word of the name first.
_BY_WORD: dict[str, str] = {
    "url": "URL",
    "api": "URL",
    "port": "PORT",
    "host": "HOST",
    "key": "KEY",
    "file": "FILE",
    "path": "PATH",
    "out": "PATH",
    "output": "PATH",
    "repo": "DIR",
    "dir": "DIR",
    "workdir": "DIR",
    "timeout": "SECONDS",
    "wait": "SECONDS",
    "seconds": "SECONDS",
    "s": "SECONDS",
    "threads": "N",
    "count": "N",
    "seed": "N",
    "seeds": "N",
    "tier": "TIER",
    "format": "FORMAT",
    "address": "ADDRESS",
    "fund": "ADDRESS",
    "amount": "TRUST",
    "stake": "TRUST",
    "bps": "BPS",
    "blocks": "BLOCKS",
}
_BY_TYPE: dict[str, str] = {"int": "N", "float": "NUMBER", "str": "TEXT", "Path": "PATH"}


def _choices(param: Any) -> list[str] | None:
    desc = getattr(param, "type_descriptor", None)
    if desc is None or not desc.is_choice or not desc.choices:
        return None
    return [str(getattr(c, "value", c)) for c in desc.choices]


def label_for(param: Any) -> str:
    """The label shown after an option (empty for a flag)."""
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    choices = _choices(param)
    if choices:
        return "|".join(choices)
    words = (param.name or "").lower().split("_")
    for word in (words[-1], *reversed(words[:-1])):
        if word in _BY_WORD:
            return _BY_WORD[word]
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    type_name = getattr(annotation, "__name__", "")
    return _BY_TYPE.get(type_name, (param.name or "value").upper())


def _no_type_column(ctx: Any = None) -> None:
    return None


def _bare_help_option(command: Any) -> None:
    """`--help` is a flag too; Click builds it lazily, so label it when it is built."""
    build = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = build(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = get_help_option


def label_tree(command: Any) -> None:
    """Give every parameter of `command` and of its subcommands a label."""
    _bare_help_option(command)
    for param in getattr(command, "params", []):
        if param.param_type_name == "argument":
            # The name column already says what it is (FILE, ID): no type column beside it.
            param.metavar = param.metavar or (param.name or "ARG").upper()
            param.display_type_rich = _no_type_column
        elif param.metavar is None:
            param.metavar = label_for(param)
    for sub in (getattr(command, "commands", None) or {}).values():
        label_tree(sub)


class LabelledGroup(TyperGroup):
    """The root `trustnode` group: labels the whole tree when Typer builds it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        label_tree(self)

    def get_params(self, ctx: Any) -> Any:
        # Typer adds the completion flags to the root after building it.
        for param in self.params:
            if param.param_type_name == "option" and param.metavar is None:
                param.metavar = label_for(param)
        return super().get_params(ctx)
