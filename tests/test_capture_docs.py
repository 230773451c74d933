"""docs/capture.md: every ```python block runs, in one fresh interpreter (the frameworks are
imported once), each block in a scratch copy of a checkout, and every `print(...)  # text`
prints that text. (`test_doc_code` runs the blocks too, one interpreter each, against the
installed package; this checks what they promise.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

DOC = REPO / "docs" / "capture.md"

RUNNER = """
import contextlib, io, json, os, sys
blocks = json.loads(open(sys.argv[1], encoding="utf-8").read())
outputs = []
for index, code in enumerate(blocks):
    os.chdir(os.path.join(sys.argv[2], f"block-{index}"))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"docs/capture.md[{index}]", "exec"), {"__name__": "docs_example"})
    outputs.append(printed.getvalue().splitlines())
print(json.dumps(outputs))
"""


def blocks() -> list[str]:
    found, current, inside = [], [], False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line == "```python":
            inside, current = True, []
        elif line == "```" and inside:
            inside = False
            found.append("\n".join(current))
        elif inside:
            current.append(line)
    return found


def test_the_capture_examples_run_and_print_what_they_promise(tmp_path: Path) -> None:
    pytest.importorskip("langchain.agents")
    pytest.importorskip("agents")
    code = blocks()
    assert len(code) >= 9
    for index in range(len(code)):
        for folder in ("fixtures", "examples"):
            shutil.copytree(REPO / folder, tmp_path / f"block-{index}" / folder)
    (tmp_path / "blocks.json").write_text(json.dumps(code), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", RUNNER, str(tmp_path / "blocks.json"), str(tmp_path)],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    outputs = json.loads(done.stdout.splitlines()[-1])
    for block, lines in zip(code, outputs, strict=True):
        promised = [line.split("#", 1)[1].strip() for line in block.splitlines()
                    if line.lstrip().startswith("print(") and "#" in line]
        for text in promised:
            assert text in lines, (text, lines, block[:200])
