"""Transcripts in the shape they came in: an `otel-genai` message list given as a JSON string
(as spans carry `gen_ai.input.messages`) is repaired and compacted into a JSON string, and
`auto` takes the string itself as its evidence. Also the library side of many inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from frayproof_audit.errors import InputError
from frayproof_audit.report import EXIT_FAIL, EXIT_INPUT_ERROR, EXIT_PASS
from frayproof_audit.transcript import IrreparableError, compact, inspect, repair
from frayproof_audit.transcript.batch import compact_paths, repair_paths
from tests.helpers import FIXTURES, call, result, run_cli, user
from tests.test_transcript_properties import damaged

OTEL = json.loads((FIXTURES / "transcripts" / "otel-genai.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("fmt", ["otel-genai", "auto"])
def test_repair_of_an_otel_string_returns_a_string(fmt: str) -> None:
    text = json.dumps(OTEL)
    repaired = repair(text, fmt)
    assert isinstance(repaired.transcript, str) and repaired.before.format == "otel-genai"
    assert json.loads(repaired.transcript) == repair(OTEL, "otel-genai").transcript
    assert [c.to_dict() for c in repaired.changes] == [
        c.to_dict() for c in repair(OTEL, "otel-genai").changes]
    again = repair(repaired.transcript, fmt)
    assert again.changes == () and again.transcript == repaired.transcript


def test_an_unchanged_string_comes_back_as_its_own_text() -> None:
    text = json.dumps(repair(OTEL, "otel-genai").transcript, indent=1)  # spacing no rewrite would produce
    assert repair(text, "otel-genai").transcript == text
    assert compact(text, "otel-genai", max_tokens=10_000).transcript == text


def test_compact_of_an_otel_string_returns_a_string() -> None:
    valid = repair(OTEL, "otel-genai").transcript
    done = compact(json.dumps(valid), max_tokens=60, keep=1)
    assert isinstance(done.transcript, str) and done.format == "otel-genai"
    assert json.loads(done.transcript) == compact(valid, "otel-genai", max_tokens=60,
                                                  keep=1).transcript


def test_auto_takes_a_string_as_otel_evidence() -> None:
    assert inspect("[]").format == "otel-genai"
    plain = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    assert inspect(json.dumps(plain)).format == "otel-genai"
    with pytest.raises(InputError, match="Cannot tell the input format"):
        inspect(json.dumps([user(), call("a"), result("a")]))  # Chat evidence in a string
    with pytest.raises(InputError):
        repair("[", "otel-genai")


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(damaged().filter(lambda case: case[1] == "otel-genai"))
def test_string_in_string_out_matches_the_list(case: tuple[Any, str]) -> None:
    snapshot, fmt = case
    try:
        from_list = repair(snapshot, fmt)
    except IrreparableError:
        with pytest.raises(IrreparableError):
            repair(json.dumps(snapshot), fmt)
        return
    from_text = repair(json.dumps(snapshot), fmt)
    assert isinstance(from_text.transcript, str)
    assert json.loads(from_text.transcript) == from_list.transcript


def test_a_json_file_holding_a_string_is_repaired_into_a_string(tmp_path: Path) -> None:
    path = tmp_path / "span.json"
    path.write_text(json.dumps(json.dumps(OTEL)), encoding="utf-8")
    repaired = json.loads(run_cli("repair", path, expect=0).stdout)
    assert isinstance(repaired, str) and inspect(repaired).valid
    log = tmp_path / "spans.jsonl"
    log.write_text(json.dumps({"pair_id": "s1", "format": "otel-genai", "after": json.dumps(OTEL)})
                   + "\n", encoding="utf-8")
    line = json.loads(run_cli("repair", log, expect=0).stdout)
    assert line["pair_id"] == "s1" and isinstance(line["after"], str)


def test_the_library_runs_over_paths(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps([user(), call("a")]), encoding="utf-8")
    single = repair_paths([str(one)])
    assert single.single and single.exit_code == EXIT_PASS
    assert json.loads(single.payload() or "")[-1]["tool_call_id"] == "a"
    many = repair_paths([str(one), str(tmp_path / "gone.json")])
    assert not many.single and many.exit_code == EXIT_INPUT_ERROR
    assert [item.status for item in many.items] == ["changed", "skipped"]
    refused = compact_paths([str(one), str(tmp_path / "gone.json")], 5)
    assert refused.exit_code == EXIT_FAIL and refused.payload() is not None
    assert compact_paths([str(one)], 5).payload() is None  # one file refused: nothing to write
