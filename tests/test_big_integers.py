"""Integers beyond 64 bits are valid JSON (up to Python's 4,300 digits) and are data: wherever a
record, a tool schema or a contract is written again, they are written exactly, never crash it.
(Integer *options* are bounded instead: tests/test_cli_integer_bounds.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit.contract import load_contract
from frayproof_audit.corpus.dataset.table_reader import read_table
from tests.anthropic_wire import to_anthropic
from tests.corpus_support import line, record
from tests.helpers import EXAMPLE_CONTRACT, run_cli
from tests.otel_messages import to_otel

BIG = [10**30, -(10**30), 2**64, int("9" * 4300)]
"""Past orjson's 64 bits, up to the longest literal Python reads (sys.get_int_max_str_digits)."""


def deep(levels: int) -> Any:
    """A value nested `levels` arrays deep: past the 254 levels orjson writes, under the 512 read."""
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def dangling(index: int, meta: Any, fmt: str = "openai") -> dict[str, Any]:
    """The issue's record: the after lost a tool result (a dangling call, which a repair fixes)
    and its first user message carries `meta`."""
    rec = record(index, "drop_result")
    for messages in (rec["before"], rec["after"]):
        messages[1]["meta"] = meta
    if fmt == "anthropic":
        rec["before"], rec["after"] = (to_anthropic(rec["before"], top_system=False)[0],
                                       to_anthropic(rec["after"], top_system=False)[0])
    elif fmt == "otel-genai":
        rec["before"], rec["after"] = to_otel(rec["before"]), json.dumps(to_otel(rec["after"]))
        rec["before"][1]["meta"] = meta  # the OTel spelling keeps extra message keys as they are
        after = json.loads(rec["after"])
        after[1]["meta"] = meta
        rec["after"] = json.dumps(after)
    return {**rec, "format": fmt}


def exact_line(value: dict[str, Any]) -> bytes:
    return json.dumps(value).encode() + b"\n"  # orjson cannot write them: the test's own writer


def repaired_lines(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(text) for path in sorted(folder.glob("repaired-*.jsonl"))
            for text in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("meta", [*BIG, deep(300)], ids=["1e30", "-1e30", "2^64", "4300-digits", "deep"])
@pytest.mark.parametrize("repair_out", [False, True], ids=["plain", "repair-out"])
def test_a_repairable_record_with_a_big_integer_keeps_its_verdict(
        tmp_path: Path, meta: Any, repair_out: bool) -> None:
    """The issue's reproducer: `audit bi.jsonl --contract examples/contract.yaml`."""
    (tmp_path / "bi.jsonl").write_bytes(exact_line(dangling(1, meta)))
    extra = ("--repair-out", "fixed") if repair_out else ()
    done = run_cli("audit", "bi.jsonl", "--contract", EXAMPLE_CONTRACT, "--out", "o", "--format", "json",
                   "-q", *extra, expect=1, cwd=tmp_path)
    summary = json.loads(done.stdout)
    assert (summary["pairs"], summary["failed"], summary["engine_errors"]) == (1, 1, 0)
    findings = read_table(tmp_path / "o", "findings").collect()
    assert findings.select("code", "repairable").rows() == [("TP-UNANSWERED", True)]
    if repair_out:
        [fixed] = repaired_lines(tmp_path / "fixed")
        assert fixed["after"][1]["meta"] == meta
        assert [change["action"] for change in fixed["changes"]] == ["synthesize"]
    else:
        assert not (tmp_path / "fixed").exists()


def test_every_format_writes_its_repaired_record_exactly_in_a_subprocess(tmp_path: Path) -> None:
    records = [dangling(index, {"n": 10**30 + index, "m": -(2**70)}, fmt)
               for index, fmt in enumerate(("openai", "anthropic", "otel-genai"))]
    (tmp_path / "bi.jsonl").write_bytes(b"".join(map(exact_line, records)) + line(record(7, "keep_all")))
    done = run_cli("audit", "bi.jsonl", "--contract", EXAMPLE_CONTRACT, "--out", "o", "--format", "json",
                   "-q", "--repair-out", "fixed", expect=1, real=True, cwd=tmp_path)
    assert "Traceback" not in done.stderr
    summary = json.loads(done.stdout)
    assert (summary["pairs"], summary["passed"], summary["failed"], summary["engine_errors"]) == (4, 1, 3, 0)
    fixed = {item["format"]: item for item in repaired_lines(tmp_path / "fixed")}
    assert sorted(fixed) == ["anthropic", "openai", "otel-genai"]
    for index, source in enumerate(records):
        after = fixed[source["format"]]["after"]
        assert isinstance(after, str) == isinstance(source["after"], str)
        after = json.loads(after) if isinstance(after, str) else after
        assert after[1]["meta"] == {"n": 10**30 + index, "m": -(2**70)}, source["format"]


# --- tool schemas: a big bound is schema data -----------------------------------------------

TOOL = {"type": "function", "function": {"name": "read", "parameters": {
    "type": "object", "properties": {"n": {"type": "integer", "maximum": 10**30}}}}}


def schema_contract(folder: Path, maximum: int, inline: bool = True) -> Path:
    """`examples/audit_contract.yaml` with one tool whose `n` is at most `maximum`, inline or
    (`inline=False`) as a tools JSON file next to it."""
    tool = json.loads(json.dumps(TOOL))
    tool["function"]["parameters"]["properties"]["n"]["maximum"] = maximum
    text = (EXAMPLE_CONTRACT.parent / "audit_contract.yaml").read_text(encoding="utf-8")
    # the call is kept verbatim from before: judged only with `scope: all` (blame's default,
    # `changed`, leaves the model's own arguments alone)
    text = text.replace("checks:\n", "checks:\n  tool_arguments:\n    scope: all\n", 1)
    folder.mkdir(parents=True, exist_ok=True)
    if inline:
        text += f"tools:\n  - {json.dumps(tool)}\n"
    else:
        (folder / "tools.json").write_text(json.dumps([tool]), encoding="utf-8")
        text += "tools: tools.json\n"
    path = folder / "contract.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def calls_with(value: int, index: int = 0) -> bytes:
    """A passing record whose tool call passes `n: value` (kept in before and after)."""
    rec = record(index, "keep_all")
    arguments = json.dumps({"n": value})
    for messages in (rec["before"], rec["after"]):
        messages[2]["tool_calls"][0]["function"]["arguments"] = arguments
    return line(rec)


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "tools-file"])
def test_a_tool_schema_with_a_big_bound_is_audited_and_committed(tmp_path: Path, inline: bool) -> None:
    contract = schema_contract(tmp_path / "c", 10**30, inline)
    (tmp_path / "in.jsonl").write_bytes(calls_with(10**30) + calls_with(10**30 + 1, 1))
    for real, out in ((False, "o"), (True, "o2")):
        # the bad call is the model's own, kept verbatim: its finding is inherited, so the gate
        # counts it with --blame all
        done = run_cli("audit", "in.jsonl", "--contract", contract, "--out", out, "--format", "json",
                       "-q", "--no-mutate", "--incremental", "--blame", "all", expect=1, real=real,
                       cwd=tmp_path)
        summary = json.loads(done.stdout)
        assert (summary["pairs"], summary["passed"], summary["failed"]) == (2, 1, 1)
        [run] = read_table(tmp_path / out, "runs").collect().rows(named=True)
        assert run["contract_text"] == contract.read_text(encoding="utf-8")  # stored exactly
        assert run["contract_fingerprint"] == load_contract(contract).fingerprint


def test_the_fingerprint_tells_big_bounds_apart(tmp_path: Path) -> None:
    """Exact: a float would make 10^30 and 10^30 + 1 one number."""
    prints = {load_contract(schema_contract(tmp_path / str(n), n, inline)).fingerprint
              for n in (10**30, 10**30 + 1, 2**64) for inline in (True, False)}
    assert len(prints) == 3
    ordinary = load_contract(schema_contract(tmp_path / "small", 100))
    assert ordinary.fingerprint == load_contract(schema_contract(tmp_path / "small2", 100, False)).fingerprint
