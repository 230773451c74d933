"""`trend`: the dataset night by night, with baselines, charts, a badge and the regression gate."""

from __future__ import annotations

import json
import sys
from datetime import datetime

import click

from frayproof_audit.cli.common import fail_input
from frayproof_audit.cli.dataset_options import (
    as_day,
    blame_option,
    cannot_write,
    selection_options,
    show_notes,
    show_table,
    table_format_option,
    table_output,
    write_output,
)
from frayproof_audit.cli.option_types import POINTS, count
from frayproof_audit.errors import InputError
from frayproof_audit.report import EXIT_PASS

PER = ("night", "run")
DEFAULT_BASELINE = 7
DEFAULT_MIN_PAIRS = 20
"""Kept equal to `trends.series.DEFAULT_BASELINE` / `trends.gate.DEFAULT_MIN_PAIRS` (a test checks)
so `--help` can show them without importing Polars."""


@click.command("trend")
@click.argument("out", type=click.Path())
@click.option("--per", type=click.Choice(PER), default="night", show_default=True,
              help="One period per night (log_date) or per run (in the order runs started).")
@click.option("--baseline", "baseline", type=count(1), default=DEFAULT_BASELINE,
              show_default=True, metavar="N",
              help="Each period is compared with the median of the previous N periods.")
@selection_options
@blame_option
@table_format_option
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="Write the text/json/csv/parquet to this file instead of standard output.")
@click.option("--png", type=click.Path(dir_okay=False), default=None,
              help="Also draw the charts into this PNG file (needs the plot extra).")
@click.option("--svg", type=click.Path(dir_okay=False), default=None,
              help="Also draw the charts into this SVG file (needs the plot extra).")
@click.option("--badge", type=click.Path(dir_okay=False), default=None,
              help="Also write the latest mutation score as a shields.io endpoint JSON file.")
@click.option("--fail-on-regression", "points", type=POINTS, default=None,
              metavar="P",
              help="Exit 1 when, in the latest period, a check's failure rate or an operator's "
                   "survival is worse than its baseline by more than P points and beyond its "
                   "95% interval.")
@click.option("--min-pairs", type=count(1), default=DEFAULT_MIN_PAIRS,
              show_default=True, metavar="N",
              help="The gate judges a series only on at least N pairs in the latest period "
                   "(fewer: 'not judged', one line each).")
@click.option("--strict-min-pairs", "strict", is_flag=True,
              help="A series worse by more than P points on fewer than --min-pairs pairs fails "
                   "the gate instead of being not judged.")
@click.option("--by", "by", default=None, metavar="COLUMN",
              help="With --fail-on-regression: also gate each value of this column of pairs "
                   "(compactor, or a field carried into pairs) on its own, naming each slice "
                   "that regressed.")
def trend_command(out: str, per: str, baseline: int, runs: tuple[str, ...], since: datetime | None,
                  until: datetime | None, compactors: tuple[str, ...], contract: str | None,
                  blame: str, output_format: str,
                  output: str | None, png: str | None, svg: str | None, badge: str | None,
                  points: float | None, min_pairs: int, strict: bool, by: str | None) -> None:
    """Per night (or per run): each check's failure rate, each condition code's, and each
    mutation operator's survival rate, with 95% Wilson intervals, against the median of the
    previous --baseline periods; and since when each compactor × check has been failing.

    A failing pair counts only when its compactor introduced an error, and a check fails a
    pair only by an introduced error (--blame all: every error, frayproof's reading).
    Counts the runs of the newest contract by default (failed runs left out) and says in one
    line what it left out; with --contract all, the night a contract changed is marked and
    baselines start again there. Records without a logged_at are left out of nights.
    Exit 0, or 1 when --fail-on-regression finds a regression (each one is named with its
    rate, interval and baseline), of the whole or, with --by, of any slice (each slice that
    regressed is named), or 2 for bad input.

    \b
    Example:
        frayproof-audit trend audit-out --fail-on-regression 10 --png trend.png
        frayproof-audit trend audit-out --fail-on-regression 10 --by compactor
    """
    chosen = table_output(output_format, output)
    if by is not None and points is None:
        raise click.UsageError("--by slices the regression gate: give --fail-on-regression P too")
    # Polars (and matplotlib for charts): only this command needs them
    from frayproof_audit.corpus.dataset.selection import Selection
    from frayproof_audit.corpus.store.failure_rule import Blame
    from frayproof_audit.trends.badge import badge as badge_json
    from frayproof_audit.trends.charts import write_chart
    from frayproof_audit.trends.gate import GateResult, find_regressions, find_sliced_regressions
    from frayproof_audit.trends.render import TrendReport
    from frayproof_audit.trends.series import TrendConfig, compute_trend

    try:
        selection = Selection(runs, as_day(since), as_day(until), compactors, contract)
        config = TrendConfig(out, selection, "night" if per == "night" else "run", baseline,
                             blame=Blame(blame))
        trend = compute_trend(config)
        gate: GateResult | None = None
        if points is not None and by is not None:
            gate = find_sliced_regressions(config, trend, by, points, min_pairs, strict)
        elif points is not None:
            gate = find_regressions(trend, points, min_pairs, strict)
        for path, image in ((png, "png"), (svg, "svg")):
            if path is not None:
                try:
                    write_chart(trend, path, gate=gate, chart_format=image)
                except OSError as exc:
                    cannot_write(path, exc)
    except InputError as exc:
        fail_input(str(exc), chosen)
    if badge is not None:
        write_output(badge, json.dumps(badge_json(trend), indent=2))
    show_table(chosen, TrendReport(trend, gate), output)
    show_notes(chosen, trend.chosen.notes() if trend.chosen else ())
    if gate is not None and not chosen.verdict:
        click.echo(gate.to_text(), err=True)  # the table holds no verdict: say it beside it
    sys.exit(gate.exit_code if gate is not None else EXIT_PASS)
