"""The report's pair pages: which pairs get one (worst first, up to `--max-pairs`), each shown
with its messages read back from its input, and what the list of pairs filters on.

A pair gets a page when there is something to see on it: it fails, or it passes with warnings
or with mutants that survived on it. Failing pairs come first, most errors first, then passing
pairs, most survivors first; the cap says how many of how many got pages. The runs are exactly
the ones the report's tables cover (`ReportData.runs`), whatever chose them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from frayproof_audit.corpus.dataset.record_readback import ReadOptions
from frayproof_audit.corpus.dataset.selection import Selection
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.htmlreport.config import ReportConfig
from frayproof_audit.htmlreport.data import ReportData
from frayproof_audit.htmlreport.pair_page import pair_section
from frayproof_audit.pairview.stored import (
    ShownPair,
    StoredPair,
    findings_by_pair,
    iter_shown,
    read_options,
    stored_pair,
    survivors_by_pair,
)
from frayproof_audit.pairview.view import Finding, Survivor

MESSAGE_CHARS = 200
"""Characters of each finding message the list's free-text search looks in."""


def pair_key(pair: StoredPair) -> str:
    """A pair's page name: stable across reports of the same dataset, distinct even for two
    records of one run that share a pair id."""
    text = "\0".join((pair.run_id, pair.pair_id, pair.source, str(pair.source_row)))
    return "p" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Facets:
    """What the list of pairs filters one pair on (`check` and `code`: those of its error findings
    when it fails, of its warnings when it passes; `operator`: the operators that survived on
    it; `origin`: its findings' origins where the dataset records them)."""

    night: str
    compactor: str | None
    status: str
    checks: tuple[str, ...]
    codes: tuple[str, ...]
    operators: tuple[str, ...]
    origins: tuple[str, ...]
    text: str
    """Pair id, session, compactor, codes and finding messages, for the free-text search."""


@dataclass(frozen=True, slots=True)
class PairPage:
    """A pair with a page: what the list and the report's links need of it, and its section's
    HTML while it is held for a one-file report (a folder report writes each page as it is
    drawn and keeps "" here: a report holds one pair's messages at a time)."""

    key: str
    pair: StoredPair
    state: str
    """As `ShownPair.state`: `found` when its messages are on the page."""
    facets: Facets
    findings: int
    html: str = ""


@dataclass(frozen=True, slots=True)
class PairPages:
    pages: tuple[PairPage, ...]
    failing: int
    """Failing pairs in the selection (each could have a page)."""
    passing: int
    """Passing pairs with warnings or surviving mutants in the selection."""
    cap: int

    @property
    def candidates(self) -> int:
        return self.failing + self.passing

    def key_of(self, run_id: str, pair_id: str) -> str | None:
        """The page of a pair, if it has one (the first, when a run holds its id twice)."""
        for page in self.pages:
            if page.pair.run_id == run_id and page.pair.pair_id == pair_id:
                return page.key
        return None


@dataclass(frozen=True)
class Selected:
    """The pairs that get pages, worst first, and what their pages show from the tables."""

    pairs: tuple[StoredPair, ...]
    failing: int
    passing: int
    cap: int
    findings: dict[tuple[str, str], list[Finding]]
    survivors: dict[tuple[str, str], list[Survivor]]
    options: dict[str, ReadOptions]
    root: str | None


def _facets(shown: ShownPair) -> Facets:
    pair = shown.pair
    severity = "error" if pair.status == "fail" else "warning"
    findings = [item.finding for item in shown.view.findings]
    judged = [f for f in findings if f.severity == severity]
    text = " ".join([pair.pair_id, pair.session_id or "", pair.compactor or "",
                     *(f.code or "" for f in findings), *(f.message[:MESSAGE_CHARS] for f in findings)])
    return Facets(
        pair.log_date.isoformat(), pair.compactor, pair.status,
        tuple(dict.fromkeys(f.check for f in judged)), tuple(dict.fromkeys(f.code for f in judged if f.code)),
        tuple(dict.fromkeys(s.survivor.operator for s in shown.view.survivors)),
        tuple(dict.fromkeys(f.origin for f in findings if f.origin)), text)


def select_pages(config: ReportConfig, data: ReportData) -> Selected:
    """The pairs of the report of `data` that get pages, worst first, at most `config.max_pairs`,
    with their findings and survivors; no record is read yet."""
    runs = tuple(data.runs["run_id"].to_list())
    selection = Selection(runs=runs, since=config.since, until=config.until, compactors=config.compactors)
    pairs = selection.apply(read_table(config.out, "pairs"))
    status = pl.col("status")
    worth = (status == "fail") | ((status == "pass") & ((pl.col("mutants_survived").fill_null(0) > 0)
                                                       | (pl.col("warnings").fill_null(0) > 0)))
    ordered = pairs.filter(worth).sort(
        [(status == "fail"), "errors", "mutants_survived", "warnings", "log_date", "pair_id", "source",
         "source_row"], descending=[True, True, True, True, False, False, False, False], nulls_last=True)
    counts, top = pl.collect_all([
        pairs.filter(worth).group_by("status").len(), ordered.head(config.max_pairs)])
    by_status = dict(counts.iter_rows())
    failing, passing = by_status.get("fail", 0), by_status.get("pass", 0)
    if top.height == 0:
        return Selected((), failing, passing, config.max_pairs, {}, {}, {}, config.source_root)
    keys = top.select("run_id", "pair_id").unique().lazy()
    findings, mutants = pl.collect_all([
        selection.apply(read_table(config.out, "findings")).join(keys, on=["run_id", "pair_id"], how="semi"),
        selection.apply(read_table(config.out, "mutants")).filter(pl.col("status") == "survived")
        .join(keys, on=["run_id", "pair_id"], how="semi"),
    ])
    return Selected(tuple(stored_pair(row) for row in top.iter_rows(named=True)), failing, passing,
                    config.max_pairs, findings_by_pair(findings), survivors_by_pair(mutants),
                    read_options(config.out, runs, config.source_root), config.source_root)


def render_pages(selected: Selected, out: str, *, folder: bool,
                 write: Callable[[PairPage, str], None] | None = None) -> PairPages:
    """Every selected pair's page, drawn as its record is read back: held in `PairPage.html`,
    or handed to `write` (with the pair's section) and dropped at once."""
    made: dict[int, PairPage] = {}
    for shown in iter_shown(selected.pairs, selected.findings, selected.survivors, selected.options,
                            selected.root):
        key = pair_key(shown.pair)
        html = pair_section(shown, key, out, folder=folder)
        page = PairPage(key, shown.pair, shown.state, _facets(shown), len(shown.view.findings),
                        "" if write is not None else html)
        if write is not None:
            write(page, html)
        made[id(shown.pair)] = page
    return PairPages(tuple(made[id(pair)] for pair in selected.pairs), selected.failing, selected.passing,
                     selected.cap)


def gather_pages(config: ReportConfig, data: ReportData) -> PairPages:
    """The pair pages of a one-file report of `data`, worst first, at most `config.max_pairs`."""
    return render_pages(select_pages(config, data), data.out, folder=False)
