"""The regression gate, the badge, the charts and the `trend` command, on the small nightly
dataset of tests/trend_support.py (the example corpus's eight nights: tests/test_examples.py)."""

from __future__ import annotations

import builtins
import json
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from frayproof_audit.cli import main, trend_cmd
from frayproof_audit.corpus.dataset.selection import Selection
from frayproof_audit.trends import TrendConfig, compute_trend
from frayproof_audit.trends.badge import badge
from frayproof_audit.trends.charts import PlotExtraMissing, write_chart
from frayproof_audit.trends.gate import DEFAULT_MIN_PAIRS, find_regressions
from frayproof_audit.trends.series import DEFAULT_BASELINE
from tests.trend_support import NOISY_NIGHT, REGRESSION_NIGHT, build_nights


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_nights(tmp_path_factory.mktemp("gate"))


def test_the_gate_names_the_regression_with_both_numbers(nights: Path) -> None:
    gate = find_regressions(compute_trend(TrendConfig(nights, baseline=3)), 10)
    assert gate.exit_code == 1 and gate.period == REGRESSION_NIGHT
    (regression,) = gate.regressions
    assert (regression.kind, regression.name) == ("check", "tool_pair_integrity")
    assert regression.rate == pytest.approx(0.6) and regression.baseline == pytest.approx(0.1)
    text = gate.to_text()
    assert "tool_pair_integrity: failure rate 60.0% on 2025-06-08" in text
    assert "vs baseline 10.0%: +50.0 points" in text
    assert gate.to_dict()["regressions"][0]["change_points"] == pytest.approx(50.0)
    # a margin above the change does not trip
    assert find_regressions(compute_trend(TrendConfig(nights, baseline=3)), 55).exit_code == 0


def test_a_three_pair_night_cannot_trip_the_gate(nights: Path) -> None:
    trend = compute_trend(TrendConfig(nights, Selection(until=date.fromisoformat(NOISY_NIGHT))))
    row = trend.checks.filter(pl.col("check") == "pinned_content").row(-1, named=True)
    assert row["rate"] == pytest.approx(2 / 3) and row["change"] > 0.5  # noisy: +57 points
    for points in (0, 10):
        gate = find_regressions(trend, points)
        assert gate.exit_code == 0, gate.to_text()
        # shown, on a line of its own, not judged
        assert "\n  check pinned_content: not judged: 3 pairs < 20 (--min-pairs)" in gate.to_text()
        strict = find_regressions(trend, points, strict=True)  # --strict-min-pairs: it fails
        assert strict.exit_code == 1 and not strict.regressions, strict.to_text()
        assert strict.to_dict()["too_few_pairs"] == [
            {"kind": "check", "name": "pinned_content", "pairs": 3}]
    # judged anyway (min_pairs 1), 2 of 3 failing is beyond the noise of a 10% baseline
    assert find_regressions(trend, 10, min_pairs=1).exit_code == 1


def test_every_night_but_the_regression_passes(nights: Path) -> None:
    verdicts = {}
    for night in range(1, 7):
        until = date(2025, 6, 2 + night)
        gate = find_regressions(compute_trend(TrendConfig(nights, Selection(until=until))), 10)
        verdicts[until.isoformat()] = gate.exit_code
    assert verdicts == {d: int(d == REGRESSION_NIGHT) for d in verdicts}


def test_badge(nights: Path) -> None:
    data = badge(compute_trend(TrendConfig(nights)))
    assert data["schemaVersion"] == 1 and data["label"] == "mutation score"
    assert data["message"] == "73.3%" and data["color"] == "yellow"


def test_charts_png_and_svg(nights: Path, tmp_path: Path) -> None:
    trend = compute_trend(TrendConfig(nights, baseline=3))
    gate = find_regressions(trend, 10)
    png = write_chart(trend, tmp_path / "t.png", gate=gate)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = write_chart(trend, tmp_path / "t.svg", gate=gate).read_text()
    assert "<svg" in svg and "tool_pair_integrity (failure rate)" in svg
    assert "pinned_content (failure rate)" in svg and "structure (failure" not in svg  # flat 0%
    again = write_chart(trend, tmp_path / "u.svg", gate=gate).read_text()
    assert again == svg  # deterministic
    with pytest.raises(Exception, match="chart format"):
        write_chart(trend, tmp_path / "t.gif")


def test_charts_without_matplotlib(nights: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = builtins.__import__

    def no_matplotlib(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    trend = compute_trend(TrendConfig(nights))
    with pytest.raises(PlotExtraMissing, match=r"pip install 'frayproof-audit\[plot\]'"):
        write_chart(trend, tmp_path / "t.png")
    result = CliRunner().invoke(main, ["trend", str(nights), "--png", str(tmp_path / "t.png")])
    assert result.exit_code == 2 and "frayproof-audit[plot]" in result.stderr


def test_cli_defaults_match_the_library() -> None:
    assert trend_cmd.DEFAULT_BASELINE == DEFAULT_BASELINE
    assert trend_cmd.DEFAULT_MIN_PAIRS == DEFAULT_MIN_PAIRS


def test_cli_table_json_csv_parquet_badge(nights: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    table = runner.invoke(main, ["trend", str(nights), "--baseline", "3"])
    assert table.exit_code == 0, table.output
    assert "Trend over 7 night(s), 2025-06-02 … 2025-06-08: 7 run(s)" in table.stdout
    assert "Since when" in table.stdout and "Gate" not in table.stdout
    gated = runner.invoke(main, ["trend", str(nights), "--baseline", "3", "--fail-on-regression", "10",
                                 "--format", "json", "--badge", str(tmp_path / "badge.json")])
    assert gated.exit_code == 1
    data = json.loads(gated.stdout)
    assert data["gate"]["regressions"][0]["name"] == "tool_pair_integrity"
    assert data["periods"][-1] == REGRESSION_NIGHT and len(data["runs"]) == 7
    assert json.loads((tmp_path / "badge.json").read_text())["schemaVersion"] == 1
    csv_run = runner.invoke(main, ["trend", str(nights), "--format", "csv", "--fail-on-regression", "10",
                                   "--baseline", "3"])
    assert csv_run.exit_code == 1 and "REGRESSION on 2025-06-08" in csv_run.stderr
    assert csv_run.stdout.splitlines()[0].startswith("series,log_date,name,code,")
    target = tmp_path / "trend.parquet"
    done = runner.invoke(main, ["trend", str(nights), "--format", "parquet", "--output", str(target),
                                "--per", "run", "--compactor", "keep_all"])
    assert done.exit_code == 0, done.output
    frame = pl.read_parquet(target)
    assert set(frame["series"]) == {"checks", "codes", "operators"} and "run_id" in frame.columns


@pytest.mark.parametrize(("args", "message"), [
    (("--format", "parquet"), "needs --output"),
    (("--baseline", "0"), "Invalid value"),
    (("--since", "2025-06-09", "--until", "2025-06-02"), "is after"),
    (("--run", "nope"), "no committed run 'nope'"),
    (("--since", "June"), "Invalid value"),
    (("--compactor", "nobody"), "no committed pairs"),
])
def test_cli_bad_usage(nights: Path, args: tuple[str, ...], message: str) -> None:
    result = CliRunner().invoke(main, ["trend", str(nights), *args])
    assert result.exit_code == 2 and message in result.output + result.stderr, result.output


def test_cli_not_a_dataset(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["trend", str(tmp_path)])
    assert result.exit_code == 2 and "not an audit dataset" in result.stderr


def test_the_first_period_has_no_baseline_to_fail(nights: Path) -> None:
    trend = compute_trend(TrendConfig(nights, Selection(runs=("night-6",)), per="run"))
    gate = find_regressions(trend, 0)
    assert gate.exit_code == 0 and not gate.baselined
    assert gate.to_text() == "Gate passed: night-6 is the first period, there is no baseline yet."
