"""`report`: the dataset as one self-contained HTML page."""

from __future__ import annotations

from datetime import datetime

import click

from frayproof_audit.cli.common import fail_input
from frayproof_audit.cli.dataset_options import as_day, blame_option, selection_options
from frayproof_audit.cli.option_types import POINTS, count
from frayproof_audit.corpus.store.failure_rule import Blame
from frayproof_audit.errors import InputError
from frayproof_audit.htmlreport.config import (
    DEFAULT_BASELINE,
    DEFAULT_MAX_PAIRS,
    DEFAULT_WORST,
    FOLDER_FROM,
    ReportConfig,
)


@click.command("report")
@click.argument("out", type=click.Path())
@click.option("-o", "--output", "output", required=True, type=click.Path(),
              help="The HTML file to write (a file is replaced atomically; a link, FIFO or "
                   "device is written through, never replaced), or a folder (`report/`, or one "
                   "that exists) to write the report as index.html and a page per pair.")
@selection_options
@click.option("--worst", type=count(0), default=DEFAULT_WORST, show_default=True,
              help="How many failing pairs, and how many passing pairs with surviving mutants, "
                   "to show with their findings and survivors.")
@click.option("--max-pairs", "max_pairs", type=count(0), default=DEFAULT_MAX_PAIRS, show_default=True,
              metavar="N",
              help="How many pairs get a page of their own with their messages (failing pairs "
                   "first, most errors first, then passing pairs with warnings or surviving "
                   f"mutants); more than {FOLDER_FROM:,} make the report a folder.")
@click.option("--source-root", "source_root", default=None, type=click.Path(file_okay=False),
              help="Folder the dataset's relative source paths are found in, to read each "
                   "pair's messages back (default: the current folder, where the audit ran).")
@click.option("--baseline", type=count(1), default=DEFAULT_BASELINE, show_default=True,
              help="Earlier nights whose median each night is compared with in the trend charts.")
@click.option("--regression-points", "points", type=POINTS, default=0.0, show_default=True,
              metavar="P", help="Name (and draw red) a night's regression only when it is worse than "
                                "its baseline by more than P points, as trend --fail-on-regression P.")
@blame_option
def report_command(out: str, output: str, runs: tuple[str, ...], since: datetime | None,
                   until: datetime | None, compactors: tuple[str, ...], contract: str | None,
                   worst: int, max_pairs: int, source_root: str | None, baseline: int,
                   points: float, blame: str) -> None:
    """Write an HTML report of the committed runs in OUT: one file that needs no network.

    Run summary, failures per check, condition code and compactor, survival per mutation
    operator with per-night trend charts, the worst pairs with their findings and the mutants
    that survived on them (with the contract rule that would catch each), and the contract;
    then a page per pair (before and after aligned, each finding marked where it is, read back
    from the inputs) and the list of pairs, filtered by night, compactor, check, code, status,
    operator or text, which every count in the tables opens.
    Runs judged with different contracts are never added up: by default the report covers the
    runs of the newest contract, failed runs left out, and names the others (on stderr and on
    the page); --contract chooses another (or all), --run picks runs. A failing pair counts
    only when its compactor introduced an error (--blame all: every failing pair).

    \b
    Example:
        frayproof-audit report audit-out -o report.html
    """
    from frayproof_audit.htmlreport.write import write_report_pages  # Polars: only this command

    try:
        config = ReportConfig(out=out, output=output, runs=runs, compactors=compactors,
                              since=as_day(since), until=as_day(until), worst=worst,
                              baseline=baseline, points=points, contract=contract,
                              max_pairs=max_pairs, source_root=source_root,
                              blame=Blame(blame))
        written = write_report_pages(config)
    except InputError as exc:
        fail_input(str(exc), "text")
    except OSError as exc:
        fail_input(f"cannot write '{output}': {exc.strerror or exc}", "text")
    data, pages = written.data, written.pages
    totals = data.totals
    first, last = totals.first_night, totals.last_night
    nights = ("" if first is None or last is None else f", night {first.isoformat()}" if first == last
              else f", nights {first.isoformat()} to {last.isoformat()}")
    shown = len(pages.pages)
    capped = f" of {pages.candidates:,} (--max-pairs {pages.cap:,})" if pages.candidates > shown else ""
    where = f"{written.path} (a folder)" if written.folder else output
    click.echo(f"Wrote {where}: {totals.runs} run(s), {totals.pairs:,} pairs{nights}, "
               f"{shown:,}{capped} pair page(s)")
    unread = sum(1 for page in pages.pages if page.state not in ("found", "not judged"))
    if unread:
        click.echo(f"note: {unread:,} pair page(s) show no messages: their input is gone or changed "
                   "since the audit (each page says why; --source-root if the audit ran elsewhere)",
                   err=True)
    for note in data.notes:
        click.echo(f"note: {note}", err=True)
