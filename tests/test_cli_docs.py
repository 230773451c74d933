"""docs/cli.md cannot drift from the commands: its `--help` regions are generated, and each
command's hand-written synopsis names every option the command has."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import click
import pytest
from click.testing import CliRunner

from frayproof_audit.cli import main
from tests.helpers import load_module

ROOT = Path(__file__).resolve().parent.parent
CLI_DOC = ROOT / "docs" / "cli.md"


def _generator() -> ModuleType:
    return load_module(ROOT / "scripts" / "gen_cli_docs.py")


GENERATOR = _generator()


def test_cli_reference_matches_the_commands_help() -> None:
    current = CLI_DOC.read_text(encoding="utf-8")
    assert GENERATOR.render(current) == current, (
        "docs/cli.md no longer matches the commands' --help (an option or help text was added or "
        "changed, e.g. a new --input-format): run `make docs` (python scripts/gen_cli_docs.py), "
        "review the diff, describe the option in the prose and synopsis if needed, and commit")


@pytest.mark.parametrize("words", [[], *([name] for name in sorted(main.commands))], ids=repr)
def test_generated_regions_are_the_real_help_output(words: list[str]) -> None:
    """What the generator writes is what `--help` prints (at the generator's width)."""
    result = CliRunner().invoke(main, [*words, "--help"], prog_name="frayproof-audit",
                                terminal_width=GENERATOR.WIDTH)
    assert result.exit_code == 0
    assert GENERATOR.help_text(words) == result.stdout.rstrip("\n")


def test_a_command_without_a_region_is_reported() -> None:
    without = GENERATOR.REGION.sub("", CLI_DOC.read_text(encoding="utf-8"), count=1)
    with pytest.raises(SystemExit, match="no generated region"):
        GENERATOR.render(without)


def synopsis(name: str) -> str:
    """The first text block of the command's section: its hand-written synopsis."""
    section = CLI_DOC.read_text(encoding="utf-8").split(f"\n## {name}\n", 1)[1]
    found = re.search(r"```text\n(.*?)```", section, re.DOTALL)
    assert found, f"docs/cli.md: '## {name}' has no synopsis block"
    return found.group(1)


@pytest.mark.parametrize("name", sorted(main.commands))
def test_synopsis_names_every_option(name: str) -> None:
    text = synopsis(name)
    for param in main.commands[name].params:
        if isinstance(param, click.Option) and param.name != "help":
            spellings = [*param.opts, *param.secondary_opts]
            missing = [s for s in spellings if not re.search(rf"{re.escape(s)}(?![\w-])", text)]
            assert not missing, f"docs/cli.md synopsis of {name} lacks {missing}: add them by hand"
