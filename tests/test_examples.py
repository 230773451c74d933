"""The bundled examples stay true: the corpus is what its script makes, the README's audit and
stats output is what the tools print on it, and `make demo`'s script runs."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from frayproof_audit.cli import main
from frayproof_audit.corpus.dataset.selection import Selection
from frayproof_audit.trends import TrendConfig, compute_trend
from frayproof_audit.trends.gate import find_regressions

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_block(command: str) -> list[str]:
    """The lines printed under `$ <command>` in a README ```text block."""
    match = re.search(r"```text\n\$ " + re.escape(command) + r"\n(.*?)```", README, re.DOTALL)
    assert match, f"README has no text block for {command!r}"
    return match.group(1).rstrip("\n").splitlines()


def test_example_corpus_is_what_its_script_makes() -> None:
    completed = subprocess.run([sys.executable, "examples/make_corpus.py", "--check"], cwd=ROOT,
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    out = tmp_path_factory.mktemp("readme") / "demo-out"
    result = CliRunner().invoke(main, [
        "audit", str(ROOT / "examples/corpus"), "--contract",
        str(ROOT / "examples/audit_contract.yaml"), "--out", str(out), "--run-id", "demo",
        "--jobs", "1", "-q",
    ])
    assert result.exit_code == 1, result.output
    return out, result.stdout.rstrip("\n").splitlines()


def test_readme_audit_summary_is_real(audited: tuple[Path, list[str]],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _, printed = audited
    documented = readme_block("frayproof-audit audit examples/corpus --contract "
                              "examples/audit_contract.yaml --out demo-out --run-id demo")
    assert documented[-1] == "[exit 1]"
    # The first line carries the wall time and the output folder; the rest must match exactly.
    assert re.fullmatch(r"Run demo: 552 pairs audited in [0-9.]+s \(\d+ shard\(s\)\) → .*",
                        printed[0]), printed[0]
    corpus = str(ROOT / "examples/corpus")
    assert [line.replace(corpus, "examples/corpus") for line in printed[1:]] == documented[1:-1]


def test_readme_stats_are_real(audited: tuple[Path, list[str]]) -> None:
    out, _ = audited
    result = CliRunner().invoke(main, ["stats", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip("\n").splitlines() == readme_block("frayproof-audit stats demo-out")


def test_demo_script_runs(tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, "examples/demo.py"], cwd=ROOT,
                               capture_output=True, text=True, check=False, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert "Run demo: 552 pairs audited" in completed.stdout
    assert "failing_pairs" in completed.stdout
    assert "REGRESSION on 2025-06-09" in completed.stdout  # the trend step, its gate and chart
    chart = ROOT / "demo-out" / "trend.png"
    assert f"Trend chart: {chart}" in completed.stdout and chart.stat().st_size > 10_000


def test_notebook_runs_on_a_real_dataset(audited: tuple[Path, list[str]],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import polars as pl

    out, _ = audited
    monkeypatch.setenv("FRAYPROOF_AUDIT_OUT", str(out))
    notebook = json.loads((ROOT / "notebooks/audit_analysis.ipynb").read_text(encoding="utf-8"))
    namespace: dict[str, object] = {}
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            exec("".join(cell["source"]), namespace)  # our own notebook, run as written
    by_compactor = namespace["by_compactor"]
    survival = namespace["survival"]
    assert isinstance(by_compactor, pl.DataFrame) and isinstance(survival, pl.DataFrame)
    rates = dict(zip(by_compactor["compactor"], by_compactor["failure_rate"], strict=True))
    assert rates["drop_system_prompt"] == 1.0 and rates["keep_last_window"] == 0.0
    assert survival["applicable"].sum() > 0


# The example corpus night by night: `trend` finds the planted regression and nothing else.
EXAMPLE_NIGHTS = [f"2025-06-0{n}" for n in range(2, 10)]
EXAMPLE_REGRESSION = "2025-06-09"
EXAMPLE_QUIET = "2025-06-08"


def test_example_corpus_has_exactly_the_planted_regression(audited: tuple[Path, list[str]]) -> None:
    example, _ = audited
    trend = compute_trend(TrendConfig(example))
    assert [p.isoformat() for p in trend.periods] == EXAMPLE_NIGHTS
    gate = find_regressions(trend, 10)
    assert [(r.kind, r.name, r.period) for r in gate.regressions] == [
        ("check", "retention", EXAMPLE_REGRESSION)]
    # the cause, in the codes and the since-when view: summary_keep_last_n cuts the request
    code = trend.codes.filter(pl.col("code") == "RET-LATEST").row(-1, named=True)
    assert code["beyond_noise"] and code["change"] > 0.2
    streak = trend.streaks.filter(pl.col("compactor") == "summary_keep_last_n").to_dicts()
    assert [(s["check"], s["since"].isoformat(), s["streak"]) for s in streak] == [
        ("retention", EXAMPLE_REGRESSION, 1)]
    # as of every earlier night the gate passes, the quiet four-pair night included
    for night in EXAMPLE_NIGHTS[1:-1]:
        earlier = compute_trend(TrendConfig(example, Selection(until=date.fromisoformat(night))))
        assert find_regressions(earlier, 10).exit_code == 0, night
    quiet = compute_trend(TrendConfig(example, Selection(until=date.fromisoformat(EXAMPLE_QUIET))))
    assert quiet.totals["pairs"][-1] == 4 and find_regressions(quiet, 10).too_few_pairs


def test_the_example_corpus_holds_anthropic_and_responses_nights(audited: tuple[Path, list[str]]) -> None:
    from frayproof_audit.corpus import read_table

    example, _ = audited
    formats = (read_table(example, "pairs").filter(pl.col("status") != "input_error")
               .group_by("log_date").agg(pl.col("format").unique()).collect())
    by_night = {row["log_date"].isoformat(): set(row["format"]) for row in formats.to_dicts()}
    assert by_night["2025-06-06"] == {"anthropic"}
    assert by_night["2025-06-07"] == {"openai-responses"}
    assert by_night["2025-06-02"] == {"openai"}


def test_trend_in_a_real_process(audited: tuple[Path, list[str]], tmp_path: Path) -> None:
    example, _ = audited
    chart = tmp_path / "trend.png"
    done = subprocess.run(
        [sys.executable, "-m", "frayproof_audit", "trend", str(example), "--fail-on-regression", "10",
         "--png", str(chart)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "REGRESSION on 2025-06-09: 1 series" in done.stdout
    assert "check retention: failure rate 38.8% on 2025-06-09" in done.stdout
    assert chart.stat().st_size > 10_000


def test_trends_doc_transcript_is_real(audited: tuple[Path, list[str]], tmp_path: Path) -> None:
    out, _ = audited
    text = (ROOT / "docs/trends.md").read_text(encoding="utf-8")
    command = "frayproof-audit trend demo-out --fail-on-regression 10 --png trend.png"
    match = re.search(r"```text\n\$ " + re.escape(command) + r"\n(.*?)```", text, re.DOTALL)
    assert match, "docs/trends.md has no transcript of the trend command"
    documented = match.group(1).rstrip("\n").splitlines()
    result = CliRunner().invoke(main, ["trend", str(out), "--fail-on-regression", "10",
                                       "--png", str(tmp_path / "trend.png")])
    assert documented[-1] == f"[exit {result.exit_code}]" == "[exit 1]"
    assert result.stdout.rstrip("\n").splitlines() == documented[:-1]
    assert (ROOT / "docs/trend-example.png").stat().st_size > 10_000  # the chart the page shows
