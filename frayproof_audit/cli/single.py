"""`validate` and `check`: one snapshot, or one before/after pair."""

from __future__ import annotations

import sys

import click

from frayproof_audit.cli.common import (
    contract_option,
    fail_input,
    format_option,
    input_format_option,
    sarif_category_for,
)
from frayproof_audit.engine import check, validate
from frayproof_audit.errors import InputError
from frayproof_audit.render import RenderContext, render
from frayproof_audit.report import Report
from frayproof_audit.shown import read_shown


def _render(report: Report, output_format: str, context: RenderContext) -> None:
    click.echo(render(report, output_format, read_shown(report, output_format, context)))
    sys.exit(report.exit_code)


@click.command("validate")
@click.option("--snapshot", "snapshot", required=True, type=click.Path(),
              help="JSON file holding one message list (see --input-format).")
@contract_option
@input_format_option
@format_option
def validate_command(
    snapshot: str, contract: str | None, input_format: str | None, output_format: str,
    max_results: int | None, sarif_category: str | None,
) -> None:
    """Check one snapshot: tool-call pairing, unique ids and structure.

    \b
    Example:
        frayproof-audit validate --snapshot fixtures/clean_session.json
    """
    category = sarif_category_for(output_format, sarif_category)
    try:
        report = validate(snapshot, contract, input_format=input_format)
    except InputError as exc:
        fail_input(str(exc), output_format)
    context = RenderContext({"after": snapshot}, snapshot, contract, max_results, "validate",
                            category)
    _render(report, output_format, context)


@click.command("check")
@click.option("--before", "before", required=True, type=click.Path(),
              help="JSON file with the message list before the transformation.")
@click.option("--after", "after", required=True, type=click.Path(),
              help="JSON file with the message list the transformation produced.")
@contract_option
@input_format_option
@format_option
def check_command(
    before: str, after: str, contract: str | None, input_format: str | None, output_format: str,
    max_results: int | None, sarif_category: str | None,
) -> None:
    """Check a before/after pair: the after snapshot, pins and retention rules.

    \b
    Example:
        frayproof-audit check --before fixtures/clean_session.json \\
            --after fixtures/dropped_constraint.json --contract examples/contract.yaml
    """
    category = sarif_category_for(output_format, sarif_category)
    try:
        report = check(before, after, contract, input_format=input_format)
    except InputError as exc:
        fail_input(str(exc), output_format)
    context = RenderContext({"before": before, "after": after}, after, contract, max_results,
                            sarif_category=category)
    _render(report, output_format, context)
