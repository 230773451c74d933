"""`pairs`: the compactions found in agents' logs, as the pairs `audit` judges."""

from __future__ import annotations

import sys

import click

from frayproof_audit.cli.choices import RegistryChoice
from frayproof_audit.cli.common import fail_input, plain_format_option
from frayproof_audit.cli.option_types import BYTES
from frayproof_audit.corpus.inputs.pair_listing import DEFAULT_MAX_RECORD_BYTES, list_pairs
from frayproof_audit.corpus.inputs.source_choice import source_names
from frayproof_audit.errors import InputError
from frayproof_audit.files import write_through
from frayproof_audit.render import render
from frayproof_audit.report import EXIT_INPUT_ERROR
from frayproof_audit.transcript.sources import shown_path


@click.command("pairs")
@click.argument("logs", nargs=-1, required=True)
@click.option("--source", "source", type=RegistryChoice(source_names), default="auto",
              show_default=True,
              help="What reads the logs, as for audit: auto (per file, by evidence), or a "
                   "source (docs/sources.md). Files of pair records are named, not copied.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Write the pairs as JSON lines in the audit's own record shape (before, "
                   "after and where each came from) instead of showing them; audit reads it "
                   "back as pair records.")
@click.option("--max-record-bytes", type=BYTES, default=DEFAULT_MAX_RECORD_BYTES,
              show_default=True, help="A longer line is an input error, never loaded.")
@plain_format_option
def pairs_command(logs: tuple[str, ...], source: str, output: str | None,
                  max_record_bytes: int, output_format: str) -> None:
    """Show (or write) the compaction pairs found in agents' own logs: what audit judges.

    LOGS are files, globs or folders, read as audit reads them (Codex rollouts, Claude Code
    and Gemini CLI sessions, LangGraph checkpoint databases (a SQLite file or a postgresql://
    URI), OTLP, Langfuse and LangSmith exports). Without -o: a table per file of its
    compactions (session, line, event, trigger, messages and tokens before → after, fidelity;
    for request logs every transition of every lineage and its classification). Exit 0 every
    row a pair, 2 a row that is an input error (a line that is not JSON, a compaction whose
    before or after cannot be rebuilt), no log, or an input path that names nothing.

    \b
    Example:
        frayproof-audit pairs examples/agent-logs -o pairs.jsonl
    """
    try:
        listing = list_pairs(logs, source, max_record_bytes)
    except InputError as exc:
        fail_input(str(exc), output_format)
    if output is None:
        click.echo(render(listing, output_format))
        sys.exit(listing.exit_code)
    try:
        write_through(output, listing.payload().encode("utf-8"))
    except OSError as exc:
        click.echo(f"OUTPUT ERROR: cannot write '{shown_path(output)}': {exc.strerror or exc}",
                   err=True)
        sys.exit(EXIT_INPUT_ERROR)
    click.echo(listing.account(shown_path(output)) if output_format == "text"
               else render(listing, output_format))
    sys.exit(listing.exit_code)
