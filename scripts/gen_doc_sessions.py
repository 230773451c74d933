"""Rewrite the output of every ```console session block of README.md and docs/*.md by running
its commands, in order, in a scratch copy of `fixtures/` and `examples/`, as
`tests/test_doc_sessions.py` checks them (`[exit N]` after a non-zero exit).

    python scripts/gen_doc_sessions.py [FILE ...]   # default: README.md and docs/*.md

Run it after a change that alters what a documented command prints, then read the diff: a
transcript that changed is a behaviour that changed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from frayproof_audit.cli import main as cli  # noqa: E402

BLOCK = re.compile(r"```console session\n(.*?)```", re.DOTALL)


def run_block(body: str) -> str:
    """The block's commands, each followed by what it prints now."""
    commands = [line[2:] for line in body.splitlines() if line.startswith("$ ")]
    written: list[str] = []
    with tempfile.TemporaryDirectory(prefix="doc-session-") as scratch:
        for folder in ("fixtures", "examples"):
            shutil.copytree(ROOT / folder, Path(scratch) / folder)
        here = os.getcwd()
        os.chdir(scratch)
        try:
            for command in commands:
                words = shlex.split(command)
                result = CliRunner().invoke(cli, words[1:])
                written.append(f"$ {command}")
                output = result.stdout.rstrip("\n")
                if output:
                    written.append(output)
                if result.exit_code:
                    written.append(f"[exit {result.exit_code}]")
        finally:
            os.chdir(here)
    return "\n".join(written) + "\n"


def main(argv: list[str]) -> int:
    documents = [Path(name) for name in argv] or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for document in documents:
        text = document.read_text(encoding="utf-8")
        new = BLOCK.sub(lambda match: f"```console session\n{run_block(match.group(1))}```", text)
        if new != text:
            document.write_text(new, encoding="utf-8")
            print(f"rewrote the console sessions of {document}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
