"""Where the repository's toolchain lives, for commands run from a source checkout.

A pip-installed node ships compiled artifacts and needs none of this; only building
contracts and starting a devnet look for the npm toolchain.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ARTIFACTS_DIR = Path(__file__).resolve().parent / "artifacts"

INSTALL_HINT = "run `make install` (or `npm ci`) in the trustnode repository"


def repo_root() -> Path | None:
    """The source checkout containing this package, or one named by TRUSTNODE_REPO."""
    env = os.environ.get("TRUSTNODE_REPO")
    candidates = [Path(env)] if env else []
    candidates += [Path(__file__).resolve().parents[3], Path.cwd()]
    for c in candidates:
        if (c / "contracts" / "src").is_dir() and (c / "package.json").is_file():
            return c
    return None


def find_tool(name: str) -> Path | None:
    """An npm-installed tool (anvil, forge, jsipfs) from node_modules/.bin, else from PATH."""
    env = os.environ.get(f"TRUSTNODE_{name.upper()}")
    if env:
        return Path(env) if Path(env).exists() else None
    root = repo_root()
    if root is not None:
        # Prefer the platform binary of @foundry-rs/* over its node shim, so signals reach it.
        for native in sorted((root / "node_modules" / "@foundry-rs").glob(f"{name}-*/bin/{name}")):
            return native
        p = root / "node_modules" / ".bin" / name
        if p.exists():
            return p
    found = shutil.which(name)
    return Path(found) if found else None
