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
from frayproof_audit.formats import FORMATS, detect
from frayproof_audit.formats.auto import AmbiguousFormat, UnknownShape
from frayproof_audit.snapshot import load_source, to_snapshot
from sessiongen import small
from sessiongen.gemini_wire import NotExpressible as GeminiNotExpressible
from sessiongen.gemini_wire import to_gemini
from sessiongen.strategies import mutation_cases, well_formed_sessions
from tests.anthropic_wire import NotExpressible, to_anthropic
from tests.helpers import call, make_contract, result, run_cli, session, user
from tests.otel_messages import to_otel
from tests.responses_items import representable, to_items

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
     r"the snapshot is a request object with 'messages' \(anthropic\) but messages\[1\] has "
     r"role 'tool' \(openai\)"),
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


# ------------------------------------------------------------- Responses items and OTel messages

FC = {"type": "function_call", "call_id": "c", "name": "read", "arguments": "{}"}
FC_OUT = {"type": "function_call_output", "call_id": "c", "output": "ok"}
OTEL_USER = {"role": "user", "parts": [{"type": "text", "content": "hi"}]}
GEMINI_USER = {"role": "user", "parts": [{"text": "hi"}]}
OTEL_TOOL = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "response": "ok"}]}


@pytest.mark.parametrize("snapshot, expected", [
    ([user(), FC, FC_OUT], "openai-responses"),
    ([user(), {"type": "reasoning", "id": "rs_1", "summary": []}], "openai-responses"),
    ([user(), {"type": "compaction", "encrypted_content": "x"}], "openai-responses"),
    ([user(), {"type": "web_search_call", "id": "ws_1"}], "openai-responses"),
    ([{"type": "message", "role": "user", "content": "hi"}], "openai-responses"),
    ([user(), {"type": "message", "role": "assistant",
               "content": [{"type": "output_text", "text": "hi", "annotations": []}]}],
     "openai-responses"),
    ({"instructions": "Be brief.", "input": [user()]}, "openai-responses"),
    ({"input": "hello"}, "openai-responses"),
    # an Anthropic SDK dump is typed `message` too: its blocks say which
    ([user(), {"type": "message", "id": "msg_1", "role": "assistant", "content": [USE]}],
     "anthropic"),
    ([{"type": "message", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}],
     "openai"),
    ([OTEL_USER], "otel-genai"),
    ([OTEL_USER, OTEL_TOOL], "otel-genai"),  # a tool role with parts is OTel's, not Chat's
    (json.dumps([OTEL_USER]), "otel-genai"),  # a span attribute: the list as a JSON string
    ([GEMINI_USER], "gemini"),  # untyped parts with Gemini part data
    ([{"role": "user", "parts": []}, {"role": "model", "parts": []}], "gemini"),
    ([GEMINI_USER, {"role": "user", "parts": [
        {"functionResponse": {"id": "c", "name": "f", "response": {}}}]}], "gemini"),
])
def test_evidence_decides_among_all_five(snapshot: Any, expected: str) -> None:
    assert detect(snapshot)[0].name == expected
    if isinstance(snapshot, str):
        assert FORMATS["auto"].load(snapshot).format.name == expected
    else:
        assert load_source(snapshot, "auto").format.name == expected


@pytest.mark.parametrize("snapshot, message", [
    ([user(), call("c"), FC_OUT],
     r"messages\[1\] has tool_calls \(openai\) but messages\[2\] is a function_call_output item "
     r"\(openai-responses\)"),
    ([OTEL_USER, result("c")],
     r"messages\[0\] has parts \(otel-genai\) but messages\[1\] has tool_call_id \(openai\)"),
    ([OTEL_USER, GEMINI_USER],
     r"messages\[0\] has parts \(otel-genai\) but messages\[1\].parts\[0\] is a text part \(gemini\)"),
    ([user(), call("c"), {"role": "model", "parts": []}],
     r"messages\[1\] has tool_calls \(openai\) but messages\[2\] has role 'model' \(gemini\)"),
    ([FC, {"role": "assistant", "content": [THINKING]}, OTEL_USER],
     r"messages\[0\] is a function_call item \(openai-responses\) but messages\[1\].content\[0\] "
     r"is a thinking block \(anthropic\) and messages\[2\] has parts \(otel-genai\)"),
    ({"messages": [user()], "input": [user()]},
     r"the snapshot is a request object with 'messages' \(anthropic\) but the snapshot is a "
     r"request object with 'input' \(openai-responses\)"),
    ({"input": [user(), call("c")]},
     r"request object with 'input' \(openai-responses\) but input\[1\] has tool_calls \(openai\)"),
    (json.dumps([user(), FC]),
     r"the snapshot is a JSON string \(a span attribute\) \(otel-genai\) but messages\[1\] is a "
     r"function_call item \(openai-responses\)"),
])
def test_evidence_for_several_formats_is_refused(snapshot: Any, message: str) -> None:
    with pytest.raises(AmbiguousFormat, match=message):
        FORMATS["auto"].load(snapshot)


def test_an_object_of_no_format_is_refused() -> None:
    with pytest.raises(UnknownShape, match=r"none of messages, system \(anthropic\) or input, "
                                           r"instructions \(openai-responses\)"):
        FORMATS["auto"].load({"model": "gpt-5"})


def _written(name: str, messages: list[dict[str, Any]], data: st.DataObject) -> Any:
    """`messages` in format `name` (None when that format cannot spell them)."""
    if name == "anthropic":
        try:
            return to_anthropic(messages, top_system=data.draw(st.booleans()))[0]
        except NotExpressible:
            return None
    if name == "openai-responses":
        shaped = representable(messages)
        if shaped is None:
            return None
        return to_items(shaped, typed=data.draw(st.booleans()),
                        reasoning=data.draw(st.booleans())).items
    if name == "otel-genai":
        return to_otel(messages, data.draw(st.booleans()))
    if name == "gemini":
        try:
            return to_gemini(messages)[0]
        except GeminiNotExpressible:
            return None
    return messages


WRITTEN = ("openai", "anthropic", "openai-responses", "otel-genai", "gemini")


@settings(max_examples=60, deadline=None)
@given(st.one_of(well_formed_sessions(), mutation_cases().map(lambda case: case[1])), st.data())
def test_each_formats_sessions_are_detected_as_that_format(
        messages: list[dict[str, Any]], data: st.DataObject) -> None:
    """Generated sessions written in each format: evidence names that format; without
    evidence the default reading judges the same views as the format's own."""
    name = data.draw(st.sampled_from(WRITTEN))
    wire = _written(name, messages, data)
    if wire is None:
        return
    fmt, evident = detect(wire)
    if evident:
        assert fmt.name == name
    else:
        assert fmt.name == "openai"
        assert load_source(wire, "openai").views == load_source(wire, name).views


def _evident(name: str, messages: list[dict[str, Any]], data: st.DataObject) -> list[Any] | None:
    wire = _written(name, messages, data)
    if isinstance(wire, dict):
        wire = wire["messages"]
    if not wire or detect(wire) != (FORMATS[name], True):
        return None
    return list(wire)


@settings(max_examples=60, deadline=None)
@given(well_formed_sessions(), well_formed_sessions(), st.data())
def test_auto_never_guesses_between_two_formats(
        first: list[dict[str, Any]], second: list[dict[str, Any]], data: st.DataObject) -> None:
    """Any mix of two formats' evident messages is refused, naming both formats."""
    one, other = data.draw(st.lists(st.sampled_from(WRITTEN), min_size=2, max_size=2,
                                    unique=True))
    a, b = _evident(one, first, data), _evident(other, second, data)
    if a is None or b is None:
        return
    cut = data.draw(st.integers(0, len(a)))
    mixed = [*a[:cut], *b, *a[cut:]]
    with pytest.raises(AmbiguousFormat) as raised:
        detect(mixed)
    assert f"({one})" in str(raised.value) and f"({other})" in str(raised.value)


@settings(max_examples=40, deadline=None)
@given(PLAIN)
def test_plain_turns_read_alike_as_openai_anthropic_and_responses(
        messages: list[dict[str, Any]]) -> None:
    """No evidence reads as openai: the Responses reading of plain turns has the same views."""
    assert detect(messages) == (FORMATS["openai"], False)
    assert load_source(messages, "openai").views == load_source(messages, "openai-responses").views
