"""`runs`: the committed runs of a dataset, and deleting one."""

from __future__ import annotations

import json

import click

from frayproof_audit.cli.common import fail_input
from frayproof_audit.cli.dataset_options import show_table, table_format_option, table_output
from frayproof_audit.errors import InputError


@click.command("runs")
@click.argument("out", type=click.Path())
@click.option("--delete", "delete", default=None, metavar="RUN_ID",
              help="Delete this committed run (its runs row first, then its part files, under "
                   "the dataset's lock, as a run is committed) instead of listing.")
@table_format_option
@click.option("--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Write the list to this file instead of standard output.")
def runs_command(out: str, delete: str | None, output_format: str, output: str | None) -> None:
    """List the committed runs of OUT: id, start (UTC), contract, status, pairs, input errors.

    A run is `failed` when no record could be checked (every record an input or engine error):
    stats, trend and report leave it out unless --run names it. --delete RUN_ID removes one
    run atomically (readers see it wholly there, then wholly gone); on an object store it
    takes the run id's lock first, so it never races an audit of that id. Exit 0, or 2 for
    a dataset that cannot be read or a run that is not there.

    \b
    Examples:
        frayproof-audit runs audit-out
        frayproof-audit runs audit-out --delete night-2025-06-04
    """
    chosen = table_output(output_format, output)
    if delete is not None:
        from frayproof_audit.corpus.store.staging import delete_run

        try:
            removed = delete_run(out, delete)
        except InputError as exc:
            fail_input(str(exc), chosen)
        if output_format == "json":
            click.echo(json.dumps({"deleted": delete, "part_files": removed}))
        else:
            click.echo(f"Deleted run {delete} from '{out}': its runs row and {removed} part file(s).")
        return
    from frayproof_audit.corpus.dataset.run_list import list_runs  # Polars: only this command

    try:
        found = list_runs(out)
    except InputError as exc:
        fail_input(str(exc), chosen)
    show_table(chosen, found, output)
