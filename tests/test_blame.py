"""Blame (issue 27, item 2): a finding the compactor made is `introduced`, one its before already
held is `inherited`; the gates, `stats`, `trend` and `report` count a pair as the compactor's
failure only for an introduced error unless `--blame all`, while `validate`/`check` and
`pairs.status` stay frayproof's. `tool_arguments` judges by default only the calls the
compactor changed or created (`scope: changed`).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings

from frayproof_audit import check, validate
from frayproof_audit.blame import INHERITED, INTRODUCED
from frayproof_audit.contract import load_contract
from frayproof_audit.corpus import read_table
from frayproof_audit.engine import check_blamed, check_loaded
from frayproof_audit.snapshot import load_source
from sessiongen.strategies import mutation_cases
from tests.corpus_support import line, write_jsonl
from tests.helpers import assistant, call, history, make_contract, result, run_cli, system, user

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}


def _blamed(before: list[dict[str, Any]], after: list[dict[str, Any]], contract: Any = None
            ) -> list[tuple[str | None, str]]:
    resolved = contract if contract is not None else load_contract(None)
    report, origins = check_blamed(load_source(before, "openai", copy=False),
                                   load_source(after, "openai", copy=False), resolved)
    return [(v.code, origin) for v, origin in zip(report.violations, origins, strict=True)]


def _broken_before() -> list[dict[str, Any]]:
    """A session whose before is already broken: a tool result that answers no call."""
    return [system(), user("first"), result("ghost"), call("c1"), result("c1"), assistant("ok"),
            user("again"), assistant("sure"), user("now")]


# --- the rule --------------------------------------------------------------------------------

def test_an_orphan_kept_verbatim_is_inherited_even_at_another_index() -> None:
    before = _broken_before()
    assert _blamed(before, before) == [("TP-ORPHAN", INHERITED)]
    moved = [before[0], before[2], *before[6:]]  # older messages dropped: the orphan moves up
    assert _blamed(before, moved) == [("TP-ORPHAN", INHERITED)]


def test_an_orphan_the_compactor_made_is_introduced() -> None:
    clean = history(3)
    calls = [i for i, m in enumerate(clean) if m.get("tool_calls")]
    assert calls
    without_call = clean[:calls[0]] + clean[calls[0] + 1:]  # its result is now an orphan
    assert [origin for _, origin in _blamed(clean, without_call)] == [INTRODUCED]


def test_a_changed_message_is_the_compactors_and_a_copy_is_introduced_once() -> None:
    before = _broken_before()
    edited = copy.deepcopy(before)
    edited[2]["content"] = "ok, trimmed"  # the orphan kept, but not verbatim
    assert _blamed(before, edited) == [("TP-ORPHAN", INTRODUCED)]
    doubled = [*before[:3], copy.deepcopy(before[2]), *before[3:]]  # a multiset: one is before's
    assert [origin for code, origin in _blamed(before, doubled) if code == "TP-ORPHAN"] == [
        INHERITED, INTRODUCED]


def test_the_report_is_check_loadeds_and_check_stays_frayproofs() -> None:
    before = _broken_before()
    contract = load_contract(None)
    loaded = load_source(before, "openai", copy=False)
    report, _ = check_blamed(loaded, loaded, contract)
    assert report == check_loaded(loaded, loaded, contract) == check(before, before)
    assert not check(before, before).passed  # the verdict is frayproof's: it fails


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutation_cases())
def test_check_before_before_introduces_nothing(case: tuple[list[Any], list[Any], str]) -> None:
    before, after, text = case
    contract = make_contract(text)
    for snapshot in (before, after):
        try:
            loaded = load_source(snapshot, contract.format, copy=False)
        except Exception:  # an unreadable snapshot is an input error, never judged
            continue
        report, origins = check_blamed(loaded, loaded, contract)
        assert report == check_loaded(loaded, loaded, contract)
        assert origins == (INHERITED,) * len(report.violations)


# --- tool_arguments: scope ------------------------------------------------------------------

def _calling(arguments: str, call_id: str = "w1") -> list[dict[str, Any]]:
    return [user("weather?"),
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "get_weather", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "sunny"}, user("thanks")]


def test_tool_arguments_judges_only_calls_the_compactor_changed_or_created() -> None:
    bad, good = _calling('{}'), _calling('{"location": "Paris"}')
    changed = make_contract({"tools": [WEATHER]})
    assert check(bad, bad, changed).passed  # the model's own call, kept verbatim
    assert [v.code for v in check(good, bad, changed).violations] == ["TA-REQUIRED"]  # rewritten
    assert [v.code for v in check(good, _calling('{}', "new"), changed).violations] == ["TA-REQUIRED"]
    assert [v.code for v in validate(bad, changed).violations] == ["TA-REQUIRED"]  # no before: all
    every = make_contract({"tools": [WEATHER], "checks": {"tool_arguments": {"scope": "all"}}})
    assert [v.code for v in check(bad, bad, every).violations] == ["TA-REQUIRED"]
    assert _blamed(bad, bad, every) == [("TA-REQUIRED", INHERITED)]  # and it is not the compactor's
    former = make_contract({"tools": [WEATHER], "checks": {"tool_arguments": {"scope": "after"}}})
    assert check(bad, bad, former).violations == check(bad, bad, every).violations


# --- through the CLI -------------------------------------------------------------------------

def _records(night: int) -> list[bytes]:
    """Per night: 3 pairs of `keeps` whose before is broken and kept verbatim (TP-ORPHAN,
    inherited), 3 clean pairs of `keeps`, and 3 pairs of `drops` that lose a result (introduced)."""
    found = []
    for i in range(3):
        stamp = f"2025-06-{2 + night:02d}T0{i}:00:00Z"
        broken, clean = _broken_before(), history(3)
        calls = [k for k, m in enumerate(clean) if m.get("tool_calls")]
        dropped = clean[:calls[0]] + clean[calls[0] + 1:]
        found += [
            line({"pair_id": f"n{night}-inherited-{i}", "compactor": "keeps", "logged_at": stamp,
                  "before": broken, "after": broken}),
            line({"pair_id": f"n{night}-clean-{i}", "compactor": "keeps", "logged_at": stamp,
                  "before": clean, "after": clean}),
            line({"pair_id": f"n{night}-dropped-{i}", "compactor": "drops", "logged_at": stamp,
                  "before": clean, "after": dropped}),
        ]
    return found


def test_an_inherited_defect_is_not_the_compactors_failure_unless_blame_all(tmp_path: Path) -> None:
    inherited_only = write_jsonl(tmp_path / "keeps.jsonl", [
        rec for rec in _records(0) if b"-dropped-" not in rec])
    out = tmp_path / "out"
    # the only failing pairs kept their before's orphan verbatim: the gate passes (a real process)
    done = run_cli("audit", inherited_only, "--out", out, "--run-id", "only-inherited", "--no-mutate",
                   "-q", real=True)
    assert "pass 3 · fail 3 (3 only by errors before already held" in done.stdout
    assert done.stdout.rstrip().endswith("PASS")
    again = run_cli("audit", inherited_only, "--out", tmp_path / "all", "--no-mutate", "-q",
                    "--blame", "all", expect=1)
    assert "3 pair(s) fail the contract (--fail-on failures)" in again.stdout
    gated = run_cli("audit", inherited_only, "--out", tmp_path / "rate", "--no-mutate", "-q",
                    "--max-failure-rate", "0.4", "--blame", "all", expect=1)
    assert "failure rate 50.0% is above --max-failure-rate 0.4" in gated.stdout
    run_cli("audit", inherited_only, "--out", tmp_path / "rate2", "--no-mutate", "-q",
            "--max-failure-rate", "0.4")
    pairs = read_table(out, "pairs").collect()
    inherited = pairs.filter(pl.col("pair_id").str.contains("inherited"))
    assert set(inherited["status"]) == {"fail"}  # frayproof's verdict, unchanged
    assert inherited["introduced_errors"].to_list() == [0, 0, 0]
    findings = read_table(out, "findings").collect()
    assert set(zip(findings["code"], findings["origin"], strict=True)) == {("TP-ORPHAN", INHERITED)}
    sarif = json.loads(run_cli("audit", inherited_only, "--out", tmp_path / "sarif", "--no-mutate",
                               "-q", "--format", "sarif").stdout)
    results = sarif["runs"][0]["results"]
    assert len(results) == 3 and {r["properties"]["origin"] for r in results} == {INHERITED}
    assert all("(inherited: its before already had it)" in r["message"]["text"] for r in results)


def test_stats_trend_and_report_count_introduced_failures_by_default(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for night in range(2):
        run_cli("audit", write_jsonl(tmp_path / f"night{night}.jsonl", _records(night)), "--out", out,
                "--run-id", f"night-{night}", "--no-mutate", "-q", expect=1)
    def stats(*args: str) -> dict[str, Any]:
        shown = json.loads(run_cli("stats", out, "--by", "compactor", "--format", "json", *args).stdout)
        return {row["compactor"]: row for row in shown["pairs"]}

    by_default, everything = stats(), stats("--blame", "all")
    assert (by_default["keeps"]["failed"], by_default["keeps"]["inherited_failures"]) == (0, 6)
    assert by_default["keeps"]["failure_rate"] == 0.0
    assert (everything["keeps"]["failed"], everything["keeps"]["inherited_failures"]) == (6, 0)
    assert everything["keeps"]["failure_rate"] == 0.5
    assert by_default["drops"]["failed"] == everything["drops"]["failed"] == 6
    text = run_cli("stats", out).stdout
    assert "6 failing pair(s) whose every error their before already held" in text

    def trend(*args: str) -> dict[str, Any]:
        return json.loads(run_cli("trend", out, "--format", "json", *args).stdout)

    quiet, loud = trend(), trend("--blame", "all")
    assert {row["compactor"] for row in quiet["streaks"]} == {"drops"}  # the correct one is not blamed
    assert {row["compactor"] for row in loud["streaks"]} == {"drops", "keeps"}
    assert [row["failed"] for row in quiet["totals"]] == [3, 3]
    assert [row["inherited_failures"] for row in quiet["totals"]] == [3, 3]
    assert [row["failed"] for row in loud["totals"]] == [6, 6]
    integrity = [row for row in quiet["checks"] if row["check"] == "tool_pair_integrity"]
    assert [row["failing_pairs"] for row in integrity] == [3, 3]
    report = run_cli("report", out, "-o", tmp_path / "r.html")
    assert "6 failing pair(s) are not counted as failures" in report.stderr
    assert "inherited only" in (tmp_path / "r.html").read_text(encoding="utf-8")
    run_cli("report", out, "-o", tmp_path / "all.html", "--blame", "all")
    assert "not counted" not in (tmp_path / "all.html").read_text(encoding="utf-8")


def test_runs_written_before_blame_count_every_failure_as_introduced() -> None:
    from frayproof_audit.corpus import compute_stats
    from frayproof_audit.corpus.store.failure_rule import Blame
    from frayproof_audit.trends.series import TrendConfig, compute_trend
    from tests.helpers import REPO

    old = REPO / "tests" / "data" / "v1" / "example-dataset"  # tables schema 1: no origin
    by_default, everything = compute_stats(old), compute_stats(old, blame=Blame.ALL)
    assert by_default.pairs.equals(everything.pairs) and by_default.checks.equals(everything.checks)
    assert by_default.pairs["failed"].item() > 0 and by_default.pairs["inherited_failures"].item() == 0
    quiet, loud = compute_trend(TrendConfig(old)), compute_trend(TrendConfig(old, blame=Blame.ALL))
    assert quiet.totals.equals(loud.totals) and quiet.streaks.equals(loud.streaks)


def test_the_python_and_polars_readings_of_the_rule_agree() -> None:
    from frayproof_audit.corpus.store.failure_rule import (
        Blame,
        counted_findings,
        counts_as_failure,
        counts_finding,
        failure_expr,
        inherited_expr,
    )

    pairs = pl.DataFrame({"status": ["pass", "fail", "fail", "fail", "input_error"],
                          "introduced_errors": [0, 2, 0, None, None]},
                         schema={"status": pl.String, "introduced_errors": pl.Int32})
    findings = pl.DataFrame({"origin": [INTRODUCED, INHERITED, None]}, schema={"origin": pl.String})
    for blame in Blame:
        counted = pairs.select(failure_expr(blame))["status"].to_list()
        assert counted == [counts_as_failure(s, n, blame) for s, n in pairs.iter_rows()]
        left_out = pairs.select(inherited_expr(blame))["status"].to_list()
        assert left_out == [s == "fail" and not c for (s, _), c in zip(pairs.iter_rows(), counted,
                                                                     strict=True)]
        assert findings.with_columns(counted_findings(blame).alias("c"))["c"].to_list() == [
            counts_finding(origin, blame) for (origin,) in findings.iter_rows()]
    assert counted == [False, True, True, True, False]  # all: every fail
    assert [counts_as_failure(s, n, Blame.INTRODUCED) for s, n in pairs.iter_rows()] == [
        False, True, False, True, False]  # a fail of 0 introduced errors is not the compactor's
