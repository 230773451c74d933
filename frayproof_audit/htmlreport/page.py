"""`ReportData` → one self-contained HTML page.

Every value that comes from the dataset (compactor names, pair ids, messages, the contract
text: all of it written by the logs' producers) goes through `_e`, HTML escaping with quotes,
on its way into text or an attribute. Tables carry each cell's raw value in `data-value` and each
row's key in `data-key`, so the numbers can be read back by a script as exactly as they were
computed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from html import escape
from typing import Any
from urllib.parse import quote

import polars as pl

from frayproof_audit import __version__
from frayproof_audit.checks import CONDITIONS
from frayproof_audit.htmlreport.assets import CONTENT_SECURITY_POLICY, SCRIPT, STYLE
from frayproof_audit.htmlreport.data import ReportData, Series
from frayproof_audit.htmlreport.pages import PairPage, PairPages
from frayproof_audit.htmlreport.pair_list import filter_href, page_href, pair_list
from frayproof_audit.htmlreport.svg import BandPoint, Point, bar_chart, rate_chart
from frayproof_audit.htmlreport.worst import PairDetail


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def _int(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


Column = tuple[str, str, str]
"""(column in the frame, heading, kind: text | int | rate | date)."""


Link = Callable[[dict[str, Any]], "str | None"]
"""A table cell's link: the row → the fragment of the pairs behind the count (None: no link)."""


def _linked(text: str, href: str | None) -> str:
    return text if href is None else f'<a href="{_e(href)}">{text}</a>'


def _cell(value: Any, kind: str, column: str, href: str | None = None) -> str:
    if kind == "rate":
        raw = "" if value is None else repr(float(value))
        return f'<td class="n" data-col="{column}" data-value="{raw}">{_pct(value)}</td>'
    if kind == "int":
        raw = "" if value is None else str(int(value))
        shown = _linked(_int(value), href if value else None)
        return f'<td class="n" data-col="{column}" data-value="{raw}">{shown}</td>'
    if isinstance(value, date | datetime):
        shown = value.strftime("%Y-%m-%d %H:%M:%S") if isinstance(value, datetime) else value.isoformat()
        return f'<td class="d" data-col="{column}">{_e(shown)}</td>'
    text = "–" if value is None else str(value)
    nowrap = ' class="d"' if column == "code" else ""  # TP-UNANSWERED, not TP- / UNANSWERED
    return f'<td{nowrap} data-col="{column}">{_e(text)}</td>'


def table(table_id: str, frame: pl.DataFrame, columns: Sequence[Column], key: str | Sequence[str],
          links: Mapping[str, Link] | None = None) -> str:
    """A sortable table of `frame`'s `columns`; each row's `data-key` is its `key` column(s), joined
    with a tab. `links` turns a column's counts into links to the pairs behind them."""
    keys = [key] if isinstance(key, str) else list(key)
    if frame.height == 0:
        return f'<p class="muted" id="{_e(table_id)}">None.</p>'
    head = "".join(f"<th>{_e(title)}</th>" for _, title, _ in columns)
    rows = []
    for row in frame.iter_rows(named=True):
        row_key = "\t".join("" if row[k] is None else str(row[k]) for k in keys)
        linked = links or {}
        cells = "".join(_cell(row[name], kind, name, linked[name](row) if name in linked else None)
                        for name, _, kind in columns)
        rows.append(f'<tr data-key="{_e(row_key)}">{cells}</tr>')
    return (f'<table class="data" id="{_e(table_id)}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _card(value: str, label: str, name: str, href: str | None = None) -> str:
    return (f'<div class="card" data-card="{name}"><b>{_linked(_e(value), href)}</b>'
            f"<span>{_e(label)}</span></div>")


def _points(series: Series, what: str) -> tuple[list[Point], list[BandPoint]]:
    points, band = [], []
    for night in series.nights:
        label = night.night.isoformat()
        note = (f"{label}: {_pct(night.rate)} ({night.hits:,} of {night.total:,} {what})"
                + (f"; baseline {_pct(night.baseline)}" if night.baseline is not None else "")
                + ("; worse beyond noise" if night.worse else ""))
        points.append(Point(label, night.rate, night.low, night.high, note, night.worse))
        band.append(BandPoint(night.baseline, night.band_low, night.band_high))
    return points, band


def _charts(prefix: str, trends: Sequence[Series], what: str, heading: str) -> str:
    charts = []
    for i, series in enumerate(trends):
        points, band = _points(series, what)
        charts.append(rate_chart(f"{prefix}-{i}", f"{series.name}: {heading}", points, band))
    if not charts:
        return '<p class="muted">None.</p>'
    return f'<div class="grid" id="{prefix}">{"".join(charts)}</div>'


def _header(data: ReportData, pages: PairPages | None) -> str:
    totals, config = data.totals, data.config
    first, last = totals.first_night, totals.last_night
    nights = ("no nights" if first is None or last is None else
              f"nights {first.isoformat()} to {last.isoformat()}" if first != last
              else f"night {first.isoformat()}")
    scope = [f"{totals.runs} run(s)", nights]
    if config.compactors:
        scope.append("compactor " + ", ".join(config.compactors))
    parts = [
        "<header><h1>Compaction audit report</h1>",
        f'<p class="meta">Dataset <code>{_e(data.out)}</code> · {_e(" · ".join(scope))} · made '
        f"{_e(data.generated_at.strftime('%Y-%m-%d %H:%M UTC'))} by frayproof-audit {_e(__version__)}</p>",
        '<nav><a href="#summary">Summary</a><a href="#failures">Failures</a><a href="#mutation">Mutation</a>'
        '<a href="#worst">Worst pairs</a><a href="#contract">Contract</a>'
        + ('<a href="#pairs">Pairs</a>' if pages is not None else "") + "</nav></header>",
    ]
    if data.left_out:
        parts.append('<div class="notice" id="left-out">' + "".join(
            f"<p>{_e(note)}</p>" for note in data.notes) + "</div>")
    return "".join(parts)


_NIGHTS: tuple[Column, ...] = (
    ("log_date", "night", "date"), ("pairs", "pairs", "int"), ("passed", "pass", "int"),
    ("failed", "fail", "int"), ("inherited", "inherited only", "int"),
    ("input_errors", "input errors", "int"),
    ("engine_errors", "engine errors", "int"), ("failure_rate", "failure rate", "rate"),
)
_RUNS: tuple[Column, ...] = (
    ("run_id", "run", "text"), ("started_at", "started (UTC)", "date"), ("pairs", "pairs", "int"),
    ("passed", "pass", "int"), ("failed", "fail", "int"), ("input_errors", "input errors", "int"),
    ("engine_errors", "engine errors", "int"), ("mutants_caught", "mutants caught", "int"),
    ("mutants_survived", "survived", "int"), ("not_audited", "shards not audited", "int"),
)


def _summary(data: ReportData, pages: PairPages | None) -> str:
    t = data.totals
    fails = filter_href(t.failed, status="fail") if pages is not None and t.failed else None
    cards = "".join([
        _card(_int(t.pairs), "pairs", "pairs"), _card(_int(t.passed), "pass", "passed"),
        _card(_int(t.failed), "fail", "failed", fails),
        _card(_int(t.input_errors), "input errors", "input_errors"),
        _card(_int(t.engine_errors), "engine errors", "engine_errors"),
        _card(_pct(t.failure_rate), "failure rate (of pairs checked)", "failure_rate"),
        _card(_int(t.caught + t.survived), "mutants judged", "mutants"),
        _card(_int(t.survived), "mutants survived", "survived"),
        _card(_pct(t.mutation_score), "mutation score", "mutation_score"),
    ])
    if pages is not None:
        capped = f" of {pages.candidates:,} (--max-pairs)" if pages.candidates > len(pages.pages) else ""
        cards += _card(_int(len(pages.pages)), f"pair pages{capped}", "pair_pages", "#pairs")
    trend = _charts("chart-nights", [data.failure_trend] if data.failure_trend else [], "pairs checked",
                    "failure rate per night")
    if data.undated:
        trend += (f'<p class="muted">{data.undated:,} pair(s) without a usable <code>logged_at</code> '
                  "(mostly input errors) count in the tables but belong to no night of the charts.</p>")
    runs = data.runs.with_columns(pl.col("not_audited_shards").list.len().alias("not_audited"))
    return "".join([
        '<section id="summary"><h2>Summary</h2>', f'<div class="cards">{cards}</div>', _gate(data), trend,
        "<h3>Nights</h3>", table("t-nights", data.nights, _NIGHTS, "log_date", _night_links(pages)),
        "<h3>Runs</h3>",
        '<p class="muted">Whole runs as committed (before any <code>--compactor</code> filter).</p>',
        table("t-runs", runs, _RUNS, "run_id"), "</section>",
    ])


def _gate(data: ReportData) -> str:
    """The latest night against its baseline, in words: what got worse beyond noise."""
    gate = data.gate
    if gate is None:
        return ""
    margin = f" by more than {gate.points:g} points and" if gate.points else ""
    if not gate.regressions:
        return (f'<p class="ok" id="regressions">{_e(gate.period)}: no check or operator is worse than '
                f"its baseline{margin} beyond noise.</p>")
    items = "".join(f"<li>{_e(regression.describe())}</li>" for regression in gate.regressions)
    return (f'<div class="notice" id="regressions"><b>{_e(gate.period)}: {len(gate.regressions)} '
            f"series worse than the baseline{margin} beyond noise</b> (red dots in the charts below; "
            f"<code>frayproof-audit trend --fail-on-regression {gate.points:g}</code> fails on these)"
            f"<ul>{items}</ul></div>")


_CHECKS: tuple[Column, ...] = (
    ("check", "check", "text"), ("failing_pairs", "failing pairs", "int"),
    ("checked", "pairs checked", "int"), ("failure_rate", "failure rate", "rate"),
    ("findings", "findings", "int"), ("errors", "errors", "int"), ("warnings", "warnings", "int"),
)
_CODES: tuple[Column, ...] = (
    ("check", "check", "text"), ("code", "code", "text"), ("title", "condition", "text"),
    ("failing_pairs", "failing pairs", "int"), ("failure_rate", "failure rate", "rate"),
    ("findings", "findings", "int"), ("errors", "errors", "int"), ("warnings", "warnings", "int"),
)
_COMPACTORS: tuple[Column, ...] = (
    ("compactor", "compactor", "text"), ("pairs", "pairs", "int"), ("passed", "pass", "int"),
    ("failed", "fail", "int"), ("inherited", "inherited only", "int"),
    ("input_errors", "input errors", "int"),
    ("failure_rate", "failure rate", "rate"), ("mutants", "mutants judged", "int"),
    ("survived", "survived", "int"), ("survival_rate", "survival rate", "rate"),
)
_STREAKS: tuple[Column, ...] = (
    ("compactor", "compactor", "text"), ("check", "check", "text"), ("first_failed", "first failed", "date"),
    ("since", "failing since", "date"), ("streak", "streak (nights)", "int"),
    ("periods_failed", "nights failed", "int"), ("periods_audited", "nights audited", "int"),
    ("failing_pairs", "failing pairs", "int"),
)
_OPERATORS: tuple[Column, ...] = (
    ("operator", "operator", "text"), ("pairs", "pairs", "int"), ("applicable", "mutants judged", "int"),
    ("caught", "caught", "int"),
    ("survived", "survived", "int"), ("skipped", "skipped", "int"),
    ("survival_rate", "survival rate", "rate"), ("low", "95% low", "rate"), ("high", "95% high", "rate"),
)


def _title(code: str) -> str | None:
    """A condition's fixed title, its placeholders (filled in each finding's message) shown as …"""
    condition = CONDITIONS.get(code)
    return None if condition is None else re.sub(r"\{\w+\}", "…", condition.title)


def _failures(data: ReportData, pages: PairPages | None) -> str:
    codes = data.codes.with_columns(
        pl.col("code").map_elements(_title, return_dtype=pl.String).alias("title"))
    check_bars = bar_chart("chart-checks", "Failure rate by check", [
        (row["check"], row["failure_rate"] or 0.0, f"{row['check']}: {row['failing_pairs']:,} of "
         f"{row['checked']:,} pairs checked") for row in data.checks.iter_rows(named=True)])
    compactor_bars = bar_chart("chart-compactors", "Failure rate by compactor", [
        (row["compactor"] if row["compactor"] is not None else "(none)", row["failure_rate"] or 0.0,
         f"{row['compactor']}: {row['failed']:,} of {row['checked']:,} pairs checked")
        for row in data.compactors.iter_rows(named=True)])
    return "".join([
        '<section id="failures"><h2>Failures</h2>',
        '<p class="muted">A pair fails when it has an error finding; rates are of the pairs that could be '
        "checked (input and engine errors aside). A pair can fail several checks.</p>",
        "<h3>By check</h3>", f'<div class="grid">{check_bars}</div>',
        table("t-checks", data.checks, _CHECKS, "check", _check_links(pages)),
        "<h3>Per night, by check</h3>",
        '<p class="muted">Dots: the night\'s rate with its 95% interval. Dashed line: the baseline, the '
        f"median of up to {data.config.baseline} earlier nights; band: the lowest to the highest of those "
        "nights. A night is worse beyond noise (a red dot) when its whole interval lies above the "
        "baseline.</p>",
        _charts("chart-check-trends", data.check_trends, "pairs checked", "failure rate"),
        "<h3>By condition code</h3>", table("t-codes", codes, _CODES, ("check", "code"), _code_links(pages)),
        "<h3>By compactor</h3>", f'<div class="grid">{compactor_bars}</div>',
        table("t-compactors", data.compactors, _COMPACTORS, "compactor", _compactor_links(pages)),
        "<h3>Failing since</h3>",
        '<p class="muted">Each compactor and check that ever failed: the first night it failed, the night '
        "its current streak began (empty when its latest night passed), the streak in nights, and "
        "nights failed of nights audited.</p>",
        table("t-streaks", data.streaks, _STREAKS, ("compactor", "check"), _streak_links(pages)),
        "</section>",
    ])


def _mutation(data: ReportData, pages: PairPages | None) -> str:
    return "".join([
        '<section id="mutation"><h2>Mutation testing: survival per operator</h2>',
        '<p class="muted">Each operator corrupts passing compactions in one way; a survivor is a corruption '
        "the contract let through. The 95% interval (Wilson, over the pairs the operator applied to: the "
        "mutants of one pair are not independent) says how far a rate can be trusted.</p>",
        table("t-operators", data.operators, _OPERATORS, "operator", _operator_links(pages)),
        "<h3>Per night, by operator</h3>",
        _charts("chart-operator-trends", data.operator_trends, "mutants judged", "survival rate"),
        "</section>",
    ])


OPEN_PAIRS = 3
"""Pairs of each list shown opened; the rest open on a click."""


def _pair(detail: PairDetail, opened: bool = False, href: str | None = None) -> str:
    title = (f" · {detail.compactor or '(no compactor)'} · {detail.night.isoformat()} · "
             f"{detail.errors} error(s), {detail.warnings} warning(s), {detail.survived} survivor(s)")
    name = _linked(_e(detail.pair_id), href)
    opens = f' <a class="open" href="{_e(href)}">messages →</a>' if href is not None else ""
    parts = [f'<details class="pair" data-pair="{_e(detail.pair_id)}" data-run="{_e(detail.run_id)}"'
             f'{" open" if opened else ""}>'
             f"<summary>{name}{_e(title)}{opens}</summary>",
             f'<p class="muted">run {_e(detail.run_id)} · <code>{_e(detail.source)}</code> '
             f"{'row' if detail.source.endswith('.parquet') else 'line'} {detail.source_row}</p>"]
    if detail.findings:
        rows = "".join(
            f'<tr><td class="sev-{_e(f.severity)}">{_e(f.severity)}</td><td>{_e(f.check)}</td>'
            f"<td class=\"d\">{_e(f.code or '–')}</td><td><code>{_e(f.where)}</code></td>"
            f"<td>{_e(f.message)}</td></tr>"
            for f in detail.findings)
        parts.append('<table class="data findings"><thead><tr><th>severity</th><th>check</th><th>code</th>'
                     f"<th>where</th><th>message</th></tr></thead><tbody>{rows}</tbody></table>")
        if detail.more_findings:
            parts.append(f'<p class="muted">and {detail.more_findings} more finding(s).</p>')
    if detail.survivors:
        rows = "".join(
            f"<tr><td>{_e(s.operator)}</td><td><code>{_e(', '.join(s.sites))}</code></td>"
            f"<td>{_e(s.description)}</td><td>{_e(s.rule)}</td></tr>" for s in detail.survivors)
        parts.append('<table class="data survivors"><thead><tr><th>operator</th><th>site</th><th>mutant</th>'
                     f"<th>contract rule that would catch it</th></tr></thead><tbody>{rows}</tbody></table>")
        if detail.more_survivors:
            parts.append(f'<p class="muted">and {detail.more_survivors} more surviving mutant(s).</p>')
    parts.append("</details>")
    return "".join(parts)


def _worst(data: ReportData, pages: PairPages | None, folder: bool) -> str:
    def href(pair: PairDetail) -> str | None:
        key = pages.key_of(pair.run_id, pair.pair_id) if pages is not None else None
        return page_href(key, folder=folder) if key is not None else None

    def block(pairs: Sequence[PairDetail], total: int, block_id: str, empty: str) -> str:
        shown = f"{len(pairs):,} of {total:,}" if total > len(pairs) else f"all {total:,}"
        if not pairs:
            return f'<div id="{block_id}"><p class="muted">{_e(empty)}</p></div>'
        blocks = "".join(_pair(pair, i < OPEN_PAIRS, href(pair)) for i, pair in enumerate(pairs))
        return f'<div id="{block_id}"><p class="muted">Showing {shown}.</p>{blocks}</div>'

    return "".join([
        '<section id="worst"><h2>Worst pairs</h2>',
        "<h3>Failing pairs, most errors first</h3>",
        block(data.failing_pairs, data.failing_total, "worst-failing", "No pair failed."),
        "<h3>Passing pairs the contract is blind on, most surviving mutants first</h3>",
        block(data.blind_pairs, data.blind_total, "worst-blind", "No mutant survived."),
        "</section>",
    ])


def _contract(data: ReportData) -> str:
    where = data.contract_path or "the built-in defaults"
    return "".join([
        '<section id="contract"><h2>Contract</h2>',
        f'<p class="muted">From <code>{_e(where)}</code>, as the latest run recorded it; fingerprint '
        f"<code>{_e(data.contract_key)}</code>.</p>",
        f'<pre class="contract" id="contract-text">{_e(data.contract_text)}</pre></section>',
    ])


def _document(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_e(CONTENT_SECURITY_POLICY)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title>"
        f"<style>{STYLE}</style></head>"
        f"<body><main>{body}</main><script>{SCRIPT}</script></body></html>\n"
    )


def render_page(data: ReportData, pages: PairPages | None = None, *, folder: bool = False) -> str:
    """The whole report as one HTML document that needs nothing else to display: the report
    itself, and with `pages` the list of pairs and (unless `folder`: each is a file of its own,
    `render_pair_file`) every pair's page. Each is a view the URL fragment names; the script shows
    one at a time, and without it they read one after another."""
    report = "".join([_header(data, pages), _summary(data, pages), _failures(data, pages),
                      _mutation(data, pages), _worst(data, pages, folder), _contract(data)])
    body = f'<div class="view" id="report">{report}</div>'
    if pages is not None:
        body += pair_list(pages, folder=folder)
        if not folder:
            body += "".join(page.html for page in pages.pages)
    return _document(f"Compaction audit report: {data.out}", body)


def render_pair_file(data: ReportData, page: PairPage, section: str) -> str:
    """One pair's page as a document of its own (a folder report's `pairs/<key>.html`)."""
    return _document(f"Pair {page.pair.pair_id}: {data.out}", section)


def render_pointer(data: ReportData, folder: str, pages: int) -> str:
    """The page written where a one-file report was asked for when it became a folder."""
    href = quote(folder.replace(os.sep, "/")) + "/index.html"
    return _document(f"Compaction audit report: {data.out}", (
        f'<div class="view" id="report"><h1>Compaction audit report</h1><p>With {pages:,} pair pages this '
        f'report is a folder: <a href="{_e(href)}">{_e(folder)}/index.html</a>.</p></div>'))


def _night_links(pages: PairPages | None) -> dict[str, Link] | None:
    if pages is None:
        return None
    return {"pairs": lambda row: filter_href(row["pairs"], night=_day(row["log_date"])),
            "failed": lambda row: filter_href(row["failed"], night=_day(row["log_date"]), status="fail"),
            "passed": lambda row: filter_href(row["passed"], night=_day(row["log_date"]), status="pass")}


def _day(value: Any) -> str:
    return value.isoformat() if isinstance(value, date) else str(value)


def _check_links(pages: PairPages | None) -> dict[str, Link] | None:
    if pages is None:
        return None
    return {"failing_pairs": lambda row: filter_href(row["failing_pairs"], check=row["check"], status="fail")}


def _code_links(pages: PairPages | None) -> dict[str, Link] | None:
    if pages is None:
        return None
    return {"failing_pairs": lambda row: None if row["code"] is None else
            filter_href(row["failing_pairs"], code=row["code"], status="fail")}


def _compactor_links(pages: PairPages | None) -> dict[str, Link] | None:
    if pages is None:
        return None
    return {"pairs": lambda row: filter_href(row["pairs"], compactor=row["compactor"] or ""),
            "failed": lambda row: filter_href(row["failed"], compactor=row["compactor"] or "", status="fail"),
            "passed": lambda row: filter_href(row["passed"], compactor=row["compactor"] or "", status="pass")}


def _streak_links(pages: PairPages | None) -> dict[str, Link] | None:
    if pages is None:
        return None
    return {"failing_pairs": lambda row: filter_href(row["failing_pairs"], compactor=row["compactor"] or "",
                                                     check=row["check"], status="fail")}


def _operator_links(pages: PairPages | None) -> dict[str, Link] | None:
    if pages is None:
        return None
    return {"survived": lambda row: filter_href(None, operator=row["operator"])}
