"""`rejudge`: a dataset's stored history judged again with a new contract."""

from __future__ import annotations

import sys

import click

from frayproof_audit.cli.common import fail_input, plain_format_option
from frayproof_audit.cli.option_types import count
from frayproof_audit.errors import InputError
from frayproof_audit.render import render


@click.command("rejudge")
@click.argument("out", type=click.Path())
@click.option("--contract", "contract", type=click.Path(), required=True,
              help="The new YAML context contract to judge the stored runs with.")
@click.option("--run", "runs", multiple=True, metavar="RUN_ID",
              help="Only this original run (repeatable; default: every committed audit run).")
@click.option("--jobs", "-j", "jobs", type=count(-1), default=-1, show_default=True,
              help="Worker processes per run (-1: every core the input keeps busy).")
@click.option("--backend", type=click.Choice(("loky", "threading")), default="loky",
              show_default=True, help="joblib backend of each replay.")
@plain_format_option
@click.option("--quiet", "-q", is_flag=True, help="No line per run on stderr while it works.")
def rejudge_command(out: str, contract: str, runs: tuple[str, ...], jobs: int, backend: str,
                    output_format: str, quiet: bool) -> None:
    """Judge the stored history of OUT again with a new contract, so the trend goes on.

    Every committed audit run is audited again, from the input files its rows name (for an
    --incremental run, the ranges it read), with its own options and the new contract, into a
    new run `<run id>.<12 digits of the new fingerprint>` that names its original in
    runs.rejudge_of; its undated records keep the original's log_date. stats, trend and report
    then count the rejudged runs (the newest contract); the originals stay under their own
    contract. A run whose inputs are gone or whose records changed is named and not rejudged.
    Relative inputs are read from the current folder. Exit 0, or 2 when a run could not be
    rejudged (the others are) or for bad input.

    \b
    Example:
        frayproof-audit rejudge /srv/audit --contract contract-v2.yaml
    """
    from frayproof_audit.corpus.run.rejudge import RejudgeConfig, rejudge  # heavy: only this command

    def announce(original: str, target: str) -> None:
        if not quiet:
            click.echo(f"rejudging {original} as {target}", err=True)

    try:
        result = rejudge(RejudgeConfig(out, contract, runs, jobs, backend,
                                       ("frayproof-audit", *sys.argv[1:])), announce)
    except InputError as exc:
        fail_input(str(exc), output_format)
    click.echo(render(result, output_format))
    sys.exit(result.exit_code)
