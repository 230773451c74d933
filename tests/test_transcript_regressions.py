"""tessera-transcript's verified bugs, one regression test each (named after the bug), and the
behaviours of its test suite we keep. docs/differences.md lists the differences."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from frayproof_audit.errors import InputError
from frayproof_audit.transcript import (
    INTERRUPTED,
    CompactionRefused,
    IrreparableError,
    approximate_tokens,
    compact,
    find_safe_boundary,
    inspect,
    repair,
)
from tests.helpers import call, result, system, user
from tests.transcript_formats import in_format


def _objects(value: Any) -> set[int]:
    found = {id(value)} if isinstance(value, dict | list) else set()
    if isinstance(value, dict):
        for item in value.values():
            found |= _objects(item)
    elif isinstance(value, list):
        for item in value:
            found |= _objects(item)
    return found


def anthropic_interrupted() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Deploy it."},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "deploy", "signature": "sig"},
            {"type": "tool_use", "id": "toolu_1", "name": "deploy", "input": {"env": "staging"},
             "cache_control": {"type": "ephemeral"}}]},
    ]


# --------------------------------------------------------------------------- tessera's bugs


def test_b1_no_unbounded_recursion() -> None:
    # tessera recursed forever when an empty turn survived a pass; repair is one pass here.
    messages = [user(), {"role": "assistant", "content": ""}, user("again")]
    kept = repair(messages, "openai", drop_wasteful=False)
    assert kept.after.valid and [c.defect for c in kept.changes] == ["empty_assistant_turn"]
    cascade = [user(), {"role": "assistant", "content": [
        {"type": "tool_result", "tool_use_id": "x", "content": "?"}]}]
    assert repair(cascade, "anthropic").after.valid
    deep: Any = "x"
    for _ in range(2000):
        deep = [deep]
    with pytest.raises(InputError):
        inspect([{"role": "user", "content": deep}], "openai")


def test_b2_null_or_non_string_ids_are_never_stringified() -> None:
    for bad in (None, ["a"], 7):
        with pytest.raises(InputError):
            inspect([user(), {"role": "assistant", "content": [
                {"type": "tool_use", "id": bad, "name": "f", "input": {}}]}], "anthropic")
        with pytest.raises(InputError):
            inspect([user(), {"role": "assistant", "content": None, "tool_calls": [
                {"id": bad, "type": "function", "function": {"name": "f", "arguments": "{}"}}]}],
                "openai")
    null_result = [user(), {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": None, "content": "x"}]}]
    found = inspect(null_result, "anthropic")
    assert [(d.name, d.call_id) for d in found.defects] == [("orphaned_result", None)]


def test_b3_real_result_is_never_lost() -> None:
    early_and_real = [user(), result("a", "early"), call("a"), result("a", "real"), user("next")]
    repaired = repair(early_and_real, "openai").transcript
    assert repaired == [user(), call("a"), result("a", "real"), user("next")]
    only_early = [user(), result("a", "the real output"), call("a"), user("next")]
    repaired = repair(only_early, "openai").transcript
    assert repaired == [user(), call("a"), result("a", "the real output"), user("next")]


def test_b4_openai_list_content_is_not_empty() -> None:
    turn = {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}
    assert inspect([user(), turn], "openai").defects == ()
    assert repair([user(), turn], "openai").transcript == [user(), turn]


def test_b5_anthropic_non_text_turns_are_not_empty() -> None:
    for blocks in ([{"type": "thinking", "thinking": "hm", "signature": "s"}],
                   [{"type": "redacted_thinking", "data": "xx"}],
                   [{"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}}],
                   [{"type": "image", "source": {"type": "url", "url": "https://x/i.png"}}]):
        messages = [user(), {"role": "assistant", "content": blocks}]
        assert inspect(messages, "anthropic").defects == (), blocks


def test_b6_adjacency_is_checked() -> None:
    late = [user(), call("a"), user("meanwhile"), result("a"), user("next")]
    assert [d.name for d in inspect(late, "openai").defects] == ["result_outside_batch"]
    # A tool_result inside the assistant's own message answers nothing: the call dangles.
    inside = [user(), {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "f", "input": {}},
        {"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]
    assert [d.name for d in inspect(inside, "anthropic").defects] == ["dangling_call"]


def test_b7_one_turns_results_travel_in_one_message() -> None:
    messages = [user(), {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        {"type": "tool_use", "id": "t2", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "B"},
                                     {"type": "text", "text": "and now?"}]}]
    repaired = repair(messages, "anthropic").transcript
    assert len(repaired) == 3
    blocks = repaired[2]["content"]
    assert [(b["type"], b.get("tool_use_id")) for b in blocks] == [
        ("tool_result", "t2"), ("tool_result", "t1"), ("text", None)]


def test_b8_no_marker_on_the_wire() -> None:
    repaired = repair(anthropic_interrupted(), "anthropic")
    answer = repaired.transcript[2]["content"][0]
    assert answer == {"type": "tool_result", "tool_use_id": "toolu_1", "content": INTERRUPTED,
                      "is_error": True}
    assert [(s.call_id, s.site) for s in repaired.synthesized] == [
        ("toolu_1", "transcript[2].content[0]")]
    chat = repair([user(), call("a")], "openai")
    assert chat.transcript[2] == {"role": "tool", "tool_call_id": "a", "content": INTERRUPTED}


def test_b9_mixed_evidence_is_refused_not_guessed() -> None:
    mixed = [{"role": "assistant", "content": [
        {"type": "thinking", "thinking": "x", "signature": "s"},
        {"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
        {"role": "tool", "tool_call_id": "a", "content": "x"}]
    with pytest.raises(InputError, match="Cannot tell the input format"):
        inspect(mixed)


def test_b10_no_evidence_reads_as_openai_whatever_is_registered() -> None:
    assert inspect([user(), {"role": "assistant", "content": "hi"}]).format == "openai"


def test_b11_bad_shapes_are_input_errors() -> None:
    for bad in ([user(), {"role": "assistant", "content": None, "tool_calls": 5}],
                [user(), {"role": "assistant", "content": None,
                          "tool_calls": [{"id": "a", "type": "function", "function": "read"}]}],
                [1], {"role": "user"}):
        with pytest.raises(InputError):
            inspect(bad, "openai")
        with pytest.raises(InputError):
            repair(bad, "openai")


def test_b13_changes_are_in_input_coordinates() -> None:
    messages = [user(), result("x"), result("y"), call("a"), user("next")]
    changes = [(c.action, c.site, c.call_id) for c in repair(messages, "openai").changes]
    assert changes == [("drop", "transcript[1]", "x"), ("drop", "transcript[2]", "y"),
                       ("synthesize", "transcript[3].tool_calls[0]", "a")]


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "openai-responses", "otel-genai"])
def test_b14_output_never_aliases_input(fmt: str) -> None:
    for chat in ([user(), call("a"), result("a"), user("x")], [user(), call("a"), user("x")]):
        snapshot = in_format(chat, fmt)
        before = copy.deepcopy(snapshot)
        repaired = repair(snapshot, fmt)
        assert not _objects(repaired.transcript) & _objects(snapshot)
        assert snapshot == before


def test_b15_compaction_never_returns_an_invalid_transcript() -> None:
    dangling = [system(), user("x" * 400), call("a"), user("next")]
    with pytest.raises(CompactionRefused, match="already invalid"):
        compact(dangling, "openai", max_tokens=20)
    with pytest.raises(CompactionRefused, match="already invalid"):
        find_safe_boundary(dangling, 2, "openai")
    valid = [user("x" * 400), call("a"), result("a"), {"role": "assistant", "content": "ok"},
             user("y")]
    assert find_safe_boundary(valid, 3, "openai") == 0  # 1..3 start mid-exchange
    done = compact(valid, "openai", max_tokens=40, keep=1)
    assert done.transcript == [user("y")]  # starts at a user turn, never at an assistant
    with pytest.raises(CompactionRefused, match="still counts"):
        compact(valid, "openai", max_tokens=3, keep=1)


def test_b12_every_input_skipped_is_never_a_pass(tmp_path: Any) -> None:
    from tests.helpers import run_cli

    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "dir.json").mkdir()
    result_ = run_cli("inspect", tmp_path / "bad.json", tmp_path / "missing.json", expect=2)
    assert "0 checked" in result_.stdout and "skip" in result_.stderr
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps([user()]).encode())
    run_cli("inspect", bom, expect=0)
    run_cli("inspect", tmp_path, expect=2)  # the folder named dir.json is skipped, bad.json too


# --------------------------------------------------------------------------- kept behaviours


def test_interrupted_anthropic_call_is_answered_and_the_rest_survives() -> None:
    messages = anthropic_interrupted()
    found = inspect(messages, "anthropic")
    assert [d.name for d in found.defects] == ["dangling_call"] and not found.valid
    repaired = repair(messages, "anthropic")
    assert repaired.after.valid and repaired.transcript[:2] == messages  # cache_control, signature
    text = INTERRUPTED.lower()
    assert "did not complete" in text and "no side effects should be assumed" in text
    assert "failed" not in text and "succeeded" not in text


def test_arguments_survive_byte_for_byte() -> None:
    arguments = '{"path":  "a.txt", "mode":"r"}'
    messages = [user(), {"role": "assistant", "content": None, "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "read", "arguments": arguments}}]}]
    repaired = repair(messages, "openai").transcript
    assert repaired[1]["tool_calls"][0]["function"]["arguments"] == arguments


def test_null_content_with_calls_is_not_empty() -> None:
    assert inspect([user(), call("a"), result("a")], "openai").defects == ()


def test_naive_slice_orphans_and_safe_boundary_does_not() -> None:
    conversation = [user("q1"), call("a"), result("a", "x" * 200),
                    {"role": "assistant", "content": "a1"}, user("q2"), call("b"), result("b")]
    assert [d.name for d in inspect(conversation[-1:], "openai").defects] == ["orphaned_result"]
    boundary = find_safe_boundary(conversation, 6, "openai")
    assert boundary == 4 and inspect(conversation[boundary:], "openai").valid
    assert find_safe_boundary(conversation, -5, "openai") == 0
    assert find_safe_boundary(conversation, 99, "openai") == 7


def test_repair_is_a_no_op_on_valid_transcripts() -> None:
    messages = [system(), user(), call("a", "b"), result("b"), result("a"), user("x")]
    repaired = repair(messages, "openai")
    assert not repaired.changed and repaired.transcript == messages


def test_within_budget_is_unchanged_and_tokens_count_structure() -> None:
    messages = [user("hello")]
    done = compact(messages, "openai", max_tokens=1000)
    assert not done.changed and done.reason == "already within budget"
    assert done.transcript == messages and done.transcript is not messages
    assert approximate_tokens({"a": "x"}) > approximate_tokens("x") >= 1
    assert compact(messages, "openai", max_tokens=1000, counter=lambda _: 1).tokens_after == 1


def test_compaction_keeps_the_leading_instructions_and_fits() -> None:
    messages = [system("rules"), user("x" * 300), call("a"), result("a", "y" * 300),
                {"role": "assistant", "content": "ok"}, user("q"), {"role": "assistant", "content": "a"}]
    done = compact(messages, "openai", max_tokens=40)
    assert done.transcript == [system("rules"), user("q"), {"role": "assistant", "content": "a"}]
    assert done.tokens_after <= 40 < done.tokens_before and done.kept_from == 5
    assert done.dropped == 4


def test_irreparable_names_every_unpairable_call() -> None:
    with pytest.raises(IrreparableError, match="cannot repair") as caught:
        repair([user(), call("a"), result("a"), call("a"), result("a")], "openai")
    assert [d.name for d in caught.value.defects] == ["duplicate_call_id"]
