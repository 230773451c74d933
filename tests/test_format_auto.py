"""The `auto` format: evidence over the whole snapshot, no guessing between formats that both
fit, openai for plain turns (where both readings are the same model), and the detected name
wherever a format is recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit import check, validate
from frayproof_audit.formats import FORMATS
from frayproof_audit.formats.auto import AmbiguousFormat, detect
from frayproof_audit.snapshot import load_source, to_snapshot
from sessiongen import small
from sessiongen.strategies import mutation_cases
from tests.anthropic_wire import NotExpressible, to_anthropic
from tests.helpers import call, make_contract, result, run_cli, session, user

USE = {"type": "tool_use", "id": "a", "name": "read", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "a", "content": "ok"}
THINKING = {"type": "thinking", "thinking": "hm", "signature": "s"}


def _said(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


@pytest.mark.parametrize("snapshot, expected", [
    ([], "openai"),
    ([user(), _said("hi")], "openai"),
    ([user(), call("a"), result("a")], "openai"),
    ([user(), {"role": "assistant", "content": "no", "refusal": "no"}], "openai"),
    ([user(), {"role": "function", "name": "f", "content": "x"}], "openai"),
    ([user(), {"role": "assistant", "content": [USE]}], "anthropic"),
    ([user(), {"role": "user", "content": [RESULT]}], "anthropic"),
    ({"messages": [user()]}, "anthropic"),
    ({"system": "s", "messages": []}, "anthropic"),
    # evidence anywhere, not only in the first message that has some
    ([user(), _said("x"), _said("y"), _said("z"), {"role": "assistant", "content": [THINKING]}],
     "anthropic"),
    ([user(), {"role": "assistant", "content": [{"type": "web_search_tool_result"}]}], "anthropic"),
    # a null Chat field is no evidence (SDK dumps write them everywhere)
    ([user(), {"role": "assistant", "content": [USE], "tool_calls": None}], "anthropic"),
])
def test_evidence_decides(snapshot: Any, expected: str) -> None:
    assert detect(snapshot)[0].name == expected
    assert load_source(snapshot, "auto").format.name == expected  # and reads as it


@pytest.mark.parametrize("snapshot, message", [
    # a thinking block first does not let openai's tool result win (or the other way round)
    ([{"role": "assistant", "content": [THINKING, USE]}, result("a")],
     r"messages\[0\].content\[0\] is a thinking block \(anthropic\) but messages\[1\] has "
     r"tool_call_id \(openai\)"),
    ([user(), _said("x"), call("a"), result("a"), user(), {"role": "assistant", "content": [USE]}],
     r"messages\[2\] has tool_calls \(openai\) but messages\[5\].content\[0\] is a tool_use "
     r"block \(anthropic\)"),
    ({"system": "s", "messages": [user(), {"role": "tool", "content": "x"}]},
     r"the snapshot is an object \(a saved request\) \(anthropic\) but messages\[1\] has role "
     r"'tool' \(openai\)"),
])
def test_evidence_for_both_formats_is_an_input_error(snapshot: Any, message: str) -> None:
    with pytest.raises(AmbiguousFormat, match=message):
        validate(snapshot, input_format="auto")
    with pytest.raises(AmbiguousFormat, match="Name the format"):
        FORMATS["auto"].load(json.loads(json.dumps(snapshot)))


def test_the_loaded_snapshot_carries_the_detected_format() -> None:
    anthropic = load_source([user(), {"role": "assistant", "content": [USE]}], "auto")
    assert anthropic.format.name == "anthropic" and anthropic.notes == ()
    chat = load_source(session(), "auto")
    assert chat.format.name == "openai" and chat.notes == ()
    plain = load_source([user(), _said("hi")], "auto")
    assert plain.format.name == "openai" and plain.guessed and plain.notes == ()
    assert not anthropic.guessed and not chat.guessed


BLOCKS = st.sampled_from([
    {"type": "text", "text": "hello"}, {"type": "text", "text": " "},
    {"type": "image_url", "image_url": {"url": "https://x/i.png"}},
    {"type": "image", "source": {"type": "url", "url": "https://x/i.png"}},
    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "d"}},
    {"type": "output_text", "text": "o"}, {"text": "untyped"},
])
CONTENT = st.one_of(st.sampled_from(["", "hi", " ", None]), st.lists(BLOCKS, max_size=3))
PLAIN = st.lists(st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "developer", "user", "assistant", "", "critic"]),
     "content": CONTENT},
    optional={"name": st.sampled_from(["agent", None]), "id": st.just("msg_1"),
              "usage": st.just({"input_tokens": 1}), "tool_calls": st.none()}), max_size=6)


@settings(max_examples=100, deadline=None)
@given(PLAIN)
def test_plain_turns_read_the_same_in_both_formats(messages: list[dict[str, Any]]) -> None:
    """Why no evidence may read as openai: the anthropic reading is the same neutral model."""
    assert detect(messages) == (FORMATS["openai"], False)
    chat, wire = load_source(messages, "openai"), load_source(messages, "anthropic")
    assert to_snapshot(chat) == to_snapshot(wire)
    assert chat.views == wire.views and wire.origins is None
    assert [chat.identity(i) for i in range(len(chat))] == [
        wire.identity(i) for i in range(len(wire))]


@settings(max_examples=60, deadline=None)
@given(mutation_cases())
def test_auto_gives_each_formats_own_verdict(case: small.MutationCase) -> None:
    before, after, contract_yaml = case
    contract = make_contract(contract_yaml)
    chat = check(before, after, contract)
    assert check(before, after, contract, input_format="auto").violations == chat.violations
    try:
        wire_before, _ = to_anthropic(before)
        wire_after, _ = to_anthropic(after)
    except NotExpressible:
        return
    assert check(wire_before, wire_after, contract, input_format="auto").violations == check(
        wire_before, wire_after, contract, input_format="anthropic").violations


def test_contract_and_cli_accept_auto(tmp_path: Path) -> None:
    snapshot = tmp_path / "a.json"
    snapshot.write_text(json.dumps({"system": "s", "messages": [
        user(), {"role": "user", "content": [RESULT]}]}), encoding="utf-8")
    contract = tmp_path / "c.yaml"
    contract.write_text("format: auto\n", encoding="utf-8")
    out = run_cli("validate", "--snapshot", snapshot, "--contract", contract, expect=1)
    assert "TP-ORPHAN" in out.stdout and "after[1]" in out.stdout
    out = run_cli("validate", "--snapshot", snapshot, "--input-format", "auto", expect=1)
    assert "TP-ORPHAN" in out.stdout
    mixed = tmp_path / "m.json"
    mixed.write_text(json.dumps([{"role": "assistant", "content": [THINKING, USE]},
                                 result("a")]), encoding="utf-8")
    bad = run_cli("validate", "--snapshot", mixed, "--input-format", "auto", expect=2)
    assert "Cannot tell the input format" in bad.stderr


def test_a_corpus_records_the_detected_format(tmp_path: Path) -> None:
    from frayproof_audit.corpus import audit, read_table

    chat_before, chat_after = session(), [session()[0], user(), result("a"), user("Continue")]
    wire_before, _ = to_anthropic(chat_before)
    wire_after, _ = to_anthropic(chat_after)
    summary = {"system": "Never write to production", "messages": [user("summary")]}
    plain = [user("summary"), _said("ok")]
    records = [
        {"pair_id": "chat", "before": chat_before, "after": chat_after},
        {"pair_id": "anthropic", "format": "anthropic", "before": wire_before, "after": wire_after},
        {"pair_id": "auto-anthropic", "format": "auto", "before": wire_before, "after": wire_after},
        {"pair_id": "auto-chat", "format": "auto", "before": chat_before, "after": chat_after},
        # compacted into plain turns: the pair is the format its before had evidence of
        {"pair_id": "auto-plain-after", "format": "auto", "before": wire_before, "after": plain},
        {"pair_id": "auto-plain", "format": "auto", "before": plain, "after": plain},
        {"pair_id": "auto-summary", "format": "auto", "before": wire_before, "after": summary},
        {"pair_id": "auto-both", "format": "auto", "before": chat_before,
         "after": [{"role": "assistant", "content": [THINKING, USE]}, result("a")]},
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    audit([str(path)], None, str(tmp_path / "out"), jobs=1, mutate=False, fail_on=("none",))
    pairs = {row["pair_id"]: row for row in read_table(tmp_path / "out", "pairs").collect().to_dicts()}
    assert {name: (row["format"], row["status"]) for name, row in pairs.items()} == {
        "chat": ("openai", "fail"), "anthropic": ("anthropic", "fail"),
        "auto-anthropic": ("anthropic", "fail"), "auto-chat": ("openai", "fail"),
        "auto-plain-after": ("anthropic", "pass"), "auto-plain": ("openai", "pass"),
        "auto-summary": ("anthropic", "pass"), "auto-both": ("auto", "input_error")}
    assert "after: Cannot tell the input format" in pairs["auto-both"]["input_error"]
    findings = read_table(tmp_path / "out", "findings").collect()
    by_pair = {pair_id: sorted(zip(group["code"], group["message_index"], strict=True))
               for (pair_id,), group in findings.group_by("pair_id")}
    # the orphan is Chat message 2; in the Anthropic rewrite the system is top level and the
    # result is message 1's block
    assert by_pair == {"chat": [("TP-ORPHAN", 2)], "auto-chat": [("TP-ORPHAN", 2)],
                       "anthropic": [("TP-ORPHAN", 1)], "auto-anthropic": [("TP-ORPHAN", 1)]}
