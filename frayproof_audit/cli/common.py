"""Options and error rendering shared by every command."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from frayproof_audit.cli.option_types import count
from frayproof_audit.formats import FORMAT_NAMES
from frayproof_audit.render import OUTPUTS, PLAIN_OUTPUTS
from frayproof_audit.report import EXIT_INPUT_ERROR, input_error_json

FORMAT_CHOICE = click.Choice(list(OUTPUTS), case_sensitive=True)
PLAIN_FORMAT_CHOICE = click.Choice(list(PLAIN_OUTPUTS), case_sensitive=True)


def input_format_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--input-format",
        "input_format",
        type=click.Choice(FORMAT_NAMES, case_sensitive=True),
        default=None,
        help="Wire format of the snapshots (default: the contract's `format`, else openai); "
             "in a corpus, a record's own `format` field wins.",
    )(function)


def contract_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--contract",
        "contract",
        type=click.Path(),
        default=None,
        help="YAML context contract. Without one: pairing, unique ids and structure, as errors.",
    )(function)


def _sarif_category(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from frayproof_audit.render.sarif import SarifCategoryError, sarif_category

    try:
        return sarif_category(value)
    except SarifCategoryError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


def format_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--format` with every output, and `--max-results` and `--sarif-category` for the CI ones."""
    function = click.option(
        "--sarif-category",
        "sarif_category",
        default=None,
        metavar="NAME",
        callback=_sarif_category,
        help="With --format sarif: the code-scanning category (automationDetails.id up to its "
             "last '/'; default frayproof-audit/COMMAND). Give each analysis uploaded for one "
             "commit its own, e.g. one per corpus.",
    )(function)
    function = click.option(
        "--max-results",
        "max_results",
        type=count(1),
        default=None,
        metavar="N",
        help="Cap for sarif results, github annotations or junit test cases, the most severe "
             "kept and the rest counted in a note (default: 25000 sarif, 50 github, 20000 junit).",
    )(function)
    return click.option(
        "--format",
        "output_format",
        type=FORMAT_CHOICE,
        default="text",
        show_default=True,
        help="text for people, json for machines; sarif (code scanning), github (workflow "
             "annotations) or junit (test reports) for CI. The exit code is the same for all.",
    )(function)


def sarif_category_for(output_format: str, sarif_category: str | None) -> str | None:
    """`--sarif-category`, refused with any other output than sarif (it would change nothing)."""
    if sarif_category is not None and output_format != "sarif":
        raise click.UsageError(f"--sarif-category applies to --format sarif only, not "
                               f"--format {output_format}.")
    return sarif_category


def plain_format_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--format",
        "output_format",
        type=PLAIN_FORMAT_CHOICE,
        default="text",
        show_default=True,
        help="text for people, json for machines.",
    )(function)


def fail_input(message: str, output_format: str, label: str = "INPUT ERROR") -> NoReturn:
    """Print an input error the way every command does, then exit 2 (`label` says whose fault:
    `OUTPUT ERROR` when the output folder cannot be used or written)."""
    if output_format == "json":
        click.echo(input_error_json(message))
    elif output_format == "github":
        from frayproof_audit.render.github import command

        click.echo(command("error", f"{label}: {message}", title="frayproof-audit"))
        click.echo(f"{label}: {message}", err=True)
    elif output_format in ("sarif", "junit"):  # a report to upload, even for a run that never ran
        from frayproof_audit.render.failure import failure_document

        context = click.get_current_context()
        name = context.info_name or "frayproof-audit"
        category = context.params.get("sarif_category")
        click.echo(failure_document(output_format, name, label, message, EXIT_INPUT_ERROR, category))
        click.echo(f"{label}: {message}", err=True)
    else:
        click.echo(f"{label}: {message}", err=True)
    sys.exit(EXIT_INPUT_ERROR)


def parse_operator_list(text: str | None) -> tuple[str, ...] | None:
    """`--operators a,b` → ("a", "b"); None (the option not given) means every operator.

    Blank items are dropped, so "a,,b," is ("a", "b") and "" is (): the caller says why that is
    not allowed, because it knows which operators exist.
    """
    if text is None:
        return None
    return tuple(name.strip() for name in text.split(",") if name.strip())
