"""`stats`, `trend` and `report` compute the same rates and intervals over the same unit
(issue 27, item 6): a check's failure rate over the pairs checked with its Wilson interval over
them; an operator's survival over the mutants judged with its interval over the pairs it
applied to. And `stats` shows only the groups that judged something, unless `--all-groups`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frayproof_audit.htmlreport import ReportConfig
from frayproof_audit.htmlreport.data import gather
from tests.helpers import run_cli
from tests.trend_support import build_nights


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_nights(tmp_path_factory.mktemp("vocabulary"))


def _by(rows: list[dict[str, object]], *keys: str) -> dict[tuple[object, ...], dict[str, object]]:
    return {tuple(row[key] for key in keys): row for row in rows}


def test_stats_per_night_has_the_trends_rates_and_intervals(nights: Path) -> None:
    stats = json.loads(run_cli("stats", nights, "--by", "log_date", "--format", "json", real=True).stdout)
    trend = json.loads(run_cli("trend", nights, "--format", "json").stdout)
    checks = _by(stats["checks"], "log_date", "check")
    compared = 0
    for row in trend["checks"]:
        mine = checks[row["log_date"], row["check"]]
        assert (mine["failure_rate"], mine["failure_low"], mine["failure_high"]) == pytest.approx(
            (row["rate"], row["low"], row["high"]))
        compared += 1
    operators = _by(stats["operators"], "log_date", "operator")
    for row in trend["operators"]:
        if not row["applicable"]:
            continue
        mine = operators[row["log_date"], row["operator"]]
        assert mine["pairs"] == row["pairs"] and mine["applicable"] == row["applicable"]
        assert (mine["survival_rate"], mine["survival_low"], mine["survival_high"]) == pytest.approx(
            (row["rate"], row["low"], row["high"]))
        compared += 1
    assert compared > 100


def test_the_report_has_the_stats_rates_and_intervals(nights: Path, tmp_path: Path) -> None:
    stats = json.loads(run_cli("stats", nights, "--format", "json").stdout)
    data = gather(ReportConfig(str(nights), str(tmp_path / "r.html")))
    mine = _by(stats["operators"], "operator")
    for row in data.operators.iter_rows(named=True):
        theirs = mine[(row["operator"],)]
        assert row["pairs"] == theirs["pairs"]
        assert (row["survival_rate"], row["low"], row["high"]) == pytest.approx(
            (theirs["survival_rate"], theirs["survival_low"], theirs["survival_high"]), nan_ok=True)
    checks = _by(stats["checks"], "check")
    for row in data.checks.iter_rows(named=True):
        assert row["failure_rate"] == pytest.approx(checks[(row["check"],)]["failure_rate"])


def test_stats_shows_only_groups_that_judged_something_unless_all_groups(nights: Path) -> None:
    text = run_cli("stats", nights, "--by", "compactor", real=True).stdout
    every = run_cli("stats", nights, "--by", "compactor", "--all-groups").stdout
    operators = text.split("Mutation operators", 1)[1]
    # drop_result and drop_system pairs all fail: nothing of them is mutated, nothing to show
    assert "drop_result" not in operators and "keep_all" in operators
    assert "drop_result" in every.split("Mutation operators", 1)[1]
    assert len(text.splitlines()) < len(every.splitlines())
    placeholders = json.loads(run_cli("stats", nights, "--by", "compactor", "--format", "json").stdout)
    assert all(row["applicable"] for row in placeholders["operators"] if row["compactor"] == "keep_all"
               and row["operator"] == "drop_tool_result")
    assert not [row for row in placeholders["operators"] if row["compactor"] == "drop_result"]
    assert {row["compactor"] for row in placeholders["pairs"]} == {
        "drop_result", "drop_system", "keep_all", "window"}  # every group keeps its pairs row


def test_the_unit_is_said_once_in_the_docs() -> None:
    from tests.helpers import REPO

    trends = (REPO / "docs" / "trends.md").read_text(encoding="utf-8")
    assert trends.count("## One statistics vocabulary") == 1
    section = trends.split("## One statistics vocabulary", 1)[1].split("\n## ", 1)[0]
    for word in ("stats", "trend", "report", "notebook", "pairs checked", "pairs it applied to"):
        assert word in section


def test_the_notebook_counts_with_the_library(nights: Path) -> None:
    import nbformat

    from tests.helpers import REPO

    notebook = nbformat.read(REPO / "notebooks" / "audit_analysis.ipynb", as_version=4)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert "compute_stats(" in code and "choose_runs(" in code
    assert "Z = " not in code  # no interval of its own: the library's, over the same unit
