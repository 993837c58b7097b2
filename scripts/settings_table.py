#!/usr/bin/env python3
"""Print the Markdown table of every setting (env name, TOML key, default, meaning) for README."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from trustnode.config import Settings


def rows(model: type[BaseModel], env_prefix: str, toml_prefix: str) -> list[tuple[str, str, str, str]]:
    out: list[tuple[str, str, str, str]] = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out += rows(ann, f"{env_prefix}{name.upper()}__", f"{toml_prefix}{name}.")
            continue
        out.append(
            (f"{env_prefix}{name.upper()}", f"{toml_prefix}{name}", _default(field), field.description or "")
        )
    return out


def _shown(value: Any) -> str:
    """A default as an operator writes it in the environment (lists as JSON, amounts as decimals)."""
    if isinstance(value, list | tuple):
        return f"`{json.dumps(list(value))}`"
    if isinstance(value, Decimal | str):
        return f"`{value}`"
    return f"`{value!r}`"


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        try:
            value = field.default_factory()  # type: ignore[call-arg]
        except TypeError:
            return "(computed)"
        return "(computed)" if "Path" in type(value).__name__ else _shown(value)
    value = field.default
    if value is None:
        return "unset"
    if hasattr(value, "get_secret_value"):
        return "`***`"
    return _shown(value)


def main() -> None:
    print("| environment variable | TOML key | default | meaning |")
    print("|---|---|---|---|")
    for env, toml, default, doc in rows(Settings, "TRUSTNODE_", ""):
        print(f"| `{env}` | `{toml}` | {default} | {doc} |")


if __name__ == "__main__":
    main()
