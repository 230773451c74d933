"""The committed runs of a dataset, one row each: what `frayproof-audit runs OUT` lists.

Every committed run is listed, whatever it holds (a failed run, an incremental run that found
nothing new, a rejudged copy), oldest first, with the contract key `stats`, `trend` and
`report` choose by (`selection.run_infos`) and the status they leave failed runs out by.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import polars as pl

from frayproof_audit.corpus.dataset.selection import run_infos, short
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.dataset.text_table import text_table
from frayproof_audit.corpus.store.run_status import RunStatus

RUN_LIST_COLUMNS = ("run_id", "started_at", "contract", "status", "pairs", "passed", "failed",
                    "input_errors", "engine_errors", "input_error_share", "rejudge_of")
_RUNS_COLUMNS = ("run_id", "started_at", "contract_fingerprint", "contract_sha256", "contract_text",
                 "schema_version", "status", "pairs", "passed", "failed", "input_errors",
                 "engine_errors", "rejudge_of")


@dataclass(frozen=True, slots=True)
class RunList:
    """The committed runs of `out`, oldest first (`runs`: one row each, `RUN_LIST_COLUMNS`)."""

    out: str
    runs: pl.DataFrame

    def to_text(self) -> str:
        if self.runs.height == 0:
            return f"No committed run in '{self.out}'."
        failed = self.runs.filter(pl.col("status") == RunStatus.FAILED).height
        contracts = self.runs["contract"].n_unique()
        head = (f"{self.runs.height} committed run(s) in '{self.out}', {contracts} contract(s)"
                + (f", {failed} failed (left out of stats, trend and report)" if failed else ""))
        shown = self.runs.with_columns(
            pl.col("started_at").dt.strftime("%Y-%m-%d %H:%M:%S"),
            pl.col("contract").map_elements(short, return_dtype=pl.String),
        ).select("run_id", "started_at", "contract", "status", "pairs", "input_errors",
                 "input_error_share", *(["rejudge_of"] if self.runs["rejudge_of"].null_count()
                                        < self.runs.height else []))
        return "\n".join([head, "", text_table(shown.rename({"started_at": "started_at (UTC)"}),
                                               percent=("input_error_share",))])

    def to_dict(self) -> dict[str, Any]:
        def plain(value: Any) -> Any:
            return value.isoformat() if isinstance(value, datetime) else value

        return {"out": self.out,
                "runs": [{key: plain(value) for key, value in row.items()} for row in self.runs.to_dicts()]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def tidy(self) -> pl.DataFrame:
        return self.runs


def list_runs(out: str | os.PathLike[str]) -> RunList:
    """Every committed run of `out`; `DatasetError` when OUT is not a dataset (or is damaged)."""
    rows = read_table(out, "runs").select(*_RUNS_COLUMNS).sort("started_at", "run_id").collect()
    infos = run_infos(rows)
    frame = rows.with_columns(
        pl.Series("contract", [info.contract for info in infos], pl.String),
        pl.Series("status", [str(info.status) for info in infos], pl.String),
        pl.col("engine_errors").fill_null(0),
    ).with_columns(
        pl.when(pl.col("pairs") > 0).then(pl.col("input_errors") / pl.col("pairs"))
        .alias("input_error_share"))
    return RunList(os.fspath(out), frame.select(RUN_LIST_COLUMNS))
