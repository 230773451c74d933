"""Every ```console block in README.md and docs/*.md is a real transcript: run it, compare.

A block holds `$ frayproof-audit ...` lines, each followed by the exact stdout it prints.
An optional last line `[exit N]` after the output gives the exit code (default 0).
Non-deterministic output (timings, run ids) goes in ```text blocks, which are not run.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from frayproof_audit.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```console\n(.*?)```", re.DOTALL)
EXIT = re.compile(r"^\[exit (\d+)\]$")


def transcripts() -> list[tuple[str, str, str, int]]:
    found = []
    for document in DOCUMENTS:
        if not document.exists():
            continue
        for block in BLOCK.findall(document.read_text(encoding="utf-8")):
            command: str | None = None
            output: list[str] = []
            for line in [*block.splitlines(), "$ "]:
                if line.startswith("$ "):
                    if command is not None:
                        code = 0
                        if output and EXIT.match(output[-1]):
                            code = int(EXIT.match(output[-1]).group(1))  # type: ignore[union-attr]
                            output = output[:-1]
                        while output and not output[-1]:
                            output.pop()
                        found.append((document.name, command, "\n".join(output), code))
                    command, output = line[2:].strip() or None, []
                else:
                    output.append(line)
    return found


CASES = transcripts()


def test_readme_has_transcripts() -> None:
    assert any(name == "README.md" for name, *_ in CASES)


@pytest.mark.parametrize(("document", "command", "expected", "code"), CASES,
                         ids=[f"{c[0]}:{c[1][:60]}" for c in CASES])
def test_transcript(document: str, command: str, expected: str, code: int,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    words = shlex.split(command)
    if words[0] != "frayproof-audit":
        pytest.skip(f"not a frayproof-audit command: {words[0]}")
    result = CliRunner().invoke(main, words[1:])
    assert (result.stdout.rstrip("\n"), result.exit_code) == (expected, code), result.stderr
