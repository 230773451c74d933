"""A known-issue baseline from a dataset: `stats OUT --write-baseline FILE`.

Every error finding of the selected runs (by default those of the newest contract) becomes
one line of the file `audit --baseline-findings` reads (`corpus/run/baseline_file.py`): the
backlog as it stands, accepted for now, so a team can turn the gate on today and fix it later.
Findings of runs from before condition codes existed (code null) cannot be listed and are
counted apart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import polars as pl

from frayproof_audit.corpus.dataset.selection import (
    Chosen,
    Selection,
    SelectionError,
    choose_runs,
    nothing_chosen,
)
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.run.baseline_file import baseline_lines


@dataclass(frozen=True, slots=True)
class BaselineWritten:
    """What `write_baseline` wrote."""

    path: str
    findings: int
    """Lines written: distinct (pair_id, code) error findings."""
    pairs: int
    without_code: int
    """Error findings with no condition code (older runs): not listed."""
    chosen: Chosen

    def to_text(self) -> str:
        text = (f"Wrote {self.findings:,} error finding(s) of {self.pairs:,} pair(s) to"
                f" {self.path} (audit --baseline-findings {self.path} accepts them)")
        if self.without_code:
            text += (f"; {self.without_code:,} finding(s) of runs from before condition codes"
                     " have no code and are not listed")
        return text


def baseline_entries(out: str | os.PathLike[str], selection: Selection | None = None
                     ) -> tuple[list[tuple[str, str, str]], int, Chosen]:
    """The (pair_id, check, code) error findings of the chosen runs, and how many had no code."""
    asked = selection or Selection()
    chosen = choose_runs(out, asked)
    if not chosen.runs:
        raise SelectionError(nothing_chosen(out, asked, chosen))
    errors = (asked.of_runs(list(chosen.runs)).apply(read_table(out, "findings"))
              .filter(pl.col("severity") == "error")
              .select("pair_id", "check", "code").collect())
    coded = errors.filter(pl.col("code").is_not_null() & pl.col("pair_id").is_not_null())
    entries = [(str(p), str(c), str(k)) for p, c, k in coded.unique().iter_rows()]
    return entries, errors.height - coded.height, chosen


def write_baseline(out: str | os.PathLike[str], path: str,
                   selection: Selection | None = None) -> BaselineWritten:
    """Write the baseline of `out`'s chosen runs to `path` (replaced atomically)."""
    from frayproof_audit.files import write_through

    entries, without_code, chosen = baseline_entries(out, selection)
    write_through(path, baseline_lines(entries))
    return BaselineWritten(path, len(set((p, k) for p, _, k in entries)),
                           len({p for p, _, _ in entries}), without_code, chosen)
