"""Gates per slice and per check, through the real CLI: a regression in one compactor that the
average of all hides trips the per-compactor gate, names that compactor, and nothing else.

The corpus: five nights, two compactors. Nights 0–3: 30 `summarize` pairs (3 fail
`pinned_content`) and 30 `keep_last_n` pairs (3 fail `tool_pair_integrity`), 10% each. Night 4:
`summarize` 90 pairs (9 failing, still 10%), `keep_last_n` only 20 pairs but 12 failing (60%).
Overall the night barely moves: 19% of pairs fail (10% before), `tool_pair_integrity` +5.9 points,
`pinned_content` +3.2.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import orjson
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frayproof_audit.corpus import audit
from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.inputs.field_map import ConfigError
from frayproof_audit.corpus.run.audit_config import AuditConfig
from frayproof_audit.corpus.run.rate_gates import FailureRateGate, parse_failure_rate
from tests.corpus_support import compact, line, record, write_contract, write_jsonl
from tests.helpers import run_cli

NIGHTS = 5
LATEST = "2025-06-06"


def night_plan(night: int) -> list[tuple[str, str]]:
    """(compactor name, what it does: `corpus_support.compact`) for each pair of a night."""
    if night < NIGHTS - 1:
        return ([("summarize", "keep_all")] * 27 + [("summarize", "drop_system")] * 3
                + [("keep_last_n", "window")] * 27 + [("keep_last_n", "drop_result")] * 3)
    return ([("summarize", "keep_all")] * 81 + [("summarize", "drop_system")] * 9
            + [("keep_last_n", "window")] * 8 + [("keep_last_n", "drop_result")] * 12)


def night_lines(night: int) -> list[bytes]:
    return [line({**record(night * 1000 + i, how, night=night), "compactor": name})
             for i, (name, how) in enumerate(night_plan(night))]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`logs/night{0..4}.jsonl`, `contract.yaml`, and `out`: every night audited (night-0 …)."""
    folder = tmp_path_factory.mktemp("slices")
    contract = write_contract(folder)
    for night in range(NIGHTS):
        source = write_jsonl(folder / "logs" / f"night{night}.jsonl", night_lines(night))
        audit([str(source)], str(contract), str(folder / "out"), jobs=1, run_id=f"night-{night}",
              fail_on=("none",), mutate=False)
    return folder


def trend_json(*args: str | Path, expect: int) -> dict[str, object]:
    done = run_cli("trend", *args, "--format", "json", expect=expect)
    gate = json.loads(done.stdout)["gate"]
    assert isinstance(gate, dict)
    return gate


# --- trend --------------------------------------------------------------------------------


def test_the_all_compactors_trend_gate_alone_passes(corpus: Path) -> None:
    """The issue's miss, kept as it is: the average of all hides the regression."""
    done = run_cli("trend", corpus / "out", "--fail-on-regression", "10")
    assert "Gate passed: nothing on 2025-06-06" in done.stdout


def test_the_per_compactor_trend_gate_trips_and_names_only_that_compactor(corpus: Path) -> None:
    done = run_cli("trend", corpus / "out", "--fail-on-regression", "10", "--by", "compactor",
                   expect=1)
    assert "REGRESSION in 1 of 2 compactor slice(s): keep_last_n" in done.stdout
    assert ("compactor keep_last_n: REGRESSION on 2025-06-06: 1 series worse than baseline"
            in done.stdout)
    assert "check tool_pair_integrity: failure rate 60.0% on 2025-06-06" in done.stdout
    assert "compactor summarize: Gate passed" in done.stdout
    gate = trend_json(corpus / "out", "--fail-on-regression", "10", "--by", "compactor", expect=1)
    assert gate["passed"] is False and gate["by"] == "compactor"
    assert gate["regressions"] == [] and gate["failed_slices"] == ["keep_last_n"]
    slices = {item["value"]: item for item in gate["slices"]}  # type: ignore[attr-defined]
    assert set(slices) == {"keep_last_n", "summarize"}
    assert [(r["kind"], r["name"]) for r in slices["keep_last_n"]["regressions"]] == [
        ("check", "tool_pair_integrity")]
    assert slices["keep_last_n"]["regressions"][0]["pairs"] == 20
    assert slices["summarize"]["passed"] is True and slices["summarize"]["regressions"] == []


def test_the_per_compactor_gate_in_a_subprocess(corpus: Path) -> None:
    done = run_cli("trend", corpus / "out", "--fail-on-regression", "10", "--by", "compactor",
                   expect=1, real=True)
    assert done.stdout.rstrip().endswith("REGRESSION in 1 of 2 compactor slice(s): keep_last_n")
    assert "Traceback" not in done.stderr


def test_a_small_slice_is_not_judged_and_fails_only_with_strict_min_pairs(corpus: Path) -> None:
    args = (corpus / "out", "--fail-on-regression", "10", "--by", "compactor", "--min-pairs", "25")
    done = run_cli("trend", *args)
    assert "\n  check tool_pair_integrity: not judged: 20 pairs < 25 (--min-pairs)\n" in done.stdout
    assert "Each of 2 compactor slice(s) on 2025-06-06 passed the gate." in done.stdout
    strict = run_cli("trend", *args, "--strict-min-pairs", expect=1)
    assert ("GATE FAILED in 1 of 2 compactor slice(s): keep_last_n (not judged,"
            " --strict-min-pairs)") in strict.stdout
    gate = trend_json(*args, "--strict-min-pairs", expect=1)
    assert gate["failed_slices"] == ["keep_last_n"] and gate["strict_min_pairs"] is True


def test_a_slice_without_pairs_on_the_latest_night_is_not_gated(corpus: Path) -> None:
    """Up to night 3 only: both compactors are slices; a night later a compactor that no longer
    runs would be no slice (the latest night decides which values are slices)."""
    gate = trend_json(corpus / "out", "--fail-on-regression", "10", "--by", "compactor",
                      "--until", "2025-06-05", expect=0)
    assert [item["value"] for item in gate["slices"]] == ["keep_last_n", "summarize"]  # type: ignore[attr-defined]
    one = trend_json(corpus / "out", "--fail-on-regression", "10", "--by", "compactor",
                     "--compactor", "summarize", expect=0)
    assert [item["value"] for item in one["slices"]] == ["summarize"]  # type: ignore[attr-defined]


def test_by_needs_the_gate_and_a_column_of_pairs(corpus: Path) -> None:
    done = run_cli("trend", corpus / "out", "--by", "compactor", expect=2)
    assert "--by slices the regression gate: give --fail-on-regression P too" in done.stderr
    bad = run_cli("trend", corpus / "out", "--fail-on-regression", "10", "--by", "compacter",
                  expect=2)
    assert "--by 'compacter': no such column of pairs" in bad.stderr
    assert "compactor" in bad.stderr and "pair_id" not in bad.stderr


# --- audit --------------------------------------------------------------------------------


def audit_json(corpus: Path, out: Path, *gates: str, expect: int, night: int = NIGHTS - 1,
               source: Path | None = None) -> dict[str, object]:
    done = run_cli("audit", source or corpus / "logs" / f"night{night}.jsonl",
                   "--contract", corpus / "contract.yaml", "--out", out, "--no-mutate",
                   "--jobs", "1", "-q", "--format", "json", *gates, expect=expect)
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    return data


def test_the_global_audit_gate_alone_passes(corpus: Path, tmp_path: Path) -> None:
    data = audit_json(corpus, tmp_path / "out", "--max-failure-rate", "0.25", expect=0)
    assert data["gate_failures"] == [] and data["failure_rate"] == pytest.approx(21 / 110)


def test_the_per_compactor_audit_gate_trips_only_for_that_compactor(corpus: Path,
                                                                    tmp_path: Path) -> None:
    data = audit_json(corpus, tmp_path / "out", "--max-failure-rate", "0.25",
                      "--max-failure-rate", "pinned_content=0.1",
                      "--max-failure-rate", "compactor:summarize=0.3",
                      "--max-failure-rate", "compactor:keep_last_n=0.3", expect=1)
    assert data["gate_failures"] == [
        "compactor keep_last_n: failure rate 60.0% (12 / 20 pairs) is above"
        " --max-failure-rate compactor:keep_last_n=0.3"]
    assert data["gates"]["failure_rate_gates"] == [  # type: ignore[index]
        {"check": "pinned_content", "compactor": None, "rate": 0.1, "spec": "pinned_content=0.1"},
        {"check": None, "compactor": "summarize", "rate": 0.3, "spec": "compactor:summarize=0.3"},
        {"check": None, "compactor": "keep_last_n", "rate": 0.3,
         "spec": "compactor:keep_last_n=0.3"}]
    runs = read_table(tmp_path / "out", "runs").collect()
    assert json.loads(runs["options"][0])["failure_rate_gates"] == [
        "pinned_content=0.1", "compactor:summarize=0.3", "compactor:keep_last_n=0.3"]


def test_a_per_check_audit_gate_trips_only_its_check(corpus: Path, tmp_path: Path) -> None:
    done = run_cli("audit", corpus / "logs" / "night4.jsonl", "--contract", corpus / "contract.yaml",
                   "--out", tmp_path / "out", "--no-mutate", "--jobs", "1", "-q",
                   "--max-failure-rate", "tool_pair_integrity=0.1",
                   "--max-failure-rate", "pinned_content=0.1", expect=1)
    assert done.stdout.rstrip().splitlines()[-1] == (
        "FAIL: check tool_pair_integrity: failure rate 10.9% (12 / 110 pairs) is above"
        " --max-failure-rate tool_pair_integrity=0.1")
    # a per-check gate alone replaces "any failure": 21 pairs fail, neither check is above 0.15
    audit_json(corpus, tmp_path / "again", "--max-failure-rate", "tool_pair_integrity=0.15",
               expect=0)


def test_a_small_compactor_is_not_judged_and_fails_only_with_strict(corpus: Path,
                                                                    tmp_path: Path) -> None:
    args = ("--max-failure-rate", "compactor:keep_last_n=0.3", "--min-pairs", "25")
    done = run_cli("audit", corpus / "logs" / "night4.jsonl", "--contract", corpus / "contract.yaml",
                   "--out", tmp_path / "out", "--no-mutate", "--jobs", "1", "-q", *args)
    lines = done.stdout.splitlines()
    assert "compactor keep_last_n: not judged: 20 pairs < 25 (--min-pairs, failure rate 60.0%)" in lines
    assert lines[-1] == "PASS"
    data = audit_json(corpus, tmp_path / "strict", *args, "--strict-min-pairs", expect=1)
    assert data["gate_failures"] == [
        "compactor keep_last_n: not judged, 20 pairs < --min-pairs 25 (--strict-min-pairs)"]
    assert data["not_judged"] == [
        "compactor keep_last_n: not judged: 20 pairs < 25 (--min-pairs, failure rate 60.0%)"]


def test_a_compactor_gate_in_a_subprocess(corpus: Path, tmp_path: Path) -> None:
    done = run_cli("audit", corpus / "logs" / "night4.jsonl", "--contract", corpus / "contract.yaml",
                   "--out", tmp_path / "out", "--no-mutate", "--jobs", "1", "-q",
                   "--max-failure-rate", "compactor:keep_last_n=0.3", expect=1, real=True)
    assert "is above --max-failure-rate compactor:keep_last_n=0.3" in done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("spec", "message"), [
    ("retension=0.05", "unknown check 'retension' (choose tool_pair_integrity, unique_tool_ids,"),
    ("compactor:=0.1", "compactor:NAME=R needs a compactor name"),
])
def test_an_unknown_check_is_refused_with_the_list(corpus: Path, tmp_path: Path, spec: str,
                                                   message: str) -> None:
    done = run_cli("audit", corpus / "logs" / "night0.jsonl", "--contract", corpus / "contract.yaml",
                   "--out", tmp_path / "out", "--no-mutate", "--jobs", "1", "-q",
                   "--max-failure-rate", spec, expect=2)
    assert message in done.stderr and not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["retention=1.5", "retention=nan", "=0.1", "retention=x"])
def test_a_bad_scoped_rate_is_a_usage_error_naming_the_option(corpus: Path, tmp_path: Path,
                                                              value: str) -> None:
    done = run_cli("audit", corpus / "logs" / "night0.jsonl", "--out", tmp_path / "out",
                   "--max-failure-rate", value, expect=2)
    assert "--max-failure-rate" in done.stderr and not (tmp_path / "out").exists()


def test_parse_failure_rate_and_the_gates_of_the_library() -> None:
    assert parse_failure_rate("0.25") == 0.25
    assert parse_failure_rate("retention=0.05") == FailureRateGate(0.05, check="retention")
    assert parse_failure_rate("compactor:a=b=0.1") == FailureRateGate(0.1, compactor="a=b")
    assert FailureRateGate(0.1, compactor="x").spec == "compactor:x=0.1"
    for bad in ("retention=2", "retention=nope", "nosuch=0.1"):
        with pytest.raises(ConfigError):
            parse_failure_rate(bad)
    with pytest.raises(ConfigError, match="exactly one check or one compactor"):
        FailureRateGate(0.1, check="retention", compactor="x")
    with pytest.raises(ConfigError, match="FailureRateGate values"):
        AuditConfig(inputs=("x",), out="o", failure_rate_gates=("retention=0.1",))  # type: ignore[arg-type]


# --- known-issue baseline ---------------------------------------------------------------


def test_the_baseline_suppresses_exactly_the_listed_findings(corpus: Path, tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.jsonl"
    wrote = run_cli("stats", corpus / "out", "--until", "2025-06-02", "--write-baseline", baseline)
    assert wrote.stdout.startswith("Wrote 6 error finding(s) of 6 pair(s) to ")
    entries = [orjson.loads(text) for text in baseline.read_bytes().splitlines()]
    assert len(entries) == 6 and {e["code"] for e in entries} == {"PIN-ROLE", "TP-UNANSWERED"}
    assert {"pair_id", "code", "check"} == set(entries[0])

    # night 0 again: without the baseline its 6 failing pairs fail the run
    audit_json(corpus, tmp_path / "plain", expect=1, night=0)
    data = audit_json(corpus, tmp_path / "out", "--baseline-findings", str(baseline),
                      expect=0, night=0)
    assert data["gate_failures"] == [] and data["failed"] == 6
    assert data["baseline_accepted"] == {"findings": 6, "pairs": 6}
    stored = read_table(tmp_path / "out", "findings").filter(pl.col("severity") == "error").collect()
    assert stored.height == 6  # still stored

    # one finding taken out of the baseline: that pair, and only it, fails again
    baseline.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries[1:]))
    data = audit_json(corpus, tmp_path / "fewer", "--baseline-findings", str(baseline),
                      expect=1, night=0)
    assert data["gate_failures"] == [
        "1 pair(s) fail the contract (--fail-on failures) (5 more accepted by --baseline-findings)"]
    assert data["baseline_accepted"] == {"findings": 5, "pairs": 5}


def test_a_pair_fails_by_any_error_the_baseline_does_not_list(corpus: Path, tmp_path: Path) -> None:
    """A pair with two defects, one of them listed, still fails, on the gate of the other."""
    both = record(7, "drop_system", night=0)
    both["after"] = compact(both["after"], "drop_result")
    source = write_jsonl(tmp_path / "both.jsonl", [line(both)])
    baseline = tmp_path / "baseline.jsonl"
    baseline.write_text('{"pair_id": "p0007", "code": "PIN-ROLE"}\n\n', encoding="utf-8")
    data = audit_json(corpus, tmp_path / "out", "--baseline-findings", str(baseline),
                      "--max-failure-rate", "pinned_content=0", "--max-failure-rate",
                      "tool_pair_integrity=0", expect=1, source=source)
    assert data["baseline_accepted"] == {"findings": 1, "pairs": 0}
    assert len(data["gate_failures"]) == 1  # type: ignore[arg-type]
    assert data["gate_failures"][0].startswith("check tool_pair_integrity:")  # type: ignore[index]
    checks = {c["check"]: c for c in data["checks"]}  # type: ignore[attr-defined]
    assert checks["pinned_content"]["baseline_accepted_pairs"] == 1


@pytest.mark.parametrize(("content", "message"), [
    (b'{"pair_id": "p1", "code": "PIN-NOPE"}\n', "line 1: code 'PIN-NOPE' is no condition code"),
    (b'\n{"pair_id": "p1", "code": "PIN-ROLE"}\n{"code": "PIN-ROLE"}\n',
     "line 3: pair_id must be a non-empty string"),
    (b"[1]\n", "line 1: a finding is a JSON object"),
    (b"{nope\n", "line 1: invalid JSON"),
])
def test_a_bad_baseline_file_is_exit_2_naming_the_line(corpus: Path, tmp_path: Path,
                                                       content: bytes, message: str) -> None:
    baseline = tmp_path / "baseline.jsonl"
    baseline.write_bytes(content)
    done = run_cli("audit", corpus / "logs" / "night0.jsonl", "--contract", corpus / "contract.yaml",
                   "--out", tmp_path / "out", "--no-mutate", "--jobs", "1", "-q",
                   "--baseline-findings", baseline, expect=2)
    assert f"--baseline-findings '{baseline}' {message}" in done.stderr
    assert not (tmp_path / "out").exists()
    missing = run_cli("audit", corpus / "logs" / "night0.jsonl", "--out", tmp_path / "out",
                      "--baseline-findings", tmp_path / "none.jsonl", expect=2)
    assert "cannot read it" in missing.stderr


def test_rejudge_keeps_the_gates_a_run_was_audited_with(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    audit_json(corpus, out, "--max-failure-rate", "compactor:keep_last_n=0.3",
               "--min-pairs", "5", "--strict-min-pairs", expect=1)
    stricter = tmp_path / "stricter.yaml"
    stricter.write_text((corpus / "contract.yaml").read_text(encoding="utf-8")
                        + "  recent_exchanges: 1\n", encoding="utf-8")
    run_cli("rejudge", out, "--contract", stricter, "--jobs", "1", "-q", expect=None)
    runs = read_table(out, "runs").collect()
    options = [json.loads(text) for text in runs["options"]]
    assert len(options) == 2
    assert all(o["failure_rate_gates"] == ["compactor:keep_last_n=0.3"] for o in options)
    assert all(o["min_pairs"] == 5 and o["strict_min_pairs"] is True for o in options)


BEHAVIOURS = ("keep_all", "window", "drop_result", "drop_system", "both")


def _pair(index: int, how: str) -> dict[str, object]:
    if how != "both":
        return {**record(index, how), "compactor": f"c{index % 3}"}
    pair = record(index, "drop_system")
    pair["after"] = compact(pair["after"], "drop_result")  # two defects, two codes
    return {**pair, "compactor": f"c{index % 3}"}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=st.lists(st.sampled_from(BEHAVIOURS), min_size=1, max_size=8),
       keep=st.lists(st.booleans(), min_size=16, max_size=16))
def test_a_baseline_accepts_exactly_what_it_lists(tmp_path: Path, plan: list[str],
                                                  keep: list[bool]) -> None:
    """For any corpus and any subset of its error findings listed: the pairs the gates count as
    failed are exactly those with an unlisted error finding, and every finding is still stored."""
    folder = tmp_path / uuid.uuid4().hex  # one folder per example (tmp_path is shared)
    source = write_jsonl(folder / "in.jsonl", [line(_pair(i, how)) for i, how in enumerate(plan)])
    contract = write_contract(folder)
    audit([str(source)], str(contract), str(folder / "all"), jobs=1, fail_on=("none",), mutate=False)
    errors = (read_table(folder / "all", "findings").filter(pl.col("severity") == "error")
              .select("pair_id", "code").collect().rows())
    listed = {finding for finding, kept in zip(sorted(set(errors)), keep * 2, strict=False) if kept}
    baseline = folder / "baseline.jsonl"
    baseline.write_bytes(b"".join(orjson.dumps({"pair_id": p, "code": c}) + b"\n"
                                  for p, c in sorted(listed)))
    summary = audit([str(source)], str(contract), str(folder / "gated"), jobs=1, mutate=False,
                    baseline_findings=str(baseline),
                    failure_rate_gates=[FailureRateGate(0.0, compactor=f"c{i}") for i in range(3)],
                    min_pairs=1)
    unlisted = {p for p, c in errors if (p, c) not in listed}
    assert summary.gated_failed == len(unlisted)
    assert summary.baseline_accepted_findings == len([e for e in errors if e in listed])
    assert summary.baseline_accepted_pairs == len({p for p, _ in errors} - unlisted)
    assert (summary.exit_code == 1) == bool(unlisted)
    stored = read_table(folder / "gated", "findings").filter(pl.col("severity") == "error").collect()
    assert stored.height == len(errors)
