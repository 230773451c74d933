"""`pattern`, `patternProperties` and `propertyNames` in linear time (issue 23 D3).

The hostile patterns of the issue backtrack catastrophically under Python's `re`: `^(a+)+$`
against 34 a's and a '!' took longer than 30 s. Through every door (`tool-args`, a contract's
`tools:` under `check`, a record's `tools` under `audit`) they now run under RE2 and answer at
once; each reproducer runs in a real subprocess with a generous timeout, so a regression fails
the test instead of hanging the suite. Patterns RE2 cannot express (backreferences, lookaround)
run on a backtracking engine within the call's time budget, and a call the budget cannot judge
is reported as such (`TA-NOT-JUDGED`), never passed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.corpus import read_table
from frayproof_audit.toolargs import budget, patterns
from frayproof_audit.toolargs.compiled import tool_set
from frayproof_audit.toolargs.policy import DEFAULT_POLICY
from frayproof_audit.toolargs.rules import judge
from frayproof_audit.toolargs.schemas import ToolSchemaError, tool_schemas
from tests.helpers import run_cli

HOSTILE = "a" * 34 + "!"
NAME_PATTERN = r"^([a-zA-Z0-9]+\s?)*$"
NAME_HOSTILE = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"


def function(parameters: dict[str, Any], name: str = "t") -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def string_pattern(pattern: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": {"type": "string", "pattern": pattern}}}


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def tool_args(tmp_path: Path, parameters: dict[str, Any], arguments: dict[str, Any],
              expect: int) -> str:
    schema = write(tmp_path / "s.json", function(parameters))
    trace = write(tmp_path / "t.json", {"arguments": json.dumps(arguments)})
    return run_cli("tool-args", "--trace", trace, "--schema", schema, expect=expect, real=True).stdout


def problems(parameters: dict[str, Any], arguments: Any) -> list[tuple[str, str]]:
    tools = tool_set(tool_schemas([function(parameters)]))
    return [(p.code, p.evidence) for p in judge(tools, "t", json.dumps(arguments), True, DEFAULT_POLICY)]


# --- the reproducers, through each door --------------------------------------------------------

@pytest.mark.parametrize(("pattern", "text"), [("^(a+)+$", HOSTILE), (NAME_PATTERN, NAME_HOSTILE)])
def test_tool_args_answers_a_hostile_pattern_at_once(tmp_path: Path, pattern: str, text: str) -> None:
    out = tool_args(tmp_path, string_pattern(pattern), {"x": text}, expect=1)
    assert f"TA-SCHEMA $.x: '{text[:20]}" in out and "does not match" in out


def test_tool_args_hostile_pattern_properties_and_property_names(tmp_path: Path) -> None:
    parameters = {"type": "object", "patternProperties": {"^(a+)+$": {"type": "integer"}},
                  "propertyNames": {"pattern": "^(a+)+$"}}
    out = tool_args(tmp_path, parameters, {HOSTILE: "v"}, expect=1)
    assert "does not match '^(a+)+$'" in out
    out = tool_args(tmp_path, parameters, {"aaaa": "not an integer"}, expect=1)
    assert "is not of type 'integer'" in out


def test_drift_with_a_hostile_pattern_property(tmp_path: Path) -> None:
    parameters = {"type": "object", "properties": {}, "patternProperties": {"^(a+)+$": {}}}
    out = tool_args(tmp_path, parameters, {HOSTILE: 1}, expect=0)
    assert "TA-DRIFT" in out  # the key matches no pattern: undeclared, a warning


def test_check_with_a_hostile_contract_pattern(tmp_path: Path) -> None:
    session = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "t", "arguments": json.dumps({"x": HOSTILE})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    before, after = write(tmp_path / "b.json", session), write(tmp_path / "a.json", session)
    contract = tmp_path / "c.yaml"
    contract.write_text(json.dumps({"checks": {"tool_arguments": {"scope": "all"}},  # kept calls too
                                    "tools": [function(string_pattern("^(a+)+$"))]}), encoding="utf-8")
    out = run_cli("check", "--before", before, "--after", after, "--contract", contract, expect=1, real=True)
    assert "TA-SCHEMA" in out.stdout and "does not match" in out.stdout


def test_audit_with_a_hostile_record_pattern(tmp_path: Path) -> None:
    def record(pair_id: str, text: str, pattern: str) -> dict[str, Any]:
        session = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "t", "arguments": json.dumps({"x": text})}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            {"role": "user", "content": "thanks"},
        ]
        return {"pair_id": pair_id, "before": session, "after": session,
                "tools": [function(string_pattern(pattern))]}

    log = tmp_path / "logs" / "log.jsonl"
    log.parent.mkdir()
    records = [record("hostile", HOSTILE, "^(a+)+$"), record("name", NAME_HOSTILE, NAME_PATTERN),
               record("fine", "a" * 34, "^(a+)+$")]
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    contract = tmp_path / "c.yaml"  # the calls are kept verbatim: judged with `scope: all`
    contract.write_text("version: 1\nchecks:\n  tool_arguments:\n    scope: all\n", encoding="utf-8")
    run_cli("audit", log.parent, "--contract", contract, "--out", tmp_path / "out", "-q", "--no-mutate",
            "--fail-on", "none", expect=0, real=True)
    rows = read_table(tmp_path / "out", "pairs").collect().to_dicts()
    pairs = {row["pair_id"]: row["status"] for row in rows}
    assert pairs == {"hostile": "fail", "name": "fail", "fine": "pass"}
    findings = read_table(tmp_path / "out", "findings").collect()
    assert sorted(zip(findings["pair_id"], findings["code"], strict=True)) == [
        ("hostile", "TA-SCHEMA"), ("name", "TA-SCHEMA")]


# --- patterns RE2 cannot express ----------------------------------------------------------------

def test_a_lookahead_pattern_is_still_judged() -> None:
    password = {"type": "object", "properties": {"p": {"type": "string",
                                                       "pattern": r"^(?=.*\d)(?=.*[A-Z]).{8,}$"}}}
    assert problems(password, {"p": "Secret123"}) == []
    assert [code for code, _ in problems(password, {"p": "secret123"})] == ["TA-SCHEMA"]
    assert patterns.compile_pattern(r"^(?=.*\d)").engine == patterns.BACKTRACKING


def test_a_backreference_that_runs_out_of_time_is_not_judged(tmp_path: Path) -> None:
    out = tool_args(tmp_path, string_pattern(r"^(a|aa)+\1$"), {"x": "a" * 40 + "!"}, expect=1)
    assert "TA-NOT-JUDGED" in out and "backreference" in out


def test_not_judged_is_never_a_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "CALL_SECONDS", 0.05)
    found = problems(string_pattern(r"^(a|aa)+\1$"), {"x": "a" * 40 + "!"})
    assert [code for code, _ in found] == ["TA-NOT-JUDGED"]
    assert found[0][1].startswith(r"not judged: matching pattern '^(a|aa)+\\1$' (a backreference")


def test_a_unicode_property_pattern_loads() -> None:
    # An ECMA-262 pattern Python's re cannot read was refused as "not a 'regex'" before.
    parameters = {"type": "object", "properties": {"n": {"type": "string", "pattern": r"^\p{L}+$"}}}
    assert problems(parameters, {"n": "Zoë"}) == []
    assert [code for code, _ in problems(parameters, {"n": "Zoë1"})] == ["TA-SCHEMA"]


def test_a_pattern_no_engine_reads_is_an_input_error() -> None:
    with pytest.raises(ToolSchemaError, match="pattern"):
        tool_schemas([function(string_pattern("(unclosed"))])
    with pytest.raises(ToolSchemaError, match="not a valid pattern"):
        tool_schemas([function({"type": "object", "patternProperties": {"(": {}}})])


# --- ECMA-262 semantics ---------------------------------------------------------------------------

@pytest.mark.parametrize(("pattern", "text", "found"), [
    (r"^\d+$", "123", True),
    (r"^\d+$", "١٢٣", False),          # ECMA's \d is [0-9]; Python's re matched Arabic-Indic digits
    (r"^\w+$", "é", False),            # ECMA's \w is [A-Za-z0-9_]
    (r"^[a-z]+$", "abc\n", False),     # ECMA's $ is the end; Python's re matched before a final \n
    (r"^\s$", "\u00a0", True),          # ECMA's \s is Unicode white space and line terminators
    (r"^\s$", "\v", True),
    (r"^\s$", "\ufeff", True),
    (r"^[^\s]$", "\u2028", False),
    (r"^\S$", "x", True),
    (r"^[\S]$", " ", False),
    (r"^.$", "\r", False),              # ECMA's . excludes every line terminator
    (r"^.$", "\u2029", False),
    (r"^.$", "😀", True),               # one code point, as with the u flag
    (r"^\u00e9$", "é", True),
    (r"^\u{1F600}$", "😀", True),
    (r"^\uD83D\uDE00$", "😀", True),   # a surrogate pair escape is one code point
    (r"^\x41$", "A", True),
    (r"^[\b]$", "\b", True),           # in a class, \b is the backspace
    (r"\bcat\b", "a cat!", True),
    (r"^\cJ$", "\n", True),
    (r"^\0$", "\0", True),
    (r"^a{2,3}$", "aaa", True),
    (r"^a{2,3}$", "aaaa", False),
    (r"^(?<word>ab)+$", "abab", True),
    (r"^\/\.\-$", "/.-", True),
    (r"^[\]\-]+$", "]-", True),
    (r"[]", "anything", False),         # ECMA's empty class matches nothing
    (r"^[^]$", "\n", True),             # and its negation any code point
    (r"^a{1001}$", "a" * 1001, True),  # beyond RE2's repetition limit: the backtracking engine
    (r"^(a)\1$", "aa", True),
    (r"^(?!x).$", "y", True),
    (r"(?<=a)b", "ab", True),
    (r"^\p{L}+$", "éa", True),        # Unicode property escapes (RE2 knows these names)
    (r"^\p{Lu}$", "é", False),
    (r"^\p{Script=Greek}$", "α", True),
    (r"^\P{L}$", "1", True),
])
def test_patterns_read_as_ecma_262(pattern: str, text: str, found: bool) -> None:
    assert patterns.compile_pattern(pattern).search(text) is found


HOSTILE_PATTERNS = ["^(a+)+$", "^(a|a)*$", "(x+x+)+y", "^(([a-z])+.)+[A-Z]([a-z])+$", NAME_PATTERN,
                    r"^(\w+\s?)*$", "(.*a){12}"]


@pytest.mark.parametrize("pattern", HOSTILE_PATTERNS)
def test_hostile_patterns_run_under_re2(pattern: str) -> None:
    assert patterns.compile_pattern(pattern).engine == patterns.RE2


ATOMS = st.sampled_from(["a", "b", ".", r"\d", r"\w", r"\s", r"\S", "[ab]", "[^a]", r"[\s\d]", "x", "é",
                         r"\u0062", "[a-c]", r"\.", "(?:ab)", "(a|b)"])
QUANTIFIERS = st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,2}", "*?"])
TEXTS = st.text(st.sampled_from(["a", "b", "x", "1", " ", "\n", "\r", "é", "\u00a0", ".", "\u2028", "٣"]),
                max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(ATOMS, QUANTIFIERS), min_size=1, max_size=5), st.booleans(), st.booleans(),
       st.lists(TEXTS, min_size=1, max_size=4))
def test_both_engines_agree(parts: list[tuple[str, str]], start: bool, end: bool, texts: list[str]) -> None:
    """RE2 and the backtracking engine read a translated pattern the same way, so which of the
    two runs a pattern never changes what it matches."""
    source = ("^" if start else "") + "".join(atom + q for atom, q in parts) + ("$" if end else "")
    fast, slow = patterns.compile_pattern(source), patterns.compile_pattern(source, force_backtracking=True)
    assert fast.engine == patterns.RE2 and slow.engine == patterns.BACKTRACKING
    for text in texts:
        assert fast.search(text) == slow.search(text), (source, text)
