"""`compute_trend`: per-night series with baselines, zero rows, streaks and contract guards."""

from __future__ import annotations

import shutil
import statistics
from datetime import date
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.corpus.dataset.selection import MixedContracts, Selection
from frayproof_audit.trends import TrendConfig, TrendError, compute_trend
from tests.corpus_support import CONTRACT_TEXT
from tests.trend_support import NOISY_NIGHT, REGRESSION_NIGHT, build_nights


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_nights(tmp_path_factory.mktemp("nights"))


def _row(frame: pl.DataFrame, night: str, **keys: str) -> dict[str, object]:
    rows = frame.filter(pl.col("log_date") == date.fromisoformat(night), *(
        pl.col(k) == v for k, v in keys.items())).to_dicts()
    assert len(rows) == 1, rows
    return rows[0]


def test_one_row_per_night_and_name_zero_rows_included(nights: Path) -> None:
    trend = compute_trend(TrendConfig(nights, baseline=3))
    assert len(trend.periods) == 7 and trend.latest == date(2025, 6, 8)
    assert trend.runs == tuple(f"night-{n}" for n in range(7))
    checks = set(trend.checks["check"])
    assert {"tool_pair_integrity", "unique_tool_ids", "structure", "pinned_content",
            "retention"} <= checks
    assert trend.checks.height == 7 * len(checks)
    structure = trend.checks.filter(pl.col("check") == "structure")
    assert structure["failing_pairs"].sum() == 0 and structure["rate"].to_list() == [0.0] * 7
    assert trend.operators.height == 7 * trend.operators["operator"].n_unique()
    codes = set(trend.codes["code"])
    assert {"TP-ORPHAN", "TP-UNANSWERED", "PIN-ROLE", "RET-LATEST"} <= codes


def test_rates_intervals_and_the_trailing_median(nights: Path) -> None:
    trend = compute_trend(TrendConfig(nights, baseline=3))
    first = _row(trend.checks, "2025-06-02", check="tool_pair_integrity")
    assert first["rate"] == pytest.approx(0.1) and first["baseline"] is None
    assert first["low"] < 0.1 < first["high"]  # type: ignore[operator]
    latest = _row(trend.checks, REGRESSION_NIGHT, check="tool_pair_integrity")
    assert (latest["pairs_checked"], latest["failing_pairs"]) == (20, 12)
    assert latest["baseline"] == pytest.approx(0.1)  # median of 10%, 0% (the noisy night), 10%
    assert latest["baseline_min"] == 0.0 and latest["change"] == pytest.approx(0.5)
    assert latest["beyond_noise"] is True
    noisy = _row(trend.checks, NOISY_NIGHT, check="pinned_content")
    assert noisy["pairs_checked"] == 3 and noisy["rate"] == pytest.approx(2 / 3)
    assert noisy["high"] - noisy["low"] > 0.6  # type: ignore[operator]
    after = _row(trend.checks, REGRESSION_NIGHT, check="pinned_content")
    assert after["baseline"] == pytest.approx(0.1) and after["baseline_max"] == pytest.approx(2 / 3)


def test_totals_and_streaks(nights: Path) -> None:
    trend = compute_trend(TrendConfig(nights))
    totals = trend.totals.to_dicts()
    assert [row["pairs"] for row in totals] == [20, 20, 20, 20, 20, 3, 20]
    assert totals[-1]["failed"] == 12
    for row in totals:
        judged = row["mutants_caught"] + row["mutants_survived"]
        assert row["mutation_score"] == pytest.approx(row["mutants_caught"] / judged)
    streaks = {(r["compactor"], r["check"]): r for r in trend.streaks.to_dicts()}
    assert set(streaks) == {("drop_result", "tool_pair_integrity"), ("drop_system", "pinned_content")}
    result = streaks["drop_result", "tool_pair_integrity"]
    # drop_result was not audited on the noisy night: that neither breaks nor extends its streak
    assert (result["first_failed"], result["since"], result["streak"]) == (
        date(2025, 6, 2), date(2025, 6, 2), 6)
    system = streaks["drop_system", "pinned_content"]
    assert system["last_failed"] == date(2025, 6, 7) and system["streak"] == 6  # absent on 06-08


def test_filters_and_per_run(nights: Path) -> None:
    window = compute_trend(TrendConfig(nights, Selection(since=date(2025, 6, 4), until=date(2025, 6, 6))))
    assert window.periods == (date(2025, 6, 4), date(2025, 6, 5), date(2025, 6, 6))
    assert window.runs == ("night-2", "night-3", "night-4")
    one = compute_trend(TrendConfig(nights, Selection(compactors=("drop_result",))))
    assert set(one.checks.filter(pl.col("failing_pairs") > 0)["check"]) == {"tool_pair_integrity"}
    rates = one.checks.filter(pl.col("check") == "tool_pair_integrity")["rate"].drop_nulls()
    assert rates.to_list() == [1.0] * 6
    per_run = compute_trend(TrendConfig(nights, Selection(runs=("night-6", "night-0")), per="run"))
    assert per_run.period == "run_id" and per_run.periods == ("night-0", "night-6")
    with pytest.raises(TrendError, match="no committed pairs"):
        compute_trend(TrendConfig(nights, Selection(compactors=("nobody",))))
    with pytest.raises(TrendError, match="--baseline"):
        TrendConfig(nights, baseline=0)


def test_runs_of_different_contracts_count_the_latest_or_as_asked(nights: Path, tmp_path: Path) -> None:
    from frayproof_audit.corpus import audit
    from tests.corpus_support import good_lines, write_jsonl

    copy = tmp_path / "out"
    shutil.copytree(nights, copy)
    other = tmp_path / "other.yaml"
    other.write_text(CONTRACT_TEXT.replace("latest_user_message: exact", "recent_exchanges: 1"))
    source = write_jsonl(tmp_path / "x.jsonl", good_lines(4, start=900, night=8))
    audit([str(source)], str(other), str(copy), jobs=1, run_id="new-contract", fail_on=())
    latest = compute_trend(TrendConfig(copy))
    assert latest.runs == ("new-contract",) and latest.changes == ()
    assert [item.run.run_id for item in latest.chosen.left_out] == [f"night-{n}" for n in range(7)]
    assert latest.first_of_contract
    every = compute_trend(TrendConfig(copy, Selection(contract="all")))
    assert every.runs[-1] == "new-contract" and every.contract is None
    assert every.changes == ((date(2025, 6, 10), (latest.contract,)),)
    last = every.checks.filter(pl.col("log_date") == date(2025, 6, 10))
    assert last["baseline"].null_count() == last.height  # a new contract: no baseline yet
    with pytest.raises(MixedContracts) as info:  # runs named with --run are taken as named
        compute_trend(TrendConfig(copy, Selection(runs=("night-0", "new-contract"))))
    message = str(info.value)
    assert "2 different contracts" in message and "runs night-0" in message
    assert "runs new-contract" in message
    assert compute_trend(TrendConfig(copy, Selection(until=date(2025, 6, 9)))).runs[-1] == "night-6"
    assert compute_trend(TrendConfig(copy, Selection(since=date(2025, 6, 10)))).runs == ("new-contract",)


def test_older_runs_without_a_fingerprint_join_by_their_text(nights: Path, tmp_path: Path) -> None:
    copy = tmp_path / "out"
    shutil.copytree(nights, copy)
    path = copy / "runs" / "part-night-0.parquet"
    table = pq.read_table(path)
    blank = pa.nulls(1, pa.string())
    pq.write_table(table.set_column(table.schema.get_field_index("contract_fingerprint"),
                                    table.schema.field("contract_fingerprint"), blank), path)
    trend = compute_trend(TrendConfig(copy))
    assert trend.runs[0] == "night-0" and trend.contract == compute_trend(TrendConfig(nights)).contract


@settings(max_examples=50, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=1, max_size=12),
       st.integers(min_value=1, max_value=5), st.integers(min_value=0, max_value=12))
def test_the_baseline_is_the_median_of_the_previous_rated_periods(
    rates: list[float | None], length: int, change: int
) -> None:
    """Periods from `change` on were judged by another contract: their baseline is only theirs."""
    from frayproof_audit.trends.series import _with_baseline

    segments = [int(index >= change) for index in range(len(rates))]
    grid = pl.DataFrame({"name": ["x"] * len(rates), "_order": range(len(rates)),
                         "_segment": segments, "rate": rates,
                         "low": [None if r is None else r / 2 for r in rates]},
                        schema={"name": pl.String, "_order": pl.Int64, "_segment": pl.Int64,
                                "rate": pl.Float64, "low": pl.Float64})
    rows = _with_baseline(grid, ["name"], length).sort("_order").to_dicts()
    for index, row in enumerate(rows):
        start = change if index >= change else 0
        window = [r for r in rates[start:index] if r is not None][-length:]
        if not window:
            assert row["baseline"] is None and row["change"] is None
            continue
        assert row["baseline"] == pytest.approx(statistics.median(window))
        assert row["baseline_min"] == min(window) <= row["baseline"] <= max(window) == row["baseline_max"]
        if rates[index] is not None:
            assert row["change"] == pytest.approx(rates[index] - row["baseline"])
            assert row["beyond_noise"] == (row["baseline"] < row["low"] - 1e-9)
