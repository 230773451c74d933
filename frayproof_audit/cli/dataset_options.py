"""Options shared by the commands that read a dataset back (`stats`, `trend`): which rows
(`--run`, `--since`, `--until`, `--compactor`), and writing a result to `--output`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import date, datetime
from typing import Any, NoReturn

import click

from frayproof_audit.files import write_through
from frayproof_audit.report import EXIT_INPUT_ERROR

OUTPUT_FORMATS = ("table", "json", "csv", "parquet")


def selection_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """`--run`, `--since`, `--until`, `--compactor` (the first and last repeatable)."""
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
    ]):
        function = decorator(function)
    return function


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
