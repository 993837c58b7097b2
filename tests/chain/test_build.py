"""The contract build: committed artifacts are fresh, staleness is detected, and the solc
wrapper gives py-solc-x and forge the same answers."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from trustnode.chain.build import COMPILER_SETTINGS, SOLC_VERSION, Artifact, compile_contracts, stale_reasons

pytestmark = pytest.mark.chain


def test_committed_artifacts_are_not_stale(repo_root: Path) -> None:
    reasons = stale_reasons(repo_root)
    assert reasons == [], "run `trustnode contracts build` and commit the artifacts: " + "; ".join(reasons)


def _copy_repo(repo_root: Path, dest: Path) -> Path:
    shutil.copytree(repo_root / "contracts", dest / "contracts")
    shutil.copy(repo_root / "package.json", dest / "package.json")
    (dest / "scripts").mkdir()
    shutil.copy(repo_root / "scripts" / "solc", dest / "scripts" / "solc")
    (dest / "node_modules").symlink_to(repo_root / "node_modules")
    return dest


def test_stale_artifacts_are_detected(repo_root: Path, tmp_path: Path) -> None:
    root = _copy_repo(repo_root, tmp_path)
    out = tmp_path / "artifacts"
    shutil.copytree(repo_root / "src" / "trustnode" / "chain" / "artifacts", out)
    assert stale_reasons(root, out) == []
    token = root / "contracts" / "src" / "TrustToken.sol"
    token.write_text(token.read_text().replace('"TRUST"', '"TRST"'))
    reasons = stale_reasons(root, out)
    assert any(r.startswith("TrustToken:") for r in reasons), reasons
    (root / "contracts" / "src" / "Extra.sol").write_text(
        "// SPDX-License-Identifier: Apache-2.0\npragma solidity 0.8.28;\ncontract Extra { uint256 public x; }\n"
    )
    assert "Extra: no committed artifact" in stale_reasons(root, out)


def test_compile_error_is_reported(repo_root: Path, tmp_path: Path) -> None:
    from trustnode.chain.build import BuildError

    root = _copy_repo(repo_root, tmp_path)
    (root / "contracts" / "src" / "Broken.sol").write_text(
        "pragma solidity 0.8.28; contract Broken { uint x = ; }"
    )
    with pytest.raises(BuildError, match="Broken.sol"):
        compile_contracts(root)


def test_wrapper_version_is_understood_by_py_solc_x(repo_root: Path) -> None:
    from solcx.wrapper import get_solc_version

    assert str(get_solc_version(repo_root / "scripts" / "solc")) == SOLC_VERSION
    full = get_solc_version(repo_root / "scripts" / "solc", with_commit_hash=True)
    assert str(full).startswith(SOLC_VERSION + "+commit.")


def test_wrapper_stdout_is_clean_json(repo_root: Path) -> None:
    src = "// SPDX-License-Identifier: MIT\npragma solidity 0.8.28;\ncontract A { function f() external pure returns (uint) { return 1; } }"
    req = {
        "language": "Solidity",
        "sources": {"A.sol": {"content": src}},
        "settings": {"outputSelection": {"*": {"*": ["abi"]}}},
    }
    out = subprocess.run(
        [str(repo_root / "scripts" / "solc"), "--standard-json"],
        input=json.dumps(req),
        capture_output=True,
        text=True,
        check=True,
    )
    parsed = json.loads(out.stdout)
    assert parsed["contracts"]["A.sol"]["A"]["abi"][0]["name"] == "f"


def test_forge_and_py_solc_x_give_identical_bytecode(repo_root: Path, tmp_path: Path) -> None:
    """forge (through the wrapper) and our py-solc-x build agree byte for byte."""
    forge = repo_root / "node_modules" / ".bin" / "forge"
    out_dir, cache_dir = tmp_path / "out", tmp_path / "cache"
    res = subprocess.run(
        [
            str(forge),
            "build",
            "--out",
            str(out_dir),
            "--cache-path",
            str(cache_dir),
            "--skip",
            "test",
            "--skip",
            "script",
        ],
        cwd=repo_root,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    artifacts, _ = compile_contracts(repo_root)
    assert COMPILER_SETTINGS["evmVersion"] == "cancun"
    for name in ("TrustToken",):
        forge_art = json.loads((out_dir / "TrustToken.sol" / f"{name}.json").read_text())
        ours: Artifact = artifacts[name]
        assert forge_art["bytecode"]["object"] == ours.bytecode
        assert forge_art["deployedBytecode"]["object"] == ours.deployed_bytecode


def test_the_solc_wrapper_compiles_an_input_larger_than_the_compilers_stack(repo_root: Path) -> None:
    """solc-js copies its standard-JSON input onto the compiler's fixed WebAssembly stack; a cold
    forge build of the whole tree (164 files, stop 23) overflowed it with "RuntimeError: memory
    access out of bounds". The wrapper passes source texts through the import callback instead;
    a 3 MB source (which crashed the old wrapper) must compile and name its error-free output."""
    filler = ("// " + "x" * 97 + "\n") * 30_000
    source = (
        "// SPDX-License-Identifier: Apache-2.0\npragma solidity 0.8.28;\n"
        + filler
        + "contract Big { function one() external pure returns (uint256) { return 1; } }\n"
    )
    request = {
        "language": "Solidity",
        "sources": {"big.sol": {"content": source}},
        "settings": {"outputSelection": {"*": {"*": ["abi", "evm.bytecode.object"]}}},
    }
    done = subprocess.run(
        [str(repo_root / "scripts" / "solc"), "--standard-json"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    errors = [e for e in out.get("errors", []) if e["severity"] == "error"]
    assert errors == [], errors
    assert out["contracts"]["big.sol"]["Big"]["evm"]["bytecode"]["object"], "no bytecode"


def _forge_fmt_check(repo_root: Path, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(repo_root / "scripts" / "forge"), "fmt", "--check", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_make_runs_forge_with_its_exit_status(repo_root: Path, tmp_path: Path) -> None:
    """The npm shim `node_modules/.bin/forge` exited 0 whatever forge returned, so `make test`
    passed with failing forge tests (stop 23 found four). The Makefile runs `scripts/forge`,
    which must hand forge's failure back: `fmt --check` of an unformatted file exits 1."""
    makefile = (repo_root / "Makefile").read_text()
    assert "\nFORGE := scripts/forge\n" in makefile, "make must not use the npm shim"
    messy = tmp_path / "Messy.sol"
    messy.write_text("pragma solidity 0.8.28;\ncontract   Messy{ }\n")
    done = _forge_fmt_check(repo_root, messy)
    assert done.returncode == 1, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    assert "Diff in" in done.stdout
    messy.write_text("pragma solidity 0.8.28;\n\ncontract Messy {}\n")
    clean = _forge_fmt_check(repo_root, messy)
    assert clean.returncode == 0, clean.stdout[-500:]
