"""`compute_stats`: per check and per operator, grouped by compactor, log_date or run_id."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from frayproof_audit.corpus import audit, compute_stats, read_table
from frayproof_audit.corpus.stats import StatsError
from tests.corpus_support import BAD_LINES, FAILING, good_lines, write_contract, write_jsonl


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run a: 16 pairs over two nights + one bad line; run b: 4 pairs on a third night."""
    folder = tmp_path_factory.mktemp("stats")
    contract = str(write_contract(folder))
    first = write_jsonl(folder / "a.jsonl", good_lines(8) + good_lines(8, start=8, night=1)
                        + [BAD_LINES["missing_after"][0]])
    second = write_jsonl(folder / "b.jsonl", good_lines(4, start=100, night=2))
    audit([str(first)], contract, str(folder / "out"), jobs=1, run_id="a")
    audit([str(second)], contract, str(folder / "out"), jobs=1, run_id="b")
    return folder / "out"


def test_per_check_over_the_whole_dataset(two_runs: Path) -> None:
    stats = compute_stats(two_runs)
    assert stats.runs == 2
    rows = {row["check"]: row for row in stats.checks.to_dicts()}
    assert set(rows) == set(FAILING.values())
    for compactor, check in FAILING.items():
        row = rows[check]
        assert row["pairs_checked"] == 20
        assert row["failing_pairs"] == row["pairs_affected"] == 5, compactor
        assert row["failure_rate"] == pytest.approx(5 / 20)
        assert row["findings"] == row["errors"] + row["warnings"] >= 5


def test_per_operator_matches_the_mutants_table(two_runs: Path) -> None:
    stats = compute_stats(two_runs)
    mutants = read_table(two_runs, "mutants").collect()
    assert stats.operators["caught"].sum() == mutants.filter(pl.col("status") == "caught").height
    assert stats.operators["survived"].sum() == mutants.filter(pl.col("status") == "survived").height
    for row in stats.operators.to_dicts():
        assert row["applicable"] == row["caught"] + row["survived"]
        expected = row["survived"] / row["applicable"] if row["applicable"] else None
        assert row["survival_rate"] == expected
    runs = read_table(two_runs, "runs").collect()
    assert stats.operators["caught"].sum() == runs["mutants_caught"].sum()


def test_by_compactor(two_runs: Path) -> None:
    stats = compute_stats(two_runs, by="compactor")
    rows = {(row["compactor"], row["check"]): row for row in stats.checks.to_dicts()}
    assert set(rows) == {(compactor, check) for compactor, check in FAILING.items()}
    for row in rows.values():
        assert row["pairs_checked"] == 5 and row["failure_rate"] == 1.0
    operators = stats.operators
    assert set(operators["compactor"]) == {"keep_all", "window"}  # only passing pairs are mutated


def test_by_log_date_and_run_id(two_runs: Path) -> None:
    by_date = compute_stats(two_runs, by="log_date")
    dates = {str(d) for d in by_date.checks["log_date"]}
    assert dates == {"2025-06-02", "2025-06-03", "2025-06-04"}
    checked = {str(r["log_date"]): r["pairs_checked"] for r in by_date.checks.to_dicts()}
    assert checked == {"2025-06-02": 8, "2025-06-03": 8, "2025-06-04": 4}
    by_run = compute_stats(two_runs, by="run_id")
    checked_runs = {r["run_id"]: r["pairs_checked"] for r in by_run.checks.to_dicts()}
    assert checked_runs == {"a": 16, "b": 4}
    assert set(by_run.operators["run_id"]) == {"a", "b"}


def test_only_committed_runs_count(two_runs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "out"
    shutil.copytree(two_runs, copy)
    (copy / "runs" / "part-b.parquet").unlink()  # as if run b had never committed
    stats = compute_stats(copy)
    assert stats.runs == 1
    assert {row["pairs_checked"] for row in stats.checks.to_dicts()} == {16}


def test_renderings(two_runs: Path) -> None:
    stats = compute_stats(two_runs, by="compactor")
    text = stats.to_text()
    assert "2 committed run(s), by compactor" in text and "failure_rate" in text and "100.0%" in text
    data = stats.to_dict()
    assert data["checks"][0]["compactor"] in FAILING
    tidy = stats.tidy()
    assert tidy.columns[:3] == ["table", "compactor", "name"]
    assert tidy.height == stats.checks.height + stats.codes.height + stats.operators.height
    assert tidy.columns[-1] == "code"
    assert set(tidy.filter(pl.col("table") == "codes")["code"]) == set(stats.codes["code"])
    dates = compute_stats(two_runs, by="log_date").to_dict()
    assert dates["checks"][0]["log_date"] == "2025-06-02"


def test_per_condition_code(two_runs: Path) -> None:
    stats = compute_stats(two_runs)
    codes = stats.codes
    assert codes.columns[:2] == ["check", "code"] and codes["code"].null_count() == 0
    findings = read_table(two_runs, "findings").collect()
    expected = findings.group_by("check", "code").len().sort("check", "code")
    assert codes.select("check", "code", pl.col("findings").cast(pl.UInt32).alias("len")).equals(expected)
    for row in codes.to_dicts():
        assert row["pairs_checked"] == 20
        assert row["failure_rate"] == pytest.approx(row["failing_pairs"] / 20)
        assert row["failing_pairs"] <= row["pairs_affected"] <= row["findings"]
    by_compactor = compute_stats(two_runs, by="compactor").codes
    assert {(r["compactor"], r["check"]) for r in by_compactor.to_dicts()} == set(FAILING.items())
    assert "Condition codes" in stats.to_text() and stats.to_dict()["codes"] == codes.to_dicts()


def test_unknown_grouping() -> None:
    with pytest.raises(StatsError, match="unknown --by"):
        compute_stats(".", by="colour")
