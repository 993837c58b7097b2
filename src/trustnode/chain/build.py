"""Compile `contracts/src` into ABI + bytecode artifacts shipped inside the package.

The settings are pinned here (and mirrored in foundry.toml) so the same sources always
give the same bytecode, which is what the stale-artifact test relies on. A native solc of
the pinned version on PATH is used when present; otherwise `scripts/solc` (solc-js).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import solcx
from pydantic import BaseModel

from trustnode.chain.paths import ARTIFACTS_DIR, INSTALL_HINT, repo_root

SOLC_VERSION = "0.8.28"
REMAPPINGS = [
    "@openzeppelin/contracts/=node_modules/@openzeppelin/contracts/",
    "forge-std/=node_modules/forge-std/src/",
]
COMPILER_SETTINGS: dict[str, Any] = {
    "optimizer": {"enabled": True, "runs": 200},
    "evmVersion": "cancun",
    "viaIR": False,
    "metadata": {"bytecodeHash": "none", "appendCBOR": False},
    "remappings": REMAPPINGS,
    "outputSelection": {
        "*": {"*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object", "evm.methodIdentifiers"]}
    },
}


class BuildError(RuntimeError):
    """The compiler is missing or the sources do not compile."""


class Artifact(BaseModel):
    """What a client needs to deploy and call one contract."""

    contract_name: str
    source_name: str
    abi: list[dict[str, Any]]
    bytecode: str
    deployed_bytecode: str


class BuildManifest(BaseModel):
    """Records the inputs of a build, so staleness can be told without compiling."""

    solc_version: str
    settings: dict[str, Any]
    sources: dict[str, str]  # path -> sha256 of the file's content
    contracts: list[str]


def find_solc(root: Path) -> Path:
    """A native solc of the pinned version if one is on PATH, else the solc-js wrapper."""
    native = shutil.which("solc")
    if native:
        out = subprocess.run([native, "--version"], capture_output=True, text=True, check=False).stdout
        if f"Version: {SOLC_VERSION}" in out and "Emscripten" not in out:
            return Path(native)
    wrapper = root / "scripts" / "solc"
    if not (root / "node_modules" / "solc").is_dir():
        raise BuildError(f"solc-js is not installed: {INSTALL_HINT}")
    return wrapper


def source_files(root: Path) -> list[Path]:
    return sorted((root / "contracts" / "src").rglob("*.sol"))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compile_contracts(root: Path | None = None) -> tuple[dict[str, Artifact], BuildManifest]:
    """Compile every contract under contracts/src with the pinned settings."""
    root = root or repo_root()
    if root is None:
        raise BuildError("not in a trustnode source checkout (contracts/src not found); set TRUSTNODE_REPO")
    files = source_files(root)
    if not files:
        raise BuildError(f"no Solidity sources under {root / 'contracts' / 'src'}")
    rel = {f.relative_to(root).as_posix(): f for f in files}
    standard_input = {
        "language": "Solidity",
        "sources": {name: {"content": path.read_text()} for name, path in rel.items()},
        "settings": COMPILER_SETTINGS,
    }
    solc = find_solc(root)
    try:
        output = solcx.compile_standard(
            standard_input,
            solc_binary=solc,
            base_path=str(root),
            allow_paths=[str(root), str(root / "node_modules")],
        )
    except solcx.exceptions.SolcError as exc:
        raise BuildError(f"compilation failed:\n{exc.stderr_data or exc.stdout_data or exc}") from exc
    errors = [e for e in output.get("errors", []) if e.get("severity") == "error"]
    if errors:
        raise BuildError(
            "compilation failed:\n" + "\n".join(e.get("formattedMessage", str(e)) for e in errors)
        )
    artifacts: dict[str, Artifact] = {}
    for source_name in rel:
        for name, data in output["contracts"].get(source_name, {}).items():
            artifacts[name] = Artifact(
                contract_name=name,
                source_name=source_name,
                abi=data["abi"],
                bytecode="0x" + data["evm"]["bytecode"]["object"],
                deployed_bytecode="0x" + data["evm"]["deployedBytecode"]["object"],
            )
    used = {k: v for k, v in output.get("sources", {}).items()}
    hashes = {}
    for name in sorted(used):
        path = root / name if (root / name).is_file() else root / "node_modules" / name
        if not path.is_file():
            path = _resolve_remapped(root, name)
        hashes[name] = _sha256(path)
    manifest = BuildManifest(
        solc_version=SOLC_VERSION,
        settings={k: v for k, v in COMPILER_SETTINGS.items() if k != "outputSelection"},
        sources=hashes,
        contracts=sorted(artifacts),
    )
    return artifacts, manifest


def _resolve_remapped(root: Path, name: str) -> Path:
    for mapping in REMAPPINGS:
        prefix, target = mapping.split("=", 1)
        if name.startswith(prefix):
            return root / (target + name[len(prefix) :])
    raise BuildError(f"cannot locate compiled source {name}")


def write_artifacts(
    artifacts: dict[str, Artifact], manifest: BuildManifest, out: Path = ARTIFACTS_DIR
) -> None:
    """Replace the artifact directory's contents with this build."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.json"):
        old.unlink()
    for name, art in artifacts.items():
        (out / f"{name}.json").write_text(json.dumps(art.model_dump(), indent=1, sort_keys=True) + "\n")
    (out / "manifest.json").write_text(json.dumps(manifest.model_dump(), indent=1, sort_keys=True) + "\n")


def build(root: Path | None = None, out: Path = ARTIFACTS_DIR) -> BuildManifest:
    artifacts, manifest = compile_contracts(root)
    write_artifacts(artifacts, manifest, out)
    return manifest


def stale_reasons(root: Path | None = None, out: Path = ARTIFACTS_DIR) -> list[str]:
    """Recompile and name every artifact that differs from the committed one."""
    artifacts, manifest = compile_contracts(root)
    reasons: list[str] = []
    committed = {p.stem for p in out.glob("*.json")} - {"manifest"}
    for missing in sorted(set(artifacts) - committed):
        reasons.append(f"{missing}: no committed artifact")
    for extra in sorted(committed - set(artifacts)):
        reasons.append(f"{extra}: artifact for a contract that no longer exists")
    for name in sorted(set(artifacts) & committed):
        old = Artifact.model_validate_json((out / f"{name}.json").read_text())
        if old.bytecode != artifacts[name].bytecode:
            reasons.append(f"{name}: bytecode differs")
        elif old.abi != artifacts[name].abi:
            reasons.append(f"{name}: ABI differs")
    return reasons
