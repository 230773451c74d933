"""Options shared by the commands that read a dataset back (`stats`, `trend`, `report`): which
rows (`--run`, `--since`, `--until`, `--compactor`, `--contract`), which failures count
(`--blame`, `audit`'s too), the table output (`--format`, from `render.tables.TABLE_OUTPUTS`),
and writing a result to `--output`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import date, datetime
from typing import Any, NoReturn

import click

from frayproof_audit.cli.choices import RegistryChoice
from frayproof_audit.cli.common import fail_input
from frayproof_audit.corpus.store.failure_rule import BLAMES, DEFAULT_BLAME
from frayproof_audit.files import write_through
from frayproof_audit.render.tables import TABLE_OUTPUTS, TableOutput, Tabular, table_aliases
from frayproof_audit.report import EXIT_INPUT_ERROR

TABLE_FORMAT_CHOICE = RegistryChoice(lambda: TABLE_OUTPUTS, table_aliases)


def table_format_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--format` of a table command: one of `TABLE_OUTPUTS` (`table` still means `text`)."""
    return click.option(
        "--format", "output_format", type=TABLE_FORMAT_CHOICE, default="text", show_default=True,
        help="text for people (also spelled table, its former name); json, csv or parquet for "
             "machines (parquet needs --output).")(function)


def table_output(output_format: str, output: str | None) -> TableOutput:
    """The chosen table output; one that writes bytes needs `--output` (else exit 2)."""
    chosen = TABLE_OUTPUTS[output_format]
    if chosen.write is not None and output is None:
        fail_input(f"--format {chosen.name} needs --output FILE", chosen)
    return chosen


def show_table(chosen: TableOutput, result: Tabular, output: str | None) -> None:
    """`result` in the chosen output, on stdout or in `output`."""
    if chosen.write is not None:
        assert output is not None  # `table_output` refused it
        try:
            with open(output, "wb") as handle:  # a file object: never a URI for Polars
                chosen.write(result, handle)
        except OSError as exc:
            cannot_write(output, exc)
        return
    assert chosen.text is not None
    text = chosen.text(result)
    if output is None:
        click.echo(text.rstrip("\n"))
        return
    write_output(output, text)


def show_notes(chosen: TableOutput, notes: tuple[str, ...]) -> None:
    """What the selection left out, on stderr beside an output that cannot hold it (csv,
    parquet: plain tables); text and json say it themselves."""
    if not chosen.verdict:
        for note in notes:
            click.echo(f"note: {note}", err=True)


def selection_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--run`, `--since`, `--until`, `--compactor`, `--contract` (`--run` and `--compactor`
    repeatable)."""
    day = click.DateTime(formats=["%Y-%m-%d"])
    for decorator in reversed([
        click.option("--run", "runs", multiple=True, metavar="RUN_ID",
                     help="Only this run (repeatable)."),
        click.option("--since", type=day, default=None, metavar="DAY",
                     help="Only rows with log_date on or after this day (YYYY-MM-DD)."),
        click.option("--until", type=day, default=None, metavar="DAY",
                     help="Only rows with log_date on or before this day (YYYY-MM-DD)."),
        click.option("--compactor", "compactors", multiple=True, metavar="NAME",
                     help="Only pairs of this compactor (repeatable)."),
        click.option("--contract", "contract", default=None, metavar="FINGERPRINT|latest|all",
                     help="Which contract's runs count: latest (the default: the contract of the "
                          "newest selected run), a fingerprint (or 4+ of its first digits), or all "
                          "(every run, added up). Runs left out are named in one line."),
    ]):
        function = decorator(function)
    return function


def blame_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--blame introduced|all`: which failing pairs count as the compactor's failures."""
    return click.option(
        "--blame", type=click.Choice(BLAMES), default=str(DEFAULT_BLAME), show_default=True,
        help="introduced: a failing pair counts only when the compactor introduced an error "
             "(not one its before already held), and only introduced findings count for a "
             "check; all: every failing pair and finding, frayproof's reading.")(function)


def as_day(value: datetime | None) -> date | None:
    return None if value is None else value.date()


def write_output(output: str, content: str | bytes) -> None:
    """Write `content` to `output` (text gets a final newline) through `write_through`: a file
    is replaced atomically, a link, FIFO or device written into; a failure is exit 2."""
    try:
        if isinstance(content, str):
            content = (content if content.endswith("\n") else content + "\n").encode("utf-8")
        write_through(output, content)
    except OSError as exc:
        cannot_write(output, exc)


def cannot_write(output: str, exc: OSError) -> NoReturn:
    click.echo(f"INPUT ERROR: cannot write '{output}': {exc.strerror or exc}", err=True)
    sys.exit(EXIT_INPUT_ERROR)
