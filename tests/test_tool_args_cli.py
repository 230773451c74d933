"""`tool-args`: trace shapes, every call, the table, JSON, and the three exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit.errors import InputError
from frayproof_audit.toolargs.single import check_tool_args
from frayproof_audit.toolargs.text import one_line
from tests.helpers import run_cli

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"},
                           "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["location"],
        },
    },
}
PING = {"name": "ping", "input_schema": {"type": "object", "properties": {}}}


def write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def tool_call(arguments: Any, name: str | None = "get_weather", call_id: str = "call_1") -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    return {"id": call_id, "type": "function", "function": function}


def states(tmp_path: Path, trace: Any, tools: Any = WEATHER, **options: Any) -> list[list[tuple[str, str]]]:
    """Per call, the (rule, state) pairs that are not `pass`."""
    result = check_tool_args(write(tmp_path, "trace.json", trace), write(tmp_path, "tools.json", tools),
                             **options)
    return [[(r.rule, r.state) for r in call.rules if r.state != "pass"] for call in result.calls]


# --- trace shapes: every call -----------------------------------------------------------

def test_every_call_of_every_choice_is_checked_q4(tmp_path: Path) -> None:
    response = {"choices": [
        {"message": {"role": "assistant", "tool_calls": [tool_call('{"location":"Tokyo"}'),
                                                         tool_call("{}", call_id="call_2")]}},
        {"message": {"role": "assistant", "content": "no calls here"}},
        {"message": {"role": "assistant", "tool_calls": [tool_call('{"location":1}')]}},
    ]}
    result = check_tool_args(write(tmp_path, "t.json", response), write(tmp_path, "s.json", WEATHER))
    assert [call.call.where for call in result.calls] == [
        "choices[0].message.tool_calls[0]", "choices[0].message.tool_calls[1]",
        "choices[2].message.tool_calls[0]"]
    assert [[(r.rule, r.state) for r in c.rules if r.state != "pass"] for c in result.calls] == [
        [], [("required_fields", "FAIL")], [("arg_types", "FAIL")]]


@pytest.mark.parametrize("trace", [
    {"role": "assistant", "content": None, "tool_calls": [tool_call('{"location":"Tokyo"}')]},
    [{"role": "user", "content": "hi"},
     {"role": "assistant", "content": None, "tool_calls": [tool_call('{"location":"Tokyo"}')]}],
    tool_call('{"location":"Tokyo"}'),
    {"name": "get_weather", "arguments": '{"location":"Tokyo"}'},
    {"arguments": '{"location":"Tokyo"}'},
    "\ufeff" + json.dumps(tool_call('{"location":"Tokyo"}')),
], ids=["message", "array-of-messages", "tool-call", "name-and-arguments", "bare-arguments", "bom"])
def test_each_trace_shape_with_a_conforming_call_passes(tmp_path: Path, trace: Any) -> None:
    assert states(tmp_path, trace) == [[]]


def test_a_nameless_call_needs_a_single_tool(tmp_path: Path) -> None:
    assert states(tmp_path, {"arguments": "{}"}, [WEATHER]) == [[("required_fields", "FAIL")]]
    assert states(tmp_path, {"arguments": "{}"}, [WEATHER, PING]) == [
        [("unknown_tool", "FAIL"), ("required_fields", "skip"), ("arg_types", "skip"),
         ("no_schema_drift", "skip"), ("schema", "skip")]]


def test_raw_object_arguments_are_checked_and_flagged_q12(tmp_path: Path) -> None:
    result = check_tool_args(write(tmp_path, "t.json", {"arguments": {"location": 5}}),
                             write(tmp_path, "s.json", WEATHER))
    rules = {r.rule: r for r in result.calls[0].rules}
    assert [p.code for p in rules["valid_json"].problems] == ["TA-NOT-STRING"]
    assert rules["arg_types"].state == "FAIL"


def test_null_or_absent_arguments_follow_missing_arguments(tmp_path: Path) -> None:
    for trace in ({"arguments": None}, {"function": {"name": "ping"}}):
        assert states(tmp_path, trace, PING) == [
            [("valid_json", "FAIL"), ("required_fields", "skip"), ("arg_types", "skip"),
             ("no_schema_drift", "skip"), ("schema", "skip")]]
        assert states(tmp_path, trace, PING, policy=_policy(missing_arguments="as_empty_object")) == [[]]


def _policy(**options: Any) -> Any:
    from frayproof_audit.toolargs.policy import make_policy

    return make_policy(**options)


@pytest.mark.parametrize(("trace", "problem"), [
    ({"id": "x"}, "unrecognized trace"),
    ("[1, 2]", "[0]: must be a message or a tool call"),
    ({"choices": []}, "the response holds no tool call"),
    ({"choices": [{"message": {"role": "assistant", "content": "hi"}}]}, "holds no tool call"),
    ({"choices": [{"delta": {}}]}, "streaming chunks are not supported"),
    ({"choices": "x"}, "choices: must be an array"),
    ({"tool_calls": [{"id": 7, "type": "function", "function": {"name": "a", "arguments": "{}"}}]},
     "tool_calls[0].id: must be a string or null"),
    ({"tool_calls": ["call"]}, "tool_calls[0]: must be an object"),
    ({"type": "custom", "function": {"name": "a", "arguments": ""}}, "type: must be 'function'"),
    ("", "empty document"),
    ("{'a': 1}", "invalid JSON"),
], ids=["no-known-key", "array-of-numbers", "no-choices", "no-calls", "stream-chunk", "choices-string",
        "numeric-id", "string-call", "custom-tool", "empty-file", "not-json"])
def test_an_unusable_trace_says_why(tmp_path: Path, trace: Any, problem: str) -> None:
    with pytest.raises(InputError, match="Invalid trace") as raised:
        check_tool_args(write(tmp_path, "t.json", trace), write(tmp_path, "s.json", WEATHER))
    assert problem in str(raised.value)


# --- the command -----------------------------------------------------------------------------

def test_text_table_has_one_row_per_call_and_rule(tmp_path: Path) -> None:
    trace = write(tmp_path, "t.json", {"tool_calls": [
        tool_call('{"location":"Tokyo","timezone":"Asia/Tokyo"}'), tool_call("{'location':'Tokyo'}")]})
    out = run_cli("tool-args", "--trace", trace, "--schema", write(tmp_path, "s.json", WEATHER),
                  expect=1).stdout
    lines = out.splitlines()
    assert lines[4].split() == ["CALL", "INVARIANT", "SEV", "STATE", "EVIDENCE"]
    rows = [line for line in lines[5:] if line.startswith(("1 ", "2 "))]
    assert len(rows) == 12
    assert rows[4].split()[2:] == ["no_schema_drift", "warning", "FAIL", "TA-DRIFT", "timezone"]
    assert rows[6].split()[2:6] == ["valid_json", "error", "FAIL", "TA-JSON"]
    assert lines[-1] == "FAIL: 6 pass / 2 fail / 4 skip; 1 error(s), 1 warning(s)"


def test_warnings_pass_unless_strict(tmp_path: Path) -> None:
    trace = write(tmp_path, "t.json", tool_call('{"location":"Tokyo","timezone":"x"}'))
    schema = write(tmp_path, "s.json", [WEATHER])
    plain = run_cli("tool-args", "--trace", trace, "--schema", schema).stdout
    assert plain.splitlines()[-1].startswith("PASS")
    strict = run_cli("tool-args", "--trace", trace, "--schema", schema, "--strict", expect=1).stdout
    assert strict.splitlines()[-1].endswith("(strict: warnings fail)")
    run_cli("tool-args", "--trace", trace, "--schema", schema, "--rule", "no_schema_drift=off", "--strict")


def test_json_output_and_rule_levels(tmp_path: Path) -> None:
    trace = write(tmp_path, "t.json", tool_call('{"location":"Tokyo","unit":"kelvin"}'))
    schema = write(tmp_path, "s.json", {"tools": [WEATHER]})
    failed = json.loads(run_cli("tool-args", "--trace", trace, "--schema", schema, "--format", "json",
                                expect=1).stdout)
    assert failed["errors"] == 1 and failed["passed"] is False
    (call,) = failed["calls"]
    assert call["id"] == "call_1" and call["tool"] == "get_weather" and call["where"] == "the call"
    schema_rule = call["results"][-1]
    assert schema_rule["invariant"] == "schema" and schema_rule["state"] == "fail"
    evidence = "$.unit: 'kelvin' is not one of ['celsius', 'fahrenheit']"
    assert schema_rule["findings"] == [{"code": "TA-SCHEMA", "evidence": evidence}]
    passed = json.loads(run_cli("tool-args", "--trace", trace, "--schema", schema, "--format", "json",
                                "--rule", "schema=off").stdout)
    assert passed["passed"] is True and passed["calls"][0]["results"][-1]["state"] == "off"


@pytest.mark.parametrize(("args", "message"), [
    (["--rule", "schema"], "--rule: --rule 'schema': write RULE=LEVEL"),
    (["--rule", "schemas=off"], "unknown rule 'schemas'"),
    (["--rule", "schema=fatal"], "schema: must be one of error, warning, off"),
])
def test_bad_rule_options_are_input_errors(tmp_path: Path, args: list[str], message: str) -> None:
    trace = write(tmp_path, "t.json", tool_call("{}"))
    out = run_cli("tool-args", "--trace", trace, "--schema", write(tmp_path, "s.json", WEATHER), *args,
                  "--format", "json", expect=2).stdout
    assert message in json.loads(out)["error"]


def test_could_not_run_is_exit_2_never_1_q2(tmp_path: Path) -> None:
    trace = write(tmp_path, "t.json", tool_call("{}"))
    bad_schema = write(tmp_path, "bad.json", {"type": "object", "properties": {}})
    empty = write(tmp_path, "empty.json", [])
    for args in (["--trace", tmp_path / "missing.json", "--schema", write(tmp_path, "s.json", WEATHER)],
                 ["--trace", trace, "--schema", bad_schema],
                 ["--trace", trace, "--schema", empty],
                 ["--trace", trace, "--schema", tmp_path]):
        result = run_cli("tool-args", *args, expect=2)
        assert result.stdout == "" and result.stderr.startswith("INPUT ERROR: ")
    assert "not a tool definition" in run_cli("tool-args", "--trace", trace, "--schema", bad_schema,
                                              expect=2).stderr


@pytest.mark.parametrize(("trace", "code"), [
    (tool_call('{"location":"Tokyo"}'), 0),
    (tool_call('{"location":42}'), 1),
    ({"no": "calls"}, 2),
], ids=["pass", "fail", "could-not-run"])
def test_real_process_exit_codes(tmp_path: Path, trace: Any, code: int) -> None:
    result = run_cli("tool-args", "--trace", write(tmp_path, "t.json", trace),
                     "--schema", write(tmp_path, "s.json", WEATHER), real=True, expect=code)
    assert (result.stdout if code < 2 else result.stderr)


# --- evidence stays one readable line ----------------------------------------------------------

def test_evidence_escapes_control_characters_and_cuts_by_columns() -> None:
    assert one_line("a\nb\tc\x1b[31m") == "a\\nb\\tc\\x1b[31m"
    assert one_line("x" * 80, 80) == "x" * 80
    assert one_line("x" * 200, 80) == "x" * 77 + "..."
    cut = one_line("東京" * 60, 80)
    assert cut.endswith("...") and sum(2 if c in "東京" else 1 for c in cut) <= 80
    cut.encode("utf-8")


def test_long_cjk_arguments_keep_the_table_intact(tmp_path: Path) -> None:
    arguments = json.dumps({"location": "東京\n" * 100, "x": 1}, ensure_ascii=False)
    out = run_cli("tool-args", "--trace", write(tmp_path, "t.json", tool_call(arguments)),
                  "--schema", write(tmp_path, "s.json", WEATHER), "--strict", expect=1).stdout
    rows = out.splitlines()[5:11]
    assert len(rows) == 6 and all(len(row) <= 140 for row in rows)
