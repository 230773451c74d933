"""Write every command's `--help` into docs/cli.md, so the reference cannot drift (`make docs`).

docs/cli.md is hand-written prose with generated regions, one per command plus one for the
program itself:

    <!-- BEGIN GENERATED: frayproof-audit validate --help -->
    ...the exact help text, in a text block...
    <!-- END GENERATED -->

This script rewrites the inside of each region from the commands' own click definitions
(rendered 78 columns wide, as an 80-column terminal shows them) and leaves everything else
alone. A command without a region is an error, so a new command cannot go undocumented.
`--check` only reports whether the file is up to date (exit 1 if not); the test suite runs
the same comparison.

    python scripts/gen_cli_docs.py [--check] [PATH]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/ is no package

import click
from generated_region import rewrite

from frayproof_audit.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent
CLI_DOC = ROOT / "docs" / "cli.md"
PROGRAM = "frayproof-audit"
WIDTH = 78
REGION = re.compile(
    r"(?P<begin><!-- BEGIN GENERATED: frayproof-audit (?P<words>[\w -]*?) ?--help -->\n)"
    r"(?P<body>.*?)"
    r"(?P<end><!-- END GENERATED -->)",
    re.DOTALL,
)


def help_text(words: list[str]) -> str:
    """The help `frayproof-audit WORDS... --help` prints, at a fixed width."""
    command: click.Command = cli
    context = click.Context(cli, info_name=PROGRAM, terminal_width=WIDTH, max_content_width=WIDTH,
                            **cli.context_settings)  # e.g. `-h` as a help option
    for word in words:  # a child context inherits width and help options
        assert isinstance(command, click.Group)
        command = command.commands[word]
        context = click.Context(command, info_name=word, parent=context, **command.context_settings)
    return command.get_help(context)


def region_body(words: list[str]) -> str:
    # No `$ command` line: text blocks that start with one are stderr transcripts, which
    # tests/test_cli_single.py runs; the region's marker names the command instead.
    return f"```text\n{help_text(words)}\n```\n"


def render(document: str) -> str:
    """`document` with every generated region rewritten from the current commands."""
    seen: set[str] = set()

    def fill(match: re.Match[str]) -> str:
        words = match["words"].split()
        seen.add(" ".join(words))
        return match["begin"] + region_body(words) + match["end"]

    rendered = REGION.sub(fill, document)
    missing = [name for name in ["", *sorted(cli.commands)] if name not in seen]
    if missing:
        names = ", ".join(f"`{PROGRAM} {name} --help`".replace("  ", " ") for name in missing)
        raise SystemExit(f"docs/cli.md has no generated region for {names}: add "
                         f"'<!-- BEGIN GENERATED: {PROGRAM} NAME --help -->' ... "
                         "'<!-- END GENERATED -->' where it belongs")
    return rendered


def main(argv: list[str] | None = None) -> int:
    return rewrite(argv, __doc__.splitlines()[0], CLI_DOC, render, "--help regions")


if __name__ == "__main__":
    sys.exit(main())
