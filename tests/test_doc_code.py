"""Every ```python block in README.md and docs/*.md runs, saved as a file, from a fresh checkout;
docs/capture.md's blocks also print what their `print(...)  # text` comments promise.

Each block is written to a file and run by this venv's Python in isolated mode (`-I`: neither
the working directory nor the script's folder is on `sys.path`, no PYTHON* variables), with
the working directory a scratch copy of what a checkout holds (`fixtures/`, `examples/`) plus
`audit-out/`, the dataset `frayproof-audit audit examples/corpus --contract
examples/audit_contract.yaml --out audit-out --no-mutate` writes. So a
block may read the repository's files by relative path but must import only installed packages
or put a folder on `sys.path` itself. Code that is not meant to run (an excerpt, a sketch) goes
in a ```text block instead, where nobody mistakes it for something tested.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def python_blocks() -> list[tuple[str, str]]:
    """(document:line, code) for every python block."""
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{document.relative_to(ROOT)}:{line}", match.group(1)))
    return found


KNOWN_FAILING: dict[tuple[str, str], str] = {
}
"""Blocks known to fail, by document and a snippet of their code. Strict: once such a block
runs, the test fails until its entry here is removed."""

BLOCKS = python_blocks()


def params() -> list[object]:
    out: list[object] = []
    for where, code in BLOCKS:
        document = where.rsplit(":", 1)[0]
        reasons = [why for (doc, snippet), why in KNOWN_FAILING.items()
                   if doc == document and snippet in code]
        marks = [pytest.mark.xfail(strict=True, reason=reasons[0])] if reasons else []
        out.append(pytest.param(where, code, id=where, marks=marks))
    return out


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("checkout")
    for folder in ("fixtures", "examples"):
        shutil.copytree(ROOT / folder, root / folder)
    made = subprocess.run(
        [sys.executable, "-m", "frayproof_audit", "audit", "examples/corpus", "--contract",
         "examples/audit_contract.yaml", "--out", "audit-out", "--no-mutate", "--jobs", "1", "-q",
         "--fail-on", "none"], cwd=root, capture_output=True, text=True, timeout=300, check=False)
    assert made.returncode == 0, made.stderr
    return root


def test_the_documents_have_python_blocks() -> None:
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize(("where", "code"), params())
def test_python_block_runs(where: str, code: str, checkout: Path, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, "-I", str(script)], cwd=checkout, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, f"{where} fails when run as a file:\n{done.stderr[-2000:]}"
    if where.startswith(PROMISING):
        printed = done.stdout.splitlines()
        for text in promised_output(code):
            assert text in printed, (where, text, printed)


PROMISING = "docs/capture.md:"
"""The document whose blocks promise what they print: `print(...)  # text` prints the line `text`
(the capture examples: what a writer wrote, what a guard returned)."""


def promised_output(code: str) -> list[str]:
    return [line.split("#", 1)[1].strip() for line in code.splitlines()
            if line.lstrip().startswith("print(") and "#" in line]


def test_the_capture_blocks_promise_output() -> None:
    """The check above has something to check: docs/capture.md's blocks (at least 9) promise
    their printed lines."""
    capture = [code for where, code in BLOCKS if where.startswith(PROMISING)]
    assert len(capture) >= 9
    assert sum(len(promised_output(code)) for code in capture) >= 9
