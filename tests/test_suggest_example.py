"""docs/suggest.md stays true: the worked example's output is what `examples/suggest_contract.py`
prints, the committed contract is what it writes, and the page's Python blocks print what their
comments say (run with this checkout on the path, as `tests/test_doc_code.py` runs them from an
installed copy)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from frayproof_audit.contract import load_contract
from tests.helpers import REPO

DOC = (REPO / "docs" / "suggest.md").read_text(encoding="utf-8")
COMMAND = "python examples/suggest_contract.py"


def _documented_output() -> list[str]:
    match = re.search(r"```text\n\$ " + re.escape(COMMAND) + r"\n(.*?)```", DOC, re.DOTALL)
    assert match, "docs/suggest.md has no output block for the example"
    return match.group(1).rstrip("\n").splitlines()


def test_the_example_prints_what_the_docs_show_and_its_contract_is_committed() -> None:
    done = subprocess.run([sys.executable, "examples/suggest_contract.py", "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip("\n").splitlines() == _documented_output()
    contract = load_contract(str(REPO / "examples" / "suggested_contract.yaml"))
    assert contract.retain.recent_exchanges == 2 and len(contract.tools) == 8


def test_the_yaml_excerpt_is_the_committed_contract() -> None:
    excerpts = re.findall(r"```yaml\n(.*?)```", DOC, re.DOTALL)
    committed = (REPO / "examples" / "suggested_contract.yaml").read_text(encoding="utf-8")
    assert excerpts and all(excerpt in committed for excerpt in excerpts)


def _expected(code: str) -> list[str]:
    """The output a block's comments promise: `print(...)  # out`, or `# out` lines right after
    a line that prints."""
    expected: list[str] = []
    printing = False
    for line in code.splitlines():
        stripped = line.strip()
        if stripped.startswith("# "):
            if printing:
                expected.append(stripped[2:])
            continue
        printing = "print(" in line
        if printing and "  # " in line:
            expected.append(line.split("  # ", 1)[1])
    return expected


@pytest.mark.parametrize("code", re.findall(r"^```python\n(.*?)^```", DOC, re.DOTALL | re.MULTILINE))
def test_the_python_blocks_print_what_they_say(code: str, tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == _expected(code)
