"""README stays true: every setting documented, the two commands present, CI runs the test command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


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
