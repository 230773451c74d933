"""`inspect`, `repair` and `compact`: transcript tools over files, folders and JSONL.

Results and diagnostics are kept apart so stdout pipes: `repair` and `compact` write the new
transcript to stdout (or `-o OUT`), and their account of changes to stderr (to stdout when
the transcript goes to a file).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from frayproof_audit.formats import FORMAT_NAMES
from frayproof_audit.report import EXIT_INPUT_ERROR
from frayproof_audit.transcript.batch import FileRun, compact_file, inspect_paths, repair_file
from frayproof_audit.transcript.sources import write_atomic
from frayproof_audit.transcript.tokens import (
    TokenCounter,
    TokenizerUnavailable,
    approximate_tokens,
    tiktoken_counter,
)

TOKENIZERS = ("chars", "tiktoken")


def _input_format(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--input-format", "input_format", type=click.Choice(FORMAT_NAMES, case_sensitive=True),
        default=None,
        help="Wire format of the transcripts (default: auto, openai or anthropic from each "
             "transcript's own evidence); a JSONL record's own `format` field wins.")(function)


def _output_format(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--format", "output_format", type=click.Choice(["text", "json"]),
                        default="text", show_default=True,
                        help="text for people, json for machines.")(function)


def _output(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default=None,
                        help="Write the new transcript here (atomically) instead of to "
                             "stdout.")(function)


@click.command("inspect")
@click.argument("paths", nargs=-1, required=True)
@_input_format
@_output_format
def inspect_command(paths: tuple[str, ...], input_format: str | None, output_format: str) -> None:
    """Name every defect of each transcript: FATAL (a provider would reject it) or WASTEFUL.

    PATHS are .json files (one transcript), .jsonl files (one transcript, or a corpus record
    whose `after` is inspected, per line) and folders (every .json and .jsonl file under
    them). Exit 0 every transcript valid (WASTEFUL defects only warn), 1 a FATAL defect,
    2 an input that could not be read (a run where nothing could be read never passes).

    \b
    Example:
        frayproof-audit inspect fixtures/transcripts
    """
    run = inspect_paths(paths, input_format)
    for line in run.problems():
        click.echo(line, err=True)
    click.echo(run.to_json() if output_format == "json" else run.to_text())
    sys.exit(run.exit_code)


def _finish(run: FileRun, output: str | None, output_format: str, refused: str) -> None:
    payload = run.payload()
    for item in run.items:
        if item.problem:
            click.echo(f"INPUT ERROR: {item.label}: {item.problem}", err=True)
        elif item.refused:
            click.echo(f"{refused}: {item.label}: {item.refused}", err=True)
    account = run.to_json() if output_format == "json" else run.to_text()
    if payload is not None and output is not None:
        try:
            write_atomic(output, payload)
        except OSError as exc:
            click.echo(f"OUTPUT ERROR: cannot write '{output}': {exc.strerror or exc}", err=True)
            sys.exit(EXIT_INPUT_ERROR)
        if account:
            click.echo(account)
    else:
        if payload is not None:
            click.echo(payload, nl=False)
        if account:
            click.echo(account, err=True)
    sys.exit(run.exit_code)


@click.command("repair")
@click.argument("file", type=click.Path())
@_output
@_input_format
@_output_format
def repair_command(file: str, output: str | None, input_format: str | None,
                   output_format: str) -> None:
    """Repair a transcript with the smallest edits that make it valid, in its own format.

    Answers dangling calls with a placeholder result, moves misplaced results next to their
    calls, drops orphaned and duplicate results and empty turns; every change is listed with
    its place in the input. FILE is a .json file, or a .jsonl file repaired line by line.
    Exit 0 repaired (or nothing to repair), 1 a transcript no repair can fix (calls that
    cannot be paired; a .json file is then not written, a JSONL line is passed through),
    2 unreadable input.

    \b
    Example:
        frayproof-audit repair fixtures/transcripts/anthropic.json -o repaired.json
    """
    _finish(repair_file(file, input_format), output, output_format, "cannot repair")


@click.command("compact")
@click.argument("file", type=click.Path())
@click.option("--max-tokens", "max_tokens", type=click.IntRange(min=1), required=True,
              help="Token budget of the whole compacted transcript.")
@click.option("--keep", type=click.IntRange(min=0), default=2, show_default=True,
              help="Keep at least this many messages after the leading instructions.")
@click.option("--tokenizer", type=click.Choice(TOKENIZERS), default="chars", show_default=True,
              help="chars: 4 characters of JSON a token; tiktoken: o200k_base (needs the "
                   "`tokens` extra).")
@_output
@_input_format
@_output_format
def compact_command(file: str, max_tokens: int, keep: int, tokenizer: str, output: str | None,
                    input_format: str | None, output_format: str) -> None:
    """Drop the oldest turns until the transcript fits a token budget, safely.

    Keeps the leading instructions and the longest suffix that fits, never splitting a call
    from its result or a message from its reasoning, and starting at a user turn. Exit 0
    compacted (or already within budget), 1 refused (no safe cut fits, or the transcript is
    invalid: repair it first; nothing is written), 2 unreadable input.

    \b
    Example:
        frayproof-audit compact fixtures/transcripts/openai.json --max-tokens 200
    """
    counter: TokenCounter = approximate_tokens
    if tokenizer == "tiktoken":
        try:
            counter = tiktoken_counter()
        except TokenizerUnavailable as exc:
            click.echo(f"INPUT ERROR: {exc}", err=True)
            sys.exit(EXIT_INPUT_ERROR)
    run = compact_file(file, max_tokens, input_format, keep, counter)
    _finish(run, output, output_format, "refused")
