"""`report`: the dataset as one self-contained HTML page."""

from __future__ import annotations

from datetime import datetime

import click

from frayproof_audit.cli.common import fail_input
from frayproof_audit.cli.dataset_options import as_day, blame_option, selection_options
from frayproof_audit.cli.option_types import POINTS, count
from frayproof_audit.corpus.blame import Blame
from frayproof_audit.errors import InputError
from frayproof_audit.htmlreport.config import DEFAULT_BASELINE, DEFAULT_WORST, ReportConfig


@click.command("report")
@click.argument("out", type=click.Path())
@click.option("-o", "--output", "output", required=True, type=click.Path(dir_okay=False),
              help="The HTML file to write (a file is replaced atomically; a link, FIFO or "
                   "device is written through, never replaced).")
@selection_options
@click.option("--worst", type=count(0), default=DEFAULT_WORST, show_default=True,
              help="How many failing pairs, and how many passing pairs with surviving mutants, "
                   "to show with their findings and survivors.")
@click.option("--baseline", type=count(1), default=DEFAULT_BASELINE, show_default=True,
              help="Earlier nights whose median each night is compared with in the trend charts.")
@click.option("--regression-points", "points", type=POINTS, default=0.0, show_default=True,
              metavar="P", help="Name (and draw red) a night's regression only when it is worse than "
                                "its baseline by more than P points, as trend --fail-on-regression P.")
@blame_option
def report_command(out: str, output: str, runs: tuple[str, ...], since: datetime | None,
                   until: datetime | None, compactors: tuple[str, ...], contract: str | None,
                   worst: int, baseline: int, points: float, blame: str) -> None:
    """Write an HTML report of the committed runs in OUT: one file that needs no network.

    Run summary, failures per check, condition code and compactor, survival per mutation
    operator with per-night trend charts, the worst pairs with their findings and the mutants
    that survived on them (with the contract rule that would catch each), and the contract.
    Runs judged with different contracts are never added up: by default the report covers the
    runs of the newest contract, failed runs left out, and names the others (on stderr and on
    the page); --contract chooses another (or all), --run picks runs. A failing pair counts
    only when its compactor introduced an error (--blame all: every failing pair).

    \b
    Example:
        frayproof-audit report audit-out -o report.html
    """
    from frayproof_audit.htmlreport.write import write_report  # Polars: only this command

    try:
        config = ReportConfig(out=out, output=output, runs=runs, compactors=compactors,
                              since=as_day(since), until=as_day(until), worst=worst,
                              baseline=baseline, points=points, contract=contract,
                              blame=Blame(blame))
        data = write_report(config)
    except InputError as exc:
        fail_input(str(exc), "text")
    except OSError as exc:
        fail_input(f"cannot write '{output}': {exc.strerror or exc}", "text")
    totals = data.totals
    first, last = totals.first_night, totals.last_night
    nights = ("" if first is None or last is None else f", night {first.isoformat()}" if first == last
              else f", nights {first.isoformat()} to {last.isoformat()}")
    click.echo(f"Wrote {output}: {totals.runs} run(s), {totals.pairs:,} pairs{nights}")
    for note in data.notes:
        click.echo(f"note: {note}", err=True)
