"""`RunSummary`: built from a tally, the same metric names as `stats`, its own schema version."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from frayproof_audit.cli.common import parse_operator_list
from frayproof_audit.corpus import audit, compute_stats, read_table
from frayproof_audit.corpus.run.summary import SUMMARY_SCHEMA_VERSION, NotAudited, RunSummary
from frayproof_audit.corpus.run.tally import Tally
from frayproof_audit.corpus.store.pair_status import PairStatus
from tests.corpus_support import BAD_LINES, good_lines, write_contract, write_jsonl

START = datetime(2025, 6, 2, 1, 0, tzinfo=UTC)


def _tally() -> Tally:
    tally = Tally()
    for status, compactor in [(PairStatus.PASS, "a"), (PairStatus.FAIL, "b"), (PairStatus.FAIL, "b"),
                              (PairStatus.INPUT_ERROR, None), (PairStatus.FAIL, "c")]:
        tally.count_pair(status, compactor)
    tally.count_check("retention", 3, 1)
    tally.count_check("retention", 1, 0)  # a pair with warnings only
    tally.count_check("pinned_content", 1, 1)
    tally.count_check("pinned_content", 1, 1)
    tally.count_mutant("drop_tool_call", "caught")
    tally.count_mutant("drop_tool_call", "survived")
    tally.count_mutant("swap_call_result", "skipped")
    return tally


def _summary(tally: Tally) -> RunSummary:
    return RunSummary.from_tally(
        tally, run_id="r", out="o", started=START, finished=START, duration_s=2.0,
        contract_sha256="0" * 64, shards=3, input_error_samples=["x line 1: bad"],
        not_audited=[NotAudited("x [whole file]", "the worker died twice", None)],
        mutate=True, fail_on=("failures",), max_failure_rate=None,
    )


def test_from_tally_counts_and_sorts_worst_first() -> None:
    summary = _summary(_tally())
    assert (summary.pairs, summary.passed, summary.failed, summary.input_errors) == (5, 1, 3, 1)
    assert [(c.check, c.findings, c.pairs_affected, c.failing_pairs) for c in summary.checks] == [
        ("pinned_content", 2, 2, 2), ("retention", 4, 2, 1)]
    assert [(c.compactor, c.pairs, c.failed) for c in summary.compactors] == [
        ("b", 2, 2), ("c", 1, 1), (None, 1, 0), ("a", 1, 0)]
    assert [o.operator for o in summary.operators] == ["drop_tool_call", "swap_call_result"]
    assert summary.started_at == START.isoformat() and summary.shards == 3
    assert summary.gate_failures[0] == "1 shard(s) could not be audited"


def test_summary_json_has_its_own_schema_version_and_the_stats_metric_names() -> None:
    data = json.loads(_summary(_tally()).to_json())
    assert data["schema_version"] == SUMMARY_SCHEMA_VERSION == 2
    assert set(data["checks"][0]) == {"check", "findings", "pairs_affected", "failing_pairs",
                                      "baseline_accepted_pairs"}


def test_summary_and_stats_agree_on_every_check_metric(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "a.jsonl", [*good_lines(12), BAD_LINES["invalid_json"][0]])
    out = tmp_path / "out"
    summary = audit([str(data)], str(write_contract(tmp_path)), str(out), jobs=1, run_id="r",
                    mutate=False, argv=("frayproof-audit", "audit", "a.jsonl"))
    stats = compute_stats(out).checks.filter(pl.col("findings") > 0)  # the summary omits zeros
    shared = ["check", "findings", "pairs_affected", "failing_pairs"]
    from_summary = [{k: row[k] for k in shared} for row in summary.to_dict()["checks"]]
    expected = stats.select(shared).sort("check").to_dicts()
    assert from_summary and sorted(from_summary, key=lambda r: r["check"]) == expected
    (run,) = read_table(out, "runs").collect().to_dicts()
    assert run["argv"] == ["frayproof-audit", "audit", "a.jsonl"]
    statuses = read_table(out, "pairs").group_by("status").len().collect()
    assert set(statuses["status"]) == {s.value for s in PairStatus} - {PairStatus.ENGINE_ERROR}
    assert statuses.filter(pl.col("status") == PairStatus.FAIL.value)["len"].item() == summary.failed


def test_parse_operator_list() -> None:
    assert parse_operator_list(None) is None
    parsed = parse_operator_list(" drop_tool_call, ,swap_call_result,")
    assert parsed == ("drop_tool_call", "swap_call_result")
    assert parse_operator_list("") == ()
