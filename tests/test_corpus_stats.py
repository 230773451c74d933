"""`compute_stats`: per check and per operator, grouped by compactor, log_date or run_id."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.corpus import audit, compute_stats, read_table
from frayproof_audit.corpus.dataset.selection import MixedContracts, Selection, SelectionError
from frayproof_audit.corpus.dataset.stats import StatsError
from frayproof_audit.corpus.dataset.wilson import wilson, wilson_exprs
from tests.corpus_support import (
    BAD_LINES,
    CONTRACT_TEXT,
    FAILING,
    good_lines,
    write_contract,
    write_jsonl,
)


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
    failing = {check for check, row in rows.items() if row["failing_pairs"]}
    assert failing == set(FAILING.values())
    # every check the contract ran is a row, at zero when it never failed
    assert {"unique_tool_ids", "structure", "retention"} <= set(rows) - failing
    assert rows["structure"]["findings"] == rows["structure"]["failure_rate"] == 0
    assert rows["structure"]["passing_pairs"] == rows["structure"]["pairs_checked"] == 20
    assert all(row["input_errors"] == 1 for row in rows.values())  # the one bad line
    (pairs,) = stats.pairs.to_dicts()
    assert (pairs["pairs"], pairs["passed"], pairs["failed"], pairs["input_errors"]) == (21, 10, 10, 1)
    assert pairs["failure_rate"] == pytest.approx(0.5)
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
        if row["applicable"]:
            assert row["survival_low"] <= row["survival_rate"] <= row["survival_high"]
            assert row["survival_high"] - row["survival_low"] > 0
    runs = read_table(two_runs, "runs").collect()
    assert stats.operators["caught"].sum() == runs["mutants_caught"].sum()


def test_by_compactor(two_runs: Path) -> None:
    stats = compute_stats(two_runs, by="compactor")
    rows = {(row["compactor"], row["check"]): row for row in stats.checks.to_dicts()}
    failing = {key for key, row in rows.items() if row["failing_pairs"]}
    assert failing == {(compactor, check) for compactor, check in FAILING.items()}
    for key in failing:
        assert rows[key]["pairs_checked"] == 5 and rows[key]["failure_rate"] == 1.0
    # zero rows: every compactor × every active check, passing compactors included
    compactors = {"keep_all", "window", "drop_result", "drop_system"}
    assert {compactor for compactor, _ in rows} == compactors
    assert rows["keep_all", "tool_pair_integrity"]["failure_rate"] == 0.0
    assert len(rows) == len(compactors) * stats.checks["check"].n_unique()
    # only passing pairs are mutated: a compactor whose pairs all fail has no operator rows,
    # unless every group is asked for (its rows are then placeholders, null rates)
    assert set(stats.operators["compactor"]) == {"keep_all", "window"}
    operators = compute_stats(two_runs, by="compactor", all_groups=True).operators
    assert set(operators["compactor"]) == compactors
    mutated = operators.filter(pl.col("applicable") > 0)
    assert set(mutated["compactor"]) == {"keep_all", "window"}
    assert operators.filter(pl.col("compactor") == "drop_result")["survival_rate"].null_count() == \
        operators["operator"].n_unique()


def test_by_log_date_and_run_id(two_runs: Path) -> None:
    by_date = compute_stats(two_runs, by="log_date")
    dates = {str(d) for d in by_date.checks["log_date"]}
    assert dates == {"2025-06-02", "2025-06-03", "2025-06-04"}
    checked = {str(r["log_date"]): r["pairs_checked"] for r in by_date.checks.to_dicts()
               if r["log_date"] is not None and r["pairs_checked"]}
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
    assert data["by"] == ["compactor"] and data["checks"][0]["compactor"] in FAILING
    tidy = stats.tidy()
    assert tidy.columns[:3] == ["table", "compactor", "name"]
    assert tidy.height == (stats.pairs.height + stats.checks.height + stats.codes.height
                           + stats.operators.height)
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
    seen = codes.filter(pl.col("findings") > 0).sort("check", "code")
    assert seen.select("check", "code", pl.col("findings").cast(pl.UInt32).alias("len")).equals(expected)
    assert {"PIN-TEXT", "RET-LATEST", "UID-REUSED"} <= set(codes.filter(pl.col("findings") == 0)["code"])
    for row in codes.to_dicts():
        assert row["pairs_checked"] == 20
        assert row["failure_rate"] == pytest.approx(row["failing_pairs"] / 20)
        assert row["failing_pairs"] <= row["pairs_affected"] <= row["findings"]
    by_compactor = compute_stats(two_runs, by="compactor").codes
    assert {(r["compactor"], r["check"]) for r in by_compactor.to_dicts() if r["findings"]} == \
        set(FAILING.items())
    assert "Condition codes" in stats.to_text() and stats.to_dict()["codes"] == codes.to_dicts()


def test_unknown_grouping() -> None:
    with pytest.raises(StatsError, match="unknown --by"):
        compute_stats(".", by="colour")


def test_several_keys_at_once(two_runs: Path) -> None:
    stats = compute_stats(two_runs, by=["compactor", "log_date"])
    assert stats.by == ("compactor", "log_date")
    assert stats.checks.columns[:3] == ["compactor", "log_date", "check"]
    row = stats.checks.filter((pl.col("compactor") == "drop_result")
                              & (pl.col("log_date") == date(2025, 6, 3))
                              & (pl.col("check") == "tool_pair_integrity")).to_dicts()
    assert len(row) == 1 and row[0]["pairs_checked"] == row[0]["failing_pairs"] == 2
    groups = stats.pairs.select("compactor", "log_date").unique().height
    assert stats.checks.height == groups * stats.checks["check"].n_unique()
    # the groups partition the pairs: per compactor and night, they add up to the whole
    assert stats.pairs["pairs"].sum() == compute_stats(two_runs).pairs["pairs"].item()
    assert "by compactor, log_date" in stats.to_text()
    assert compute_stats(two_runs, by=["run_id", "run_id"]).by == ("run_id",)


def test_filters(two_runs: Path) -> None:
    only_b = compute_stats(two_runs, selection=Selection(runs=("b",)))
    assert only_b.runs == 1 and only_b.pairs["pairs"].item() == 4
    night = compute_stats(two_runs, selection=Selection(since=date(2025, 6, 3), until=date(2025, 6, 3)))
    assert night.runs == 1 and night.pairs["pairs"].item() == 8
    one = compute_stats(two_runs, by="compactor", selection=Selection(compactors=("drop_system",)))
    assert set(one.pairs["compactor"]) == {"drop_system"}
    assert one.checks.filter(pl.col("failing_pairs") > 0)["check"].to_list() == ["pinned_content"]
    assert "compactors drop_system" in one.to_text()
    with pytest.raises(SelectionError, match="no committed run 'zzz'"):
        compute_stats(two_runs, selection=Selection(runs=("zzz",)))
    with pytest.raises(SelectionError, match="is after"):
        Selection(since=date(2025, 6, 4), until=date(2025, 6, 2))


def test_runs_of_two_contracts_count_the_latest_unless_asked(two_runs: Path, tmp_path: Path) -> None:
    copy = tmp_path / "out"
    shutil.copytree(two_runs, copy)
    other = tmp_path / "other.yaml"
    other.write_text(CONTRACT_TEXT.replace("pending_call: true", "pending_call: false"))
    same_meaning = tmp_path / "reordered.yaml"  # comments and order differ, meaning does not
    same_meaning.write_text("# nightly\n" + CONTRACT_TEXT)
    source = write_jsonl(tmp_path / "c.jsonl", good_lines(4, start=200, night=3))
    audit([str(source)], str(same_meaning), str(copy), jobs=1, run_id="c", fail_on=())
    assert compute_stats(copy).runs == 3
    audit([str(source)], str(other), str(copy), jobs=1, run_id="d", fail_on=())
    latest = compute_stats(copy, by="compactor")  # the newest contract's runs, the others named
    assert latest.runs == 1 and latest.contract is not None
    assert [item.run.run_id for item in latest.chosen.left_out] == ["a", "b", "c"]
    assert "left out 3 run(s) of 1 other contract(s)" in latest.to_text()
    older = compute_stats(copy, selection=Selection(contract=compute_stats(copy, selection=Selection(
        runs=("a",))).contract[:12]))
    assert older.runs == 3
    with pytest.raises(MixedContracts) as info:  # runs named with --run are taken as named
        compute_stats(copy, selection=Selection(runs=("a", "d")))
    assert "runs a" in str(info.value) and "runs d" in str(info.value)
    by_run = compute_stats(copy, by="run_id", selection=Selection(contract="all"))
    assert by_run.contract is None and set(by_run.checks["run_id"]) == {"a", "b", "c", "d"}
    assert compute_stats(copy, selection=Selection(runs=("d",))).runs == 1


def test_cli_several_keys_and_filters(two_runs: Path) -> None:
    import json

    from click.testing import CliRunner

    from frayproof_audit.cli import main

    result = CliRunner().invoke(main, ["stats", str(two_runs), "--by", "compactor", "--by", "log_date",
                                       "--since", "2025-06-03", "--compactor", "drop_result",
                                       "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["by"] == ["compactor", "log_date"]
    assert data["filters"] == "since 2025-06-03; compactors drop_result"
    groups = {(row["compactor"], row["log_date"]) for row in data["pairs"]}
    assert groups == {("drop_result", "2025-06-03"), ("drop_result", "2025-06-04")}
    bad = CliRunner().invoke(main, ["stats", str(two_runs), "--run", "nope"])
    assert bad.exit_code == 2 and "no committed run 'nope'" in bad.stderr


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=500), st.data())
def test_wilson_interval_holds_the_rate_and_matches_the_polars_form(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(min_value=0, max_value=n))
    low, high = wilson(k / n, n)
    assert 0.0 <= low <= k / n + 1e-12 and k / n - 1e-12 <= high <= 1.0
    wider = wilson(k / n, max(1, n // 4))  # fewer trials, same rate: never a narrower interval
    assert wider[1] - wider[0] >= high - low - 1e-12
    frame = pl.DataFrame({"rate": [k / n], "n": [n]})
    frame = frame.select(wilson_exprs(pl.col("rate"), pl.col("n"), "lo", "hi"))
    assert frame.row(0) == pytest.approx((low, high))
