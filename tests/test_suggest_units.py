"""The parts of `suggest`: selectors, options, reading pair files, candidate texts, inferred
tool schemas, the YAML writer, and records in other formats or with their own tools."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit import check
from frayproof_audit.contract import parse_contract
from frayproof_audit.suggest import (
    Share,
    SuggestConfig,
    SuggestError,
    emit,
    log_day,
    parse_good,
    read_pairs,
    suggest,
)
from frayproof_audit.suggest.inferred_tools import infer_tools
from frayproof_audit.suggest.texts import pieces, text_candidates
from sessiongen.anthropic_wire import to_anthropic
from tests.helpers import EXAMPLES, history

# --------------------------------------------------------------------------- selectors and options


def test_selectors_parse_and_name_what_is_wrong(tmp_path: Path) -> None:
    assert parse_good("all").kind == "all"
    assert parse_good("compactor=a, b").compactors == ("a", "b")
    night = parse_good("night=2025-06-02..2025-06-04")
    assert (night.first_day, night.last_day) == (dt.date(2025, 6, 2), dt.date(2025, 6, 4))
    assert parse_good("night=2025-06-02").last_day == dt.date(2025, 6, 2)
    both = parse_good("compactor=a;night=2025-06-02")
    assert both.kind == "and" and [part.kind for part in both.parts] == ["compactor", "night"]
    assert parse_good(f"passes={EXAMPLES / 'contract.yaml'}").contract is not None
    problems = {
        "": "expected all, compactor=NAME",
        "some": "expected all",
        "owner=me": "unknown selector 'owner'",
        "compactor=": "name at least one compactor",
        "compactor=a,,b": "name at least one compactor",
        "night=June": "'June' is not a day",
        "night=2025-06-05..2025-06-01": "ends before it starts",
        "passes=": "name a contract file",
        f"passes={tmp_path / 'missing.yaml'}": "missing.yaml",
        "all;": "an empty selector",
    }
    for text, message in problems.items():
        with pytest.raises(SuggestError, match="good selector") as raised:
            if text == "":
                SuggestConfig(good="compactor=x")  # a valid config; the empty text is parse_good's
                parse_good(text)
            else:
                parse_good(text)
        assert message in str(raised.value), text


@pytest.mark.parametrize(("options", "message"), [
    ({"good": " "}, "good: a selector is required"),
    ({"min_support": 0}, "min_support: must be in (0, 1]"),
    ({"min_support": 1.5}, "min_support: must be in (0, 1]"),
    ({"min_support": float("nan")}, "min_support: must be a finite number"),
    ({"min_support": True}, "min_support: must be a finite number"),
    ({"holdout": 1}, "holdout: must be in [0, 1)"),
    ({"holdout": -0.1}, "holdout: must be in [0, 1)"),
    ({"input_format": "xml"}, "input_format: unknown format 'xml'"),
    ({"min_sessions": 0}, "min_sessions: must be an integer of at least 1"),
    ({"mutation_pairs": -1}, "mutation_pairs: must be an integer of at least 0"),
    ({"max_mutants": 0}, "max_mutants: must be an integer of at least 1"),
    ({"infer_tools": 1}, "infer_tools: must be true or false"),
    ({"operators": ["drop_tool_call"]}, "operators: must be a tuple"),
])
def test_bad_options_are_input_errors(options: dict, message: str) -> None:
    with pytest.raises(SuggestError) as raised:
        SuggestConfig(**options)
    assert message in str(raised.value)


def test_run_time_problems_are_named(tmp_path: Path) -> None:
    records = [{"pair_id": "a", "before": history(1), "after": history(1)}]
    with pytest.raises(SuggestError, match="unknown operator"):
        suggest(records, operators=("drop_everything",))
    with pytest.raises(SuggestError, match=r"compare_with: .*nothing\.yaml"):
        suggest(records, compare_with=str(tmp_path / "nothing.yaml"))
    with pytest.raises(SuggestError, match=r"no good pair to learn from \(1 usable pair\(s\), 0 good"):
        suggest(records, good="compactor=nobody")


def test_unusable_records_are_counted_and_named_never_raised() -> None:
    good = {"pair_id": "ok", "session_id": "s", "before": history(1), "after": history(1)}
    records = [
        good, "not a record", {"pair_id": "x", "before": history(1)},
        {"pair_id": "y", "before": history(1), "after": [{"role": "user", "content": 42}]},
        {"pair_id": "z", "before": history(1), "after": history(1), "format": "xml"},
        {"pair_id": "t", "before": history(1), "after": history(1), "logged_at": True},
        {"pair_id": "u", "before": history(1), "after": history(1), "tools": [{"nope": 1}]},
        {"pair_id": 1.5, "before": history(1), "after": history(1)},
    ]
    found = suggest(records, holdout=0, mutation_pairs=0)
    assert found.counts.records == 8 and found.counts.unusable == 7 and found.counts.learned == 1
    reasons = {problem.index: problem.reason for problem in found.unusable}
    assert reasons[1] == "the record is not an object"
    assert reasons[2] == "the record has no 'after'"
    assert reasons[3].startswith("after: ") and "content" in reasons[3]
    assert reasons[4].startswith("format: unknown format")
    assert reasons[5] == "logged_at: must be an RFC 3339 string or epoch seconds"
    assert reasons[6].startswith("Invalid tools 'the record's tools'")
    assert reasons[7] == "pair_id: must be a string or an integer"
    assert found.to_dict()["unusable"][0] == {"index": 1, "pair_id": None, "reason": reasons[1]}


def test_log_days_read_as_the_audit_reads_them() -> None:
    assert log_day("2025-06-02T23:59:59Z") == dt.date(2025, 6, 2)
    assert log_day("2025-06-02t23:30:00+02:00") == dt.date(2025, 6, 2)
    assert log_day("2025-06-02T23:30:00-02:00") == dt.date(2025, 6, 3)
    assert log_day("2025-06-02T10:00:00") == dt.date(2025, 6, 2)
    assert log_day(1748822400) == dt.date(2025, 6, 2)
    assert log_day(1748822400000) == dt.date(2025, 6, 2)
    assert log_day(None) is None
    for bad in ("yesterday", float("inf"), [1]):
        with pytest.raises(ValueError, match="logged_at"):
            log_day(bad)


def test_a_night_selects_by_the_utc_day_of_logged_at() -> None:
    def record(key: str, when: str | None) -> dict:
        return {"pair_id": key, "session_id": key, "logged_at": when, "before": history(2),
                "after": history(2)}

    records = [record("a", "2025-06-02T01:00:00Z"), record("b", "2025-06-02T23:00:00-03:00"),
               record("c", "2025-06-03T01:00:00Z"), record("d", None)]
    found = suggest(records, good="night=2025-06-02", holdout=0, mutation_pairs=0)
    assert (found.counts.good, found.counts.others) == (1, 3)
    found = suggest(records, good="night=2025-06-02..2025-06-03", holdout=0, mutation_pairs=0)
    assert (found.counts.good, found.counts.others) == (3, 1)


def test_passes_selects_the_pairs_a_contract_passes() -> None:
    kept = history(2)
    lost = history(2)[1:]  # the system prompt dropped
    records = [{"pair_id": f"k{i}", "session_id": f"k{i}", "before": history(2), "after": kept}
               for i in range(3)]
    records += [{"pair_id": f"l{i}", "session_id": f"l{i}", "before": history(2), "after": lost}
                for i in range(2)]
    found = suggest(records, good=f"passes={EXAMPLES / 'contract.yaml'}", holdout=0, mutation_pairs=0)
    assert (found.counts.good, found.counts.others) == (3, 2)
    assert found.others is not None and found.others.count == 2
    assert found.rule("pins.system-prompt").proposed


# --------------------------------------------------------------------------- reading pair files


def test_read_pairs_reads_jsonl_json_and_gzip_and_names_every_bad_line(tmp_path: Path) -> None:
    record = {"pair_id": "a", "before": history(1), "after": history(1)}
    logs = tmp_path / "logs"
    (logs / "night1").mkdir(parents=True)
    (logs / "_skipped").mkdir()
    lines = [json.dumps(record), "", '{"pair_id": "b",', '{"a": 1, "a": 2}', '{"x": NaN}', "[1]",
             '{"x": 1e999}']
    (logs / "night1" / "pairs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    compressed = gzip.compress(b"\xef\xbb\xbf" + json.dumps(record).encode() + b"\n\xff\n")
    (logs / "night1" / "more.jsonl.gz").write_bytes(compressed)
    (logs / "array.json").write_text(json.dumps([record, record]), encoding="utf-8")
    (logs / "_skipped" / "x.jsonl").write_text("garbage\n", encoding="utf-8")
    (logs / "notes.txt").write_text("not a log", encoding="utf-8")
    read = read_pairs(logs)
    assert len(read.records) == 4
    assert [Path(f).name for f in read.files] == ["array.json", "more.jsonl.gz", "pairs.jsonl"]
    problems = [(Path(p.source).name, p.line, p.reason) for p in read.problems]
    assert problems == [
        ("more.jsonl.gz", 2, "not UTF-8 (byte 0)"),
        ("pairs.jsonl", 3, "invalid JSON: Expecting property name enclosed in double quotes (column 17)"),
        ("pairs.jsonl", 4, "invalid JSON: duplicate key 'a'"),
        ("pairs.jsonl", 5, "invalid JSON: NaN is not a JSON number"),
        ("pairs.jsonl", 6, "not a JSON object"),
        ("pairs.jsonl", 7, "invalid JSON: 1e999 is too large for a number"),
    ]
    assert str(read.problems[1]).endswith("pairs.jsonl:3: invalid JSON: Expecting property name "
                                          "enclosed in double quotes (column 17)")
    assert read_pairs([logs / "array.json", logs / "array.json"]).files == (str(logs / "array.json"),)
    with pytest.raises(SuggestError, match="no such file or folder"):
        read_pairs(tmp_path / "nowhere")
    assert len(read_pairs(logs / "_skipped").problems) == 1  # named, so read
    (tmp_path / "empty").mkdir()
    with pytest.raises(SuggestError, match="no pair files"):
        read_pairs(tmp_path / "empty")


# --------------------------------------------------------------------------- candidates


def test_candidate_texts_are_policy_lines_and_paragraphs() -> None:
    part = ("You are Forge.\nRules:\n1. Never write to production databases.\n- Ask before deleting files.\n"
            "\n\nKeep secrets out of logs and commits.\n\n42 7 19")
    first = "You are Forge.\nRules:\n1. Never write to production databases.\n- Ask before deleting files."
    assert pieces(part) == [first, "You are Forge.", "Never write to production databases.",
                            "Ask before deleting files.", "Keep secrets out of logs and commits."]
    whole = "You are careful and kind.\nAlways answer in English please."
    assert pieces(whole) == [whole, "You are careful and kind.", "Always answer in English please."]


def test_candidate_texts_count_distinct_sessions() -> None:
    shared, own = "Never write to production databases.", "Customer account for this session only."
    logged = [("s1", (f"{shared}\n{own}",)), ("s1", (f"{shared}\n{own}",)), ("s1", (f"{shared}\n{own}",)),
              ("s2", (shared,)), ("s3", (shared,))]
    texts = [c.text for c in text_candidates(logged, 3, 0.3, 2)]
    assert shared in texts and own not in texts  # three pairs, one session
    assert [c.text for c in text_candidates(logged, 3, 0.3, 1)].count(own) == 1
    assert shared not in [c.text for c in text_candidates(logged, 4, 0.99, 2)]  # 3 of 4 sessions


def test_tool_schemas_are_inferred_from_what_the_calls_show() -> None:
    calls = []
    for session in range(12):
        unit = ("celsius", "fahrenheit")[session % 2]
        days = session % 3 + (0.5 if session == 5 else 0)
        calls.append((f"s{session}", "get_weather",
                      json.dumps({"city": f"city-{session}", "unit": unit, "days": days})))
        calls.append((f"s{session}", "get_weather", json.dumps({"city": "Oslo", "unit": unit, "days": 1,
                                                                  "hourly": True})))
    calls += [("s0", "rare_tool", "{}"), ("s1", "get_weather", "not json"), ("s2", "", "{}")]
    inferred = infer_tools(calls, 2)
    assert inferred.left_out == ("rare_tool",)
    (tool,) = inferred.definitions
    assert tool["name"] == "get_weather"
    assert tool["description"] == "Inferred by frayproof-audit suggest from 24 call(s) in 12 session(s)."
    assert tool["parameters"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},  # 13 values: not an enum
            "days": {"type": "number"},  # 0.5 once: number, not integer
            "hourly": {"type": "boolean"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city", "days", "unit"],  # hourly: only in half of the calls
    }
    few = infer_tools([(f"s{i}", "t", json.dumps({"mode": "a" if i < 5 else "b"})) for i in range(6)], 2)
    assert "enum" not in few.definitions[0]["parameters"]["properties"]["mode"]  # "b" in one session
    rare = infer_tools([(f"s{i}", "t", json.dumps({"mode": ["a", "b"][i % 2]})) for i in range(5)], 2)
    assert "enum" not in rare.definitions[0]["parameters"]["properties"]["mode"]  # 2 values, 5 sessions


# --------------------------------------------------------------------------- the YAML writer


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text(min_size=1))
def test_every_string_and_key_reads_back_as_written(value: str, name: str) -> None:
    try:
        value.encode("utf-8")
        name.encode("utf-8")
    except UnicodeEncodeError:
        return  # a lone surrogate is no text (and never a candidate)
    text = emit.document({name: value, "list": [value, {name: [value]}], "n": None, "t": True})
    assert yaml.safe_load(text) == {name: value, "list": [value, {name: [value]}], "n": None, "t": True}
    for line in emit.comment(value + "\n" + name, 2):
        assert line.startswith("  #") and "\n" not in line
    assert yaml.safe_load("a: 1\n" + "\n".join(emit.comment(value)) + "\n") == {"a": 1}


def test_yaml_1_1_words_are_quoted_keys() -> None:
    assert emit.key("on") == '"on"' and emit.key("No") == '"No"' and emit.key("y") == '"y"'
    assert emit.key("1:30") == '"1:30"' and emit.key("2024-01-01") == '"2024-01-01"'
    assert emit.key("timeout") == "timeout"


# --------------------------------------------------------------------------- other formats, own tools


def test_anthropic_records_are_judged_in_their_format() -> None:
    records = []
    for number in range(4):
        before = history(3)
        after = [before[0], *before[5:]]
        wire_before, wire_after = to_anthropic(before)[0], to_anthropic(after)[0]
        records.append({"pair_id": f"a{number}", "session_id": f"a{number}", "format": "anthropic",
                        "before": wire_before, "after": wire_after})
    found = suggest(records, holdout=0, mutation_pairs=2, max_mutants=30)
    assert found.learned.count == 4
    assert found.rule("pins.system-prompt").proposed
    assert found.rule("retain.recent_exchanges").value == 2
    assert found.mutation is not None and found.mutation.pairs == 2
    for record in records:
        assert check(record["before"], record["after"], found.contract, input_format="anthropic").passed
    broken = [records[0]["before"], {**records[0]["after"], "system": "Be brief."}]
    assert not check(*broken, found.contract, input_format="anthropic").passed


def test_records_with_their_own_tools_are_checked_with_them_and_nothing_is_inferred() -> None:
    tools = [{"type": "function", "function": {"name": "read", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
    before = history(2)
    for message in before:
        for call in message.get("tool_calls") or ():
            call["function"]["arguments"] = '{"path": "a.txt"}'
    records = [{"pair_id": f"t{i}", "session_id": f"t{i}", "tools": tools, "before": before, "after": before}
               for i in range(3)]
    found = suggest(records, holdout=0, mutation_pairs=1)
    rule = found.rule("checks.tool_arguments")
    assert rule is not None and rule.proposed and rule.value is True
    assert "tools:" not in found.contract_text and not found.contract.tools
    assert found.mutation is not None and found.mutation.operator("drop_required_argument") is not None
    after = json.loads(json.dumps(before))
    after[2]["tool_calls"][0]["function"]["arguments"] = '{"path": 1}'
    wrong = {**records[0], "pair_id": "w", "session_id": "w", "after": after}
    broken = suggest([*records, wrong], holdout=0, mutation_pairs=0)
    rule = broken.rule("checks.tool_arguments")
    assert rule is not None and not rule.proposed and rule.value is False
    assert rule.support == Share(3, 4)
    assert not broken.contract.settings("tool_arguments").enabled
    assert "  tool_arguments: false\n" in broken.contract_text


def test_the_contract_reads_back_with_parse_contract() -> None:
    records = [{"pair_id": f"p{i}", "session_id": f"s{i}", "before": history(3), "after": history(3)}
               for i in range(3)]
    found = suggest(records, holdout=0, mutation_pairs=0)
    assert parse_contract(found.contract_text).fingerprint == found.contract.fingerprint
    assert found.contract_text.startswith("# Context contract suggested by frayproof-audit")
