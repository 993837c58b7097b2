"""Settings nobody reads: a misspelt key in the TOML file or in a `TRUSTNODE_SECTION__KEY` variable.

pydantic-settings ignores unknown keys, so `[protocol] appeal_block = 30` would leave appeals off
without a word. The node refuses to start instead, naming the key and the nearest real one.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

ENV_PREFIX = "TRUSTNODE_"
ENV_DELIMITER = "__"


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The settings section a field holds (`X` or `X | None`), or None for a plain value."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        found = [m for a in typing.get_args(annotation) if (m := _model_of(a)) is not None]
        return found[0] if len(found) == 1 else None
    return None


def setting_problem(root: type[BaseModel], path: list[str]) -> str | None:
    """Why the key path names no settable value of `root`, or None when it does."""
    model = root
    for i, part in enumerate(path):
        field = model.model_fields.get(part)
        if field is None:
            near = difflib.get_close_matches(part, list(model.model_fields), n=1)
            return f"{part!r} is not a setting" + (f" (did you mean {near[0]}?)" if near else "")
        section = _model_of(field.annotation)
        last = i == len(path) - 1
        if last and section is not None:
            return f"{part!r} is a whole section, not a value"
        if not last and section is None:
            return f"{part!r} is not a section"
        if section is not None:
            model = section
    return None


def _keys(data: Mapping[str, Any], model: type[BaseModel], prefix: list[str]) -> list[list[str]]:
    """Every key path of a TOML table, descending only into settings sections."""
    out: list[list[str]] = []
    for key, value in data.items():
        path = [*prefix, key]
        field = model.model_fields.get(key)
        section = _model_of(field.annotation) if field is not None else None
        if isinstance(value, Mapping) and section is not None:
            out += _keys(value, section, path)
        else:
            out.append(path)
    return out


def unknown_settings(
    root: type[BaseModel],
    toml: Mapping[str, Any],
    toml_name: str,
    environ: Mapping[str, str],
    *,
    every_variable: bool = False,
) -> list[str]:
    """One line per key of the TOML file or per `TRUSTNODE_*` variable that sets nothing.

    Variables without the nested delimiter are checked only with `every_variable`: other tools of
    the project read some (`TRUSTNODE_CONFIG`, `TRUSTNODE_API_KEY`)."""
    problems = []
    for path in _keys(toml, root, []):
        table = f"[{'.'.join(path[:-1])}] " if len(path) > 1 else ""
        if (why := setting_problem(root, path)) is not None:
            problems.append(f"{table}{path[-1]} in {toml_name}: {why}")
    for name in sorted(environ):
        if not name.upper().startswith(ENV_PREFIX):
            continue
        if ENV_DELIMITER in name or every_variable:
            path = [p.lower() for p in name[len(ENV_PREFIX) :].split(ENV_DELIMITER)]
            if (why := setting_problem(root, path)) is not None:
                problems.append(f"{name}: {why}")
    return problems
