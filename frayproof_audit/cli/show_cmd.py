"""`show`: one pair's before and after aligned, with its findings marked, in the terminal."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from frayproof_audit.cli.common import contract_option, fail_input, input_format_option
from frayproof_audit.errors import InputError

if TYPE_CHECKING:
    from frayproof_audit.pairview.text import TextOptions


def _colour(choice: bool | None) -> bool:
    """Colour when asked, else when stdout is a terminal and `NO_COLOR` is not set."""
    if choice is not None:
        return choice
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


@click.command("show")
@click.argument("out", required=False, type=click.Path())
@click.argument("pair_id", required=False)
@click.option("--run", "run_id", default=None, metavar="RUN_ID",
              help="The run whose pair to show (default: the latest run holding PAIR_ID).")
@click.option("--before", "before", default=None, type=click.Path(),
              help="Instead of OUT PAIR_ID: a snapshot file, judged here with --after.")
@click.option("--after", "after", default=None, type=click.Path(),
              help="The snapshot the compaction produced (with --before).")
@contract_option
@input_format_option
@click.option("--source-root", "root", default=None, type=click.Path(file_okay=False),
              help="Folder the dataset's relative source paths are found in (default: the "
                   "current folder, where the audit was run).")
@click.option("--full", is_flag=True, default=False,
              help="Every message and every character (no folded stretches, no cut texts).")
@click.option("--mutate/--no-mutate", "mutate", default=True, show_default=True,
              help="With --before/--after: run mutation testing on a passing pair and show the "
                   "mutants that survive.")
@click.option("--color/--no-color", "color", default=None,
              help="Colour the output (default: when stdout is a terminal and NO_COLOR is unset).")
def show_command(out: str | None, pair_id: str | None, run_id: str | None, before: str | None,
                 after: str | None, contract: str | None, input_format: str | None, root: str | None,
                 full: bool, mutate: bool, color: bool | None) -> None:
    """Show one pair: before and after aligned, every finding marked where it is.

    `show OUT PAIR_ID` reads the pair's findings and surviving mutants from the audit dataset
    OUT and its messages back from the input it was audited from (checked against the
    recorded SHA-256: a changed input is said, never shown). `show --before B --after A`
    judges two snapshot files with the contract and shows them the same way.

    Exit codes: OUT PAIR_ID: 0 shown, 2 no such pair, or its input is gone or changed (its
    findings are still printed). --before/--after: 0 pass, 1 fail, 2 bad input.

    \b
    Examples:
        frayproof-audit show audit-out p0042
        frayproof-audit show --before before.json --after after.json --contract contract.yaml
    """
    from frayproof_audit.pairview.text import TextOptions  # only this command pays for the view

    options = TextOptions(color=_colour(color), full=full)
    if before is not None or after is not None:
        if before is None or after is None or out is not None:
            fail_input("give --before and --after together, and no OUT or PAIR_ID with them", "text")
        _judged(before, after, contract, input_format, mutate, options)
    if out is None or pair_id is None:
        fail_input("give OUT and PAIR_ID (a pair of an audit dataset), or --before and --after", "text")
    if contract is not None or input_format is not None:
        fail_input("--contract and --input-format go with --before/--after: a stored pair was judged "
                   "by its run's contract, in its recorded format", "text")
    from frayproof_audit.pairview.stored import show_stored
    from frayproof_audit.pairview.text import render_shown

    try:
        result = show_stored(out, pair_id, run_id, root)
    except InputError as exc:
        fail_input(str(exc), "text")
    if len(result.shown) > 1:
        click.echo(f"note: run {result.shown[0].pair.run_id} holds {len(result.shown)} records with pair id "
                   f"{pair_id!r}; each is shown, with the findings of all of them", err=True)
    for number, shown in enumerate(result.shown):
        if number:
            click.echo()
        click.echo(render_shown(shown, options), nl=False, color=options.color)
        if shown.state not in ("found", "not judged"):
            click.echo(f"error: the messages of {pair_id!r} cannot be shown: {shown.notice}", err=True)
    sys.exit(result.exit_code)


def _judged(before: str, after: str, contract: str | None, input_format: str | None, mutate: bool,
            options: TextOptions) -> None:
    from frayproof_audit.pairview.judged import judge_files
    from frayproof_audit.pairview.text import render_view

    try:
        judged = judge_files(before, after, contract, input_format, mutate=mutate)
    except InputError as exc:
        fail_input(str(exc), "text")
    report = judged.report
    verdict = "PASS" if report.passed else "FAIL"
    mutants = "" if judged.mutants is None else (
        f" · {len(judged.view.survivors)} of {judged.mutants} mutant(s) survived")
    title = [f"{before} → {after}",
             f"  {verdict}: {report.errors} error(s), {report.warnings} warning(s) · format "
             f"{judged.format}{mutants}"]
    click.echo(render_view(judged.view, title, options), nl=False, color=options.color)
    sys.exit(report.exit_code)
