"""Load the compiled artifacts shipped in the package."""

from __future__ import annotations

from functools import cache

from trustnode.chain.build import Artifact
from trustnode.chain.paths import ARTIFACTS_DIR, INSTALL_HINT


class ArtifactNotFoundError(LookupError):
    pass


@cache
def load_artifact(name: str) -> Artifact:
    path = ARTIFACTS_DIR / f"{name}.json"
    if not path.is_file():
        raise ArtifactNotFoundError(
            f"no compiled artifact for {name!r} in {ARTIFACTS_DIR}; "
            f"run `trustnode contracts build` ({INSTALL_HINT})"
        )
    return Artifact.model_validate_json(path.read_text())


def all_artifacts() -> dict[str, Artifact]:
    return {
        p.stem: load_artifact(p.stem) for p in sorted(ARTIFACTS_DIR.glob("*.json")) if p.stem != "manifest"
    }
