"""The aligned view's invariants, for any compaction: every message of both snapshots is in
exactly one row, a kept row joins two equal messages, and the kept rows read down both
snapshots in order (a property over generated sessions and compactions); and a finding's
anchor is the part holding its call id.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.formats import get_format
from frayproof_audit.pairview.align import align
from frayproof_audit.pairview.view import Finding, build_view
from frayproof_audit.pairview.wire import read_messages
from tests.helpers import assistant, call, result, system, user

OPENAI = get_format("openai")


@st.composite
def sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [system()] if draw(st.booleans()) else []
    for number in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["user", "assistant", "exchange"]))
        text = draw(st.sampled_from(["a", "b", "the same words again", f"note {number}"]))
        if kind == "user":
            messages.append(user(text))
        elif kind == "assistant":
            messages.append(assistant(text))
        else:
            messages += [call(f"c{number}"), result(f"c{number}", text)]
    return messages


@st.composite
def compactions(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    before = draw(sessions())
    after: list[dict[str, Any]] = []
    for message in before:
        choice = draw(st.sampled_from(["keep", "keep", "drop", "edit"]))
        if choice == "keep":
            after.append(message)
        elif choice == "edit" and isinstance(message.get("content"), str):
            after.append({**message, "content": message["content"] + " (edited)"})
    for _ in range(draw(st.integers(0, 2))):
        after.insert(draw(st.integers(0, len(after))), user(draw(st.sampled_from(["summary", "a"]))))
    return before, after


@settings(max_examples=150, deadline=None)
@given(compactions())
def test_every_message_is_in_one_row_and_kept_rows_read_in_order(
        pair: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    before, after = pair
    old = read_messages("before", OPENAI.load_copy(before), before)
    new = read_messages("after", OPENAI.load_copy(after), after)
    rows = align(old, new)
    assert sorted(r.before for r in rows if r.before is not None) == list(range(len(old)))
    assert sorted(r.after for r in rows if r.after is not None) == list(range(len(new)))
    kept = [r for r in rows if r.kind == "kept"]
    assert all(r.before is not None and r.after is not None and old[r.before].key == new[r.after].key
               for r in kept)
    assert [r.before for r in kept] == sorted(r.before for r in kept if r.before is not None)
    assert [r.after for r in kept] == sorted(r.after for r in kept if r.after is not None)
    for row in rows:
        if row.kind == "summary":
            assert row.replaces is not None and row.after is not None and new[row.after].text_only


def test_a_stranded_result_is_anchored_at_its_part_and_marks_the_call_it_lost() -> None:
    before = [system(), user("q"), call("c1", "c2"), result("c1"), result("c2"), user("latest")]
    after = [system(), user("summary of q"), result("c2"), user("latest")]
    finding = Finding("tool_pair_integrity", "TP-ORPHAN", "error", "after", 2,
                      "Tool result answers no earlier assistant tool call.", "c2")
    view = build_view(OPENAI.load_copy(before), OPENAI.load_copy(after), before, after, [finding])
    (shown,) = view.findings
    assert shown.anchor is not None and shown.anchor.label == "after[2]"
    assert [a.label for a in shown.related] == ["before[2].tool_calls[1]", "before[4]"]
    call_row = next(r for r in view.rows if r.before == 2)
    assert call_row.kind in ("dropped", "changed")
    link = view.links[("after", 2, 0)]
    assert link.heading == "its call is not in after" and [a.label for a in link.targets] == [
        "before[2].tool_calls[1]"]
    assert [m.kind for m in view.marks_at("before", 2, 1)] == ["related"]
