"""Every ```console session block in README.md and docs/*.md is a real transcript, run in order.

`tests/test_readme.py` runs each command of a ```console block on its own, in the repository,
so its commands must only read. A block fenced ```console session holds commands that build
on each other (`audit --out` writes a dataset that `stats` then reads): its commands run in
order, in a scratch copy of what a checkout holds (`fixtures/`, `examples/`), each compared
with its stdout and exit code (the `[exit N]` convention of test_readme.py). The one figure
that differs from run to run, the duration `audit` prints (`in 0.0s`), is compared as a
number of seconds, whatever its value.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from frayproof_audit.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```console session\n(.*?)```", re.DOTALL)
EXIT = re.compile(r"^\[exit (\d+)\]$")
DURATION = re.compile(r" in \d+(\.\d+)?s ")


def sessions() -> list[tuple[str, list[tuple[str, str, int]]]]:
    """(document:line, [(command, stdout, exit code), ...]) per session block."""
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            steps: list[tuple[str, str, int]] = []
            command: str | None = None
            output: list[str] = []
            for line in [*match.group(1).splitlines(), "$ "]:
                if not line.startswith("$ "):
                    output.append(line)
                    continue
                if command is not None:
                    code = 0
                    if output and (exit_line := EXIT.match(output[-1])):
                        code, output = int(exit_line.group(1)), output[:-1]
                    while output and not output[-1]:
                        output.pop()
                    steps.append((command, "\n".join(output), code))
                command, output = line[2:].strip() or None, []
            where = f"{document.name}:{text.count(chr(10), 0, match.start()) + 1}"
            found.append((where, steps))
    return found


SESSIONS = sessions()


def test_there_are_session_blocks() -> None:
    assert any(name.startswith("formats.md") for name, _ in SESSIONS)


@pytest.mark.parametrize(("where", "steps"), SESSIONS, ids=[where for where, _ in SESSIONS])
def test_session(where: str, steps: list[tuple[str, str, int]], tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in ("fixtures", "examples"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    for command, expected, code in steps:
        words = shlex.split(command)
        assert words[0] == "frayproof-audit", f"{where}: not a frayproof-audit command"
        result = CliRunner().invoke(main, words[1:])
        got = DURATION.sub(" in Ns ", result.stdout.rstrip("\n"))
        assert (got, result.exit_code) == (DURATION.sub(" in Ns ", expected), code), (
            f"{where}: {command}\n{result.stderr}")
