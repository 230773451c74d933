"""`audit --repair-out`: which findings a transcript repair fixes (`findings.repairable`), and
the repaired after snapshots of the failing pairs it fixes completely."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from frayproof_audit.corpus.dataset.table_reader import read_table
from frayproof_audit.corpus.run.audit_config import AuditConfig
from frayproof_audit.corpus.run.audit_run import run_audit
from frayproof_audit.engine import check
from frayproof_audit.transcript import inspect
from tests.anthropic_wire import to_anthropic
from tests.corpus_support import good_lines, line, record, write_contract, write_jsonl
from tests.helpers import run_cli
from tests.otel_messages import to_otel


def test_repair_out_writes_fully_repairable_failures(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    anthropic = record(90, "drop_result")
    anthropic["before"], anthropic["after"] = (to_anthropic(anthropic["before"], top_system=False)[0],
                                               to_anthropic(anthropic["after"], top_system=False)[0])
    otel = record(91, "drop_result")
    otel["before"], otel["after"] = to_otel(otel["before"]), json.dumps(to_otel(otel["after"]))
    corpus = write_jsonl(tmp_path / "in.jsonl", [*good_lines(8),
                                                 line({**anthropic, "format": "anthropic"}),
                                                 line({**otel, "format": "otel-genai"})])
    repaired = tmp_path / "repaired"
    summary = run_audit(AuditConfig(inputs=(str(corpus),), out=str(tmp_path / "out"),
                                    contract=str(contract), n_jobs=1, mutate=False,
                                    repair_out=str(repaired)))
    assert summary.failed == 6
    findings = read_table(tmp_path / "out", "findings").collect()
    by_code = dict(findings.group_by("code").agg(pl.col("repairable").all()).iter_rows())
    assert by_code == {"TP-UNANSWERED": True, "PIN-ROLE": False}
    lines = [json.loads(text) for path in sorted(repaired.iterdir())
             for text in path.read_text(encoding="utf-8").splitlines()]
    assert sorted(item["pair_id"] for item in lines) == ["p0002", "p0006", "p0090", "p0091"]
    records = {json.loads(text)["pair_id"]: json.loads(text) for text in corpus.read_text().splitlines()}
    for item in lines:
        source = records[item["pair_id"]]
        fmt = item["format"]
        assert fmt == source.get("format", "openai")
        assert isinstance(item["after"], str) == isinstance(source["after"], str)  # a string stays one
        assert inspect(item["after"], fmt).valid and item["fixed"] == ["TP-UNANSWERED"]
        after = json.loads(item["after"]) if isinstance(item["after"], str) else item["after"]
        assert check(source["before"], after, contract, input_format=fmt).passed
        assert [change["action"] for change in item["changes"]] == ["synthesize"]


def test_repair_out_on_the_command_line(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    corpus = write_jsonl(tmp_path / "in.jsonl", good_lines(4))
    run_cli("audit", corpus, "--contract", contract, "--out", tmp_path / "out", "--no-mutate",
            "--jobs", "1", "--repair-out", tmp_path / "fixed", "-q", expect=1)
    written = list((tmp_path / "fixed").glob("repaired-*.jsonl"))
    assert len(written) == 1 and json.loads(written[0].read_text())["pair_id"] == "p0002"
