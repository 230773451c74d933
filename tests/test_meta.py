"""Meta-tests: every command, option, check and operator is explained where users look."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from frayproof_audit.checks import CHECK_NAMES
from frayproof_audit.cli import main
from frayproof_audit.mutate import OPERATORS

ROOT = Path(__file__).resolve().parent.parent
CLI_DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = sorted(main.commands)


def test_the_product_commands_exist() -> None:
    assert {"validate", "check", "mutate", "audit", "stats"} <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_command_and_every_option_have_help(name: str) -> None:
    command = main.commands[name]
    assert command.help and len(command.help.split()) >= 5, name
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.help, f"{name} {param.opts}"


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_a_cli_reference_section_and_is_in_the_readme(name: str) -> None:
    assert f"\n## {name}\n" in CLI_DOC, f"docs/cli.md has no '## {name}' section"
    assert f"frayproof-audit {name}" in README, f"README.md never shows `frayproof-audit {name}`"


@pytest.mark.parametrize("name", CHECK_NAMES)
def test_every_check_is_documented(name: str) -> None:
    assert f"`{name}`" in (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", OPERATORS)
def test_every_operator_is_documented(name: str) -> None:
    assert name in (ROOT / "docs" / "mutation.md").read_text(encoding="utf-8")


def test_documented_test_sizes_are_the_tests_settings() -> None:
    """The numbers of generated cases the docs promise are the ones the tests run."""
    from tests import test_differential, test_mutation_differential, test_mutation_equivalence

    mutation_doc = (ROOT / "docs" / "mutation.md").read_text(encoding="utf-8")
    plain, shared = test_mutation_differential.RANDOM_CASES, test_mutation_differential.SHARED_CASES
    noisy, clean = test_mutation_equivalence.NOISY_EXAMPLES, test_mutation_equivalence.CLEAN_EXAMPLES
    flat = " ".join(mutation_doc.split())
    assert f"{plain + shared} generated cases, {plain} plain and {shared} whose output" in flat
    assert (f"{noisy + clean} drawn (session, output, contract) cases per run, {noisy} noisy "
            f"and {clean}") in flat
    assert (f"plus {test_mutation_equivalence.ARGUMENT_EXAMPLES} whose calls carry arguments "
            "under tool schemas") in flat
    assert (f"and {test_mutation_equivalence.REASONING_EXAMPLES} whose assistant turns carry "
            "thinking blocks or reasoning items") in flat
    readme = " ".join(README.split())
    assert f"on {test_differential.DEFAULT_COUNT} generated `validate`/`check` cases" in readme
    assert f"on {plain + shared} generated mutation cases" in readme
