"""Tool schemas in a corpus: a record's own `tools` judge its calls, in every table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from frayproof_audit.contract import Contract
from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.run.record_tools import RecordTools
from tests.helpers import run_cli

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["location"]}}}


def _pair(arguments: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "user", "content": "thanks"},
    ]


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")


def test_record_tools_reach_findings_and_mutants(tmp_path: Path) -> None:
    good, bad = _pair('{"location": "Paris", "days": 2}'), _pair('{"days": "two"}')
    _write(tmp_path / "log.jsonl", [
        {"pair_id": "good", "before": good, "after": good, "tools": [WEATHER]},
        {"pair_id": "bad", "before": good, "after": bad, "tools": [WEATHER]},  # the compactor's
        # the model's own bad call, kept verbatim: not judged under `scope: changed`, the default
        {"pair_id": "kept-bad", "before": bad, "after": bad, "tools": [WEATHER]},
        {"pair_id": "no-tools", "before": bad, "after": bad},
        {"pair_id": "broken-tools", "before": good, "after": good, "tools": [{"type": "object"}]},
    ])
    summary = audit([str(tmp_path / "log.jsonl")], None, str(tmp_path / "out"), jobs=1,
                    fail_on=("none",))
    assert (summary.passed, summary.failed, summary.input_errors) == (3, 1, 1)
    pairs = {row["pair_id"]: row for row in read_table(tmp_path / "out", "pairs").collect().to_dicts()}
    assert pairs["bad"]["status"] == "fail" and pairs["no-tools"]["status"] == "pass"
    assert pairs["kept-bad"]["status"] == "pass"
    assert "the record's tools" in pairs["broken-tools"]["input_error"]
    findings = read_table(tmp_path / "out", "findings").collect()
    assert sorted(zip(findings["pair_id"], findings["code"], findings["rule"], strict=True)) == [
        ("bad", "TA-REQUIRED", "required_fields"), ("bad", "TA-TYPE", "arg_types")]
    mutants = read_table(tmp_path / "out", "mutants").collect()
    operators_of = {pair_id: set(group["operator"]) for (pair_id,), group in mutants.group_by("pair_id")}
    assert {"drop_required_argument", "retype_argument"} <= operators_of["good"]
    assert not {"drop_required_argument", "retype_argument"} & operators_of["no-tools"]
    retyped = mutants.filter((mutants["pair_id"] == "good") & (mutants["operator"] == "retype_argument"))
    assert set(retyped["status"]) == {"caught"}  # tool_arguments catches every wrong type
    assert {site for sites in retyped["sites"] for site in sites} == {
        "after[1].tool_calls[0].arguments.location", "after[1].tool_calls[0].arguments.days"}


def test_the_same_tool_list_builds_one_contract_per_worker() -> None:
    cache, contract = RecordTools(), Contract()
    first = cache.contract_for(contract, [WEATHER])
    assert first.tools[0].name == "get_weather"
    assert cache.contract_for(contract, [json.loads(json.dumps(WEATHER))]) is first
    assert cache.contract_for(contract, None) is contract
    assert cache.contract_for(contract, []) is contract


def test_audit_cli_with_record_tools(tmp_path: Path) -> None:
    good, bad = _pair('{"location": "Paris"}'), _pair('{"days": 2}')
    _write(tmp_path / "log.jsonl", [{"before": good, "after": bad, "tools": [WEATHER]}])
    out = run_cli("audit", tmp_path / "log.jsonl", "--out", tmp_path / "out", "-q", expect=1,
                  real=True)
    assert "tool_arguments" in out.stdout
