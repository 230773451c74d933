"""`frayproof-audit audit` and `stats`: gates and exit codes, formats, fail-fast, real subprocesses."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from frayproof_audit.cli.audit_cmd import _ProgressLine
from frayproof_audit.corpus.run.audit_run import Progress
from frayproof_audit.corpus.run.summary import RunSummary
from tests.corpus_support import BAD_LINES, good_lines, line, record, write_contract, write_jsonl
from tests.helpers import run_cli


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    """8 good pairs (4 fail the contract) and one bad line."""
    write_jsonl(tmp_path / "in" / "a.jsonl", [*good_lines(8), BAD_LINES["invalid_json"][0]])
    return tmp_path / "in", write_contract(tmp_path)


def audit_args(corpus: tuple[Path, Path], out: Path, *extra: str) -> list[str]:
    return ["audit", str(corpus[0]), "--contract", str(corpus[1]), "--out", str(out), "-j", "1", *extra]


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ((), 1),
        (("--fail-on", "none"), 0),
        (("--max-failure-rate", "0.6"), 0),
        (("--max-failure-rate", "0.4"), 1),
        (("--fail-on", "input-errors"), 1),
        (("--fail-on", "input-errors", "--fail-on", "failures", "--max-failure-rate", "0.9"), 1),
        (("--fail-on", "survivors"), 1),
        (("--fail-on", "survivors", "--no-mutate"), 0),
        (("--fail-on", "survivors", "--operators", "drop_tool_call,duplicate_tool_id"), 0),
    ],
    ids=["default-failures", "none", "rate-ok", "rate-exceeded", "input-errors", "combined",
         "survivors", "survivors-no-mutate", "survivors-operator-subset"],
)
def test_gates_decide_the_exit_code(
    corpus: tuple[Path, Path], tmp_path: Path, extra: tuple[str, ...], code: int
) -> None:
    result = run_cli(*audit_args(corpus, tmp_path / "out", *extra), expect=code)
    assert ("PASS" if code == 0 else "FAIL") in result.stdout.splitlines()[-1]


def test_json_summary(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    result = run_cli(*audit_args(corpus, tmp_path / "out", "--format", "json", "--run-id", "j1"), expect=1)
    summary = json.loads(result.stdout)
    assert summary["run_id"] == "j1"
    assert (summary["pairs"], summary["passed"], summary["failed"], summary["input_errors"]) == (9, 4, 4, 1)
    assert summary["failure_rate"] == 0.5
    assert {c["check"] for c in summary["checks"]} == {"tool_pair_integrity", "pinned_content"}
    assert summary["mutation"]["enabled"] is True and summary["mutation"]["caught"] > 0
    assert summary["gate_failures"] == ["4 pair(s) fail the contract (--fail-on failures)"]
    assert summary["exit_code"] == 1
    assert result.stderr == ""  # stderr is not a terminal here: no progress bar


def test_text_summary_names_top_checks_compactors_and_operators(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    text = run_cli(*audit_args(corpus, tmp_path / "out"), expect=1).stdout
    assert "pass 4 · fail 4 · input_error 1" in text
    assert "Top failing checks" in text and "tool_pair_integrity" in text
    assert "Top failing compactors" in text and "drop_result" in text
    assert "Mutation operators" in text and "drop_tool_call" in text
    assert "a.jsonl line 9: invalid JSON" in text


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--contract-override",), "No such option"),
        (("--run-id", "../x"), "run id"),
        (("--field", "nonsense"), "expected NAME=PATH"),
        (("--field", "colour=x"), "unknown field"),
        (("--operators", "drop_everything"), "unknown operator"),
        (("--backend", "spark"), "Invalid value"),
        (("--max-failure-rate", "2"), "Invalid value"),
        (("--jobs", "0"), "jobs must be"),
        (("--config", "missing.yaml"), "Cannot read config"),
    ],
)
def test_bad_usage_exits_2_before_any_work(
    corpus: tuple[Path, Path], tmp_path: Path, extra: tuple[str, ...], message: str
) -> None:
    out = tmp_path / "out"
    result = run_cli(*audit_args(corpus, out, *extra), expect=2)
    assert message in result.stdout + result.stderr
    assert not (out / "runs").exists()


def test_bad_contract_and_unreadable_input_exit_2_before_any_work(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 2\n")
    out = tmp_path / "out"
    result = run_cli("audit", str(corpus[0]), "--contract", str(bad), "--out", str(out), expect=2)
    assert "Invalid contract" in result.stderr and not out.exists()
    result = run_cli("audit", str(tmp_path / "nope.jsonl"), "--contract", str(corpus[1]), "--out", str(out),
                     "--format", "json", expect=2)
    assert "does not exist" in json.loads(result.stdout)["error"] and not out.exists()


def test_config_file_fields(tmp_path: Path) -> None:
    rec = record(0)
    rec["request"] = {"messages": rec.pop("before")}
    path = write_jsonl(tmp_path / "a.jsonl", [line(rec)])
    config = tmp_path / "audit.yaml"
    config.write_text("fields:\n  before: request.messages\n")
    out = tmp_path / "out"
    run_cli("audit", str(path), "--contract", str(write_contract(tmp_path)), "--out", str(out),
            "--config", str(config), "-j", "1", "--no-mutate", expect=0)
    run_cli("audit", str(path), "--contract", str(write_contract(tmp_path)), "--out", str(out),
            "--config", str(config), "--field", "before=missing", "-j", "1", "--fail-on", "input-errors",
            expect=2)  # its one record is an input error: nothing audited


def test_stats_formats(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_cli(*audit_args(corpus, out, "--run-id", "s1"), expect=1)
    table = run_cli("stats", str(out)).stdout
    assert "1 committed run(s)" in table and "tool_pair_integrity" in table and "survival_rate" in table
    data = json.loads(run_cli("stats", str(out), "--format", "json", "--by", "compactor").stdout)
    assert data["by"] == ["compactor"] and data["runs"] == 1
    failing = {row["compactor"] for row in data["checks"] if row["failing_pairs"]}
    assert failing == {"drop_result", "drop_system"}
    assert {row["compactor"] for row in data["codes"] if row["findings"]} == {"drop_result", "drop_system"}
    assert all(row["code"] for row in data["codes"])
    csv_text = run_cli("stats", str(out), "--format", "csv", "--by", "log_date").stdout
    assert csv_text.splitlines()[0].startswith("table,log_date,name,findings")
    target = tmp_path / "stats.parquet"
    run_cli("stats", str(out), "--format", "parquet", "--output", str(target), "--by", "run_id")
    frame = pl.read_parquet(target)
    assert set(frame["table"]) == {"pairs", "checks", "codes", "operators"}
    assert set(frame["run_id"]) == {"s1"}
    written = tmp_path / "stats.json"
    run_cli("stats", str(out), "--format", "json", "--output", str(written))
    assert json.loads(written.read_text())["runs"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--format", "parquet"), "needs --output"),
        (("--by", "colour"), "unknown --by 'colour' (choose compactor, log_date, run_id;"),
    ],
)
def test_stats_bad_usage(
    corpus: tuple[Path, Path], tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    out = tmp_path / "out"
    run_cli(*audit_args(corpus, out, "--fail-on", "none"))
    result = run_cli("stats", str(out), *args, expect=2)
    assert message in result.stdout + result.stderr


def test_stats_of_a_folder_that_is_not_a_dataset(tmp_path: Path) -> None:
    assert "not a folder" in run_cli("stats", str(tmp_path / "nope"), expect=2).stderr
    assert "not an audit dataset" in run_cli("stats", str(tmp_path), expect=2).stderr


def test_real_subprocess_audit_and_stats(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli(*audit_args(corpus, out, "--jobs", "2", "--run-id", "real"), expect=1, real=True)
    assert "Run real: 9 pairs audited" in result.stdout
    stats = run_cli("stats", str(out), "--format", "json", real=True)
    checks = {row["check"]: row for row in json.loads(stats.stdout)["checks"]}
    assert checks["tool_pair_integrity"]["failing_pairs"] == 2
    assert checks["tool_pair_integrity"]["pairs_checked"] == 8


def test_progress_line_only_when_enabled() -> None:
    progress = Progress(shards_done=1, shards_total=4, records=120, weight_done=25, weight_total=100,
                        elapsed_s=2.0)
    quiet = io.StringIO()
    _ProgressLine(quiet, enabled=False)(progress)
    assert quiet.getvalue() == ""
    shown = io.StringIO()
    bar = _ProgressLine(shown, enabled=True)
    bar(progress)
    bar.close()
    assert "25.0%" in shown.getvalue() and "120 records" in shown.getvalue()
    assert "60 rec/s" in shown.getvalue() and "ETA 0:06" in shown.getvalue()


def _summary(**changes: object) -> RunSummary:
    base = RunSummary(
        run_id="r", out="o", started_at="", finished_at="", duration_s=1.0, contract_sha256="",
        shards=1, pairs=10, passed=10, failed=0, input_errors=0, mutate=True, mutants_caught=5,
        mutants_survived=0, mutants_skipped=0, checks=(), compactors=(), operators=(),
        input_error_samples=(), not_audited=(), fail_on=("failures",), max_failure_rate=None,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_summary_gates() -> None:
    assert _summary().exit_code == 0
    assert _summary(passed=8, failed=2).exit_code == 1
    assert _summary(passed=8, failed=2, max_failure_rate=0.2).exit_code == 0
    assert _summary(passed=8, failed=2, max_failure_rate=0.1).exit_code == 1
    assert _summary(passed=8, failed=2, fail_on=("none",)).exit_code == 0
    assert _summary(input_errors=3).exit_code == 0
    assert _summary(input_errors=3, fail_on=("input-errors",)).exit_code == 1
    assert _summary(mutants_survived=1).exit_code == 0
    assert _summary(mutants_survived=1, fail_on=("survivors",)).exit_code == 1
    assert _summary(pairs=0, passed=0).failure_rate is None


@pytest.mark.parametrize("name", ["audit", "stats"])
def test_every_option_has_help_and_the_docs_cover_the_command(name: str) -> None:
    import click

    from frayproof_audit.cli import main
    from tests.helpers import REPO

    command = main.commands[name]
    assert command.help
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.help, param.name
            assert all(opt in (REPO / "docs" / "audit.md").read_text() for opt in param.opts
                       if opt.startswith("--") and opt not in ("--help",)), param.opts
    assert run_cli(name, "--help").stdout.startswith(f"Usage: frayproof-audit {name}")
