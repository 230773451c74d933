"""`inspect`, `repair` and `compact`: transcript tools over files, folders and JSONL.

Results and diagnostics are kept apart so stdout pipes: `repair` and `compact` write the new
transcript (one `.json` file in) or JSONL (anything else) to stdout (or `-o OUT`), and their
account of changes to stderr (to stdout when the output goes to a file).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from frayproof_audit.cli.choices import RegistryChoice
from frayproof_audit.cli.common import plain_format_option
from frayproof_audit.cli.option_types import count
from frayproof_audit.corpus.inputs.source_choice import source_names
from frayproof_audit.files import write_through
from frayproof_audit.formats import FORMATS
from frayproof_audit.providers import PROFILE_NAMES
from frayproof_audit.render import render
from frayproof_audit.report import EXIT_INPUT_ERROR
from frayproof_audit.transcript.batch import EditRun, compact_paths, inspect_paths, repair_paths
from frayproof_audit.transcript.sources import shown_path
from frayproof_audit.transcript.tokens import (
    TokenCounter,
    TokenizerUnavailable,
    approximate_tokens,
    tiktoken_counter,
)

TOKENIZERS = ("chars", "tiktoken")


def _paths(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.argument("paths", nargs=-1, required=True)(function)


def _input_format(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--input-format", "input_format", type=RegistryChoice(lambda: FORMATS),
        default=None,
        help="Wire format of the transcripts (default: auto, the format each transcript's own "
             "evidence names); a JSONL record's own `format` field wins.")(function)


def _source(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--source", "source", type=RegistryChoice(source_names), default="auto",
        show_default=True,
        help="What a .jsonl file is: auto (an agent's session file by its first lines' "
             "evidence, else transcripts or pair records, one per line), pairs (never a "
             "session), or a source: a session file is the agent's current model-visible "
             "history, what its next request sends.")(function)


def _profile(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--profile", type=click.Choice(PROFILE_NAMES, case_sensitive=True), default=None,
        help="Judge by this provider's rules (default: the one for each transcript's format: "
             "anthropic for anthropic, openai-responses for openai-responses, else "
             "openai-chat).")(function)


def _output(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default=None,
                        help="Write the new transcript (or the JSONL) here instead of to stdout: "
                             "a file is replaced atomically; a link, FIFO or device is written "
                             "through, never replaced.")(function)


@click.command("inspect")
@_paths
@_input_format
@_source
@_profile
@plain_format_option
def inspect_command(paths: tuple[str, ...], input_format: str | None, source: str,
                    profile: str | None, output_format: str) -> None:
    """Name every defect of each transcript: FATAL (a provider would reject it) or WASTEFUL.

    PATHS are .json files (one transcript), .jsonl files (one transcript, or a corpus record
    whose `after` is inspected, per line) and folders (every .json and .jsonl file under
    them). Exit 0 every transcript valid (WASTEFUL defects only warn), 1 a FATAL defect,
    2 an input that could not be read (a run where nothing could be read never passes).

    \b
    Example:
        frayproof-audit inspect fixtures/transcripts
    """
    run = inspect_paths(paths, input_format, profile, source)
    for line in run.problems():
        click.echo(line, err=True)
    click.echo(render(run, output_format))
    sys.exit(run.exit_code)


def _finish(run: EditRun, output: str | None, output_format: str) -> None:
    for line in run.problems():
        click.echo(line, err=True)
    payload = run.payload()
    account = render(run, output_format)
    if payload is not None and output is not None:
        try:
            write_through(output, payload.encode("utf-8"))
        except OSError as exc:
            click.echo(f"OUTPUT ERROR: cannot write '{shown_path(output)}': {exc.strerror or exc}",
                       err=True)
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
@_paths
@_output
@_input_format
@_source
@_profile
@plain_format_option
def repair_command(paths: tuple[str, ...], output: str | None, input_format: str | None,
                   source: str, profile: str | None, output_format: str) -> None:
    """Repair transcripts with the smallest edits that make them valid, in their own format.

    Answers dangling calls with a placeholder result, moves misplaced results next to their
    calls, drops orphaned and duplicate results and empty turns; every change is listed with
    its place in the input. PATHS are read as `inspect` reads them. One .json file in: the
    repaired transcript out. Anything else: JSONL, one line per transcript (source, line,
    pair_id, status, format, transcript or the reason there is none), in input order.
    Exit 0 repaired (or nothing to repair), 1 a transcript no repair can fix (calls that
    cannot be paired; a lone .json file is then not written), 2 an input that could not be
    read (a run where nothing could be read never passes).

    \b
    Example:
        frayproof-audit repair fixtures/transcripts/anthropic.json -o repaired.json
    """
    _finish(repair_paths(paths, input_format, profile=profile, source=source), output,
            output_format)


@click.command("compact")
@_paths
@click.option("--max-tokens", "max_tokens", type=count(1), required=True,
              help="Token budget of each whole compacted transcript.")
@click.option("--keep", type=count(0), default=2, show_default=True,
              help="Keep at least this many messages after the leading instructions.")
@click.option("--tokenizer", type=click.Choice(TOKENIZERS), default="chars", show_default=True,
              help="chars: 4 characters of JSON a token; tiktoken: o200k_base (needs the "
                   "`tokens` extra).")
@_output
@_input_format
@_source
@_profile
@plain_format_option
def compact_command(paths: tuple[str, ...], max_tokens: int, keep: int, tokenizer: str,
                    output: str | None, input_format: str | None, source: str,
                    profile: str | None, output_format: str) -> None:
    """Drop the oldest turns until each transcript fits a token budget, safely.

    Keeps the leading instructions and the longest suffix that fits, never splitting a call
    from its result or a message from its reasoning, and starting at a user turn. PATHS and
    the output are as for `repair`. Exit 0 compacted (or already within budget), 1 a
    compaction refused (no safe cut fits, or the transcript is invalid: repair it first; a
    lone .json file is then not written), 2 an input that could not be read (a run where
    nothing could be read never passes).

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
    run = compact_paths(paths, max_tokens, input_format, keep=keep, counter=counter,
                        profile=profile, source=source)
    _finish(run, output, output_format)
