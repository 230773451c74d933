"""Property tests: invariants that must hold for every session, not just the ones we wrote."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from frayproof_audit import check, validate
from frayproof_audit.snapshot import load_list
from sessiongen.strategies import reordered, well_formed_sessions
from tests.helpers import conditions, make_contract, tool_call

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(well_formed_sessions())
def test_generated_well_formed_sessions_validate(messages: list[dict[str, Any]]) -> None:
    assert validate(messages).violations == ()


@SETTINGS
@given(well_formed_sessions(), st.data())
def test_deleting_any_answered_calls_result_is_caught(messages: list[dict[str, Any]],
                                                       data: st.DataObject) -> None:
    results = [i for i, m in enumerate(messages) if m["role"] == "tool"]
    assume(results)
    index = data.draw(st.sampled_from(results))
    lost = messages[index]["tool_call_id"]
    caller = next(i for i, m in enumerate(messages)
                  if any(c["id"] == lost for c in m.get("tool_calls") or ()))
    report = validate(messages[:index] + messages[index + 1:])
    assert not report.passed
    assert [(v.check, v.message_index, v.tool_call_id) for v in report.violations] == [
        ("tool_pair_integrity", caller, lost)]


@SETTINGS
@given(well_formed_sessions())
def test_keeping_only_the_instructions_passes_a_role_pin(messages: list[dict[str, Any]]) -> None:
    pins = make_contract({"pins": [{"name": "sys", "role": "system"},
                                   {"name": "dev", "role": "developer"}]})
    instructions = [m for m in messages if m["role"] in ("system", "developer")]
    assert check(messages, instructions, pins).passed


@SETTINGS
@given(well_formed_sessions())
def test_dropping_the_system_message_fails_a_system_role_pin(messages: list[dict[str, Any]]) -> None:
    assume(any(m["role"] == "system" for m in messages))
    pins = make_contract({"pins": [{"name": "sys", "role": "system"}]})
    first = next(i for i, m in enumerate(messages) if m["role"] == "system")
    report = check(messages, messages[:first] + messages[first + 1:], pins)
    assert "PIN-ROLE" in conditions(report)


# --- identity -----------------------------------------------------------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(alphabet="ab\u00e9\u0301 ", max_size=4),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(alphabet="abc", max_size=2), inner, max_size=3)),
    max_leaves=12,
)
blocks = st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url", "custom"])},
                               optional={"text": st.text(max_size=3), "extra": json_values})


@st.composite
def messages_with_metadata(draw: st.DrawFn) -> dict[str, Any]:
    """A message without optional-null fields, so identity has no normalization to apply."""
    message: dict[str, Any] = {
        "role": draw(st.sampled_from(["system", "user", "assistant", "tool", "alien"])),
        "content": draw(st.one_of(st.text(max_size=4), st.lists(blocks, max_size=3))),
    }
    for key, value in draw(st.dictionaries(st.sampled_from(["meta", "x", "cache"]),
                                           json_values, max_size=2)).items():
        message[key] = value
    if draw(st.booleans()):
        message["tool_calls"] = [
            {**tool_call(draw(st.sampled_from(["a", "b"]))), "index": draw(json_values)}
            for _ in range(draw(st.integers(1, 2)))
        ]
    return message


def plain_canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def identical(a: Any, b: Any) -> bool:
    loaded = load_list([a, b])
    return loaded.identity(0) == loaded.identity(1)


@st.composite
def reordered_pairs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A message and the same message with every object's keys in a drawn order."""
    message = draw(messages_with_metadata())
    return message, draw(reordered(message))


@SETTINGS
@given(reordered_pairs())
def test_identity_ignores_key_order(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    message, reordered_message = pair
    assert reordered_message == message  # the same values: only key order may differ
    assert identical(message, reordered_message)


@SETTINGS
@given(messages_with_metadata(), messages_with_metadata())
def test_identity_is_exactly_sorted_key_json_equality(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Nothing but key order is ignored: two messages are identical exactly when their
    sorted-key JSON texts are equal (types, array order, code points all count)."""
    assert identical(a, b) == (plain_canonical(a) == plain_canonical(b))


def edits(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Every single-leaf change, key addition/removal and swap of two different array items."""
    out: list[dict[str, Any]] = []

    def walk(value: Any, replace: Any) -> None:
        if isinstance(value, dict):
            for key in list(value):
                walk(value[key], lambda new, k=key, v=value: v.__setitem__(k, new))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, lambda new, i=i, v=value: v.__setitem__(i, new))
        else:
            # A string stays a string (a block `type` must be one); other leaves may change type.
            candidates = ("z", "") if isinstance(value, str) else (None, 0, 0.0, False, "", [], {})
            for new in candidates:
                if plain_canonical(new) != plain_canonical(value):
                    replace(new)
                    out.append(json.loads(json.dumps(message)))
                    replace(value)
                    break

    walk(message.get("content"), lambda new: message.__setitem__("content", new))
    for key in ("meta", "x", "cache"):
        if key in message:
            walk(message[key], lambda new, k=key: message.__setitem__(k, new))
    added = json.loads(json.dumps(message))
    added["added"] = 1
    out.append(added)
    return out


@SETTINGS
@given(messages_with_metadata())
def test_any_other_edit_changes_identity(message: dict[str, Any]) -> None:
    for edited in edits(message):
        assert not identical(message, edited), edited


# --- findings stay in range ---------------------------------------------------------------

odd_roles = st.sampled_from(["system", "developer", "user", "assistant", "tool", "", "alien"])
odd_ids = st.sampled_from(["a", "b", "", " "])


@st.composite
def odd_messages(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        message["role"] = draw(odd_roles)
    message["content"] = draw(st.one_of(st.none(), st.sampled_from(["", " ", "x", "Never"]),
                                        st.lists(blocks, max_size=2)))
    if draw(st.booleans()):
        message["tool_calls"] = draw(st.lists(
            st.builds(lambda i, t: {"id": i, "type": t, "function": {"name": "r", "arguments": ""}},
                      odd_ids, st.sampled_from(["function", "custom"])), max_size=3))
    if draw(st.booleans()):
        message["tool_call_id"] = draw(odd_ids)
    return message


contracts = st.fixed_dictionaries({}, optional={
    "checks": st.fixed_dictionaries({}, optional={
        "tool_pairs": st.fixed_dictionaries({}, optional={
            "allow_trailing_pending_call": st.booleans(),
            "severity": st.sampled_from(["error", "warning"])}),
        "structure": st.fixed_dictionaries({}, optional={
            "system_messages": st.sampled_from(["leading_only", "anywhere", "forbidden"])}),
    }),
    "pins": st.lists(st.one_of(
        st.builds(lambda r: {"role": r}, st.sampled_from(["system", "user", "tool"])),
        st.builds(lambda t: {"contains": t}, st.sampled_from(["x", "Never"]))), max_size=3),
    "retain": st.fixed_dictionaries({}, optional={
        "latest_user_message": st.just("exact"), "recent_exchanges": st.integers(0, 3),
        "tool_results": st.just("complete")}),
})


@settings(max_examples=150, deadline=None)
@given(st.lists(odd_messages(), max_size=8), st.lists(odd_messages(), max_size=8), contracts)
def test_findings_never_point_outside_their_snapshot(
    before: list[dict[str, Any]], after: list[dict[str, Any]], document: dict[str, Any]
) -> None:
    for n, pin in enumerate(document.get("pins", [])):
        pin["name"] = f"p{n}"
    report = check(before, after, make_contract(document))
    sizes = {"before": len(before), "after": len(after)}
    for v in report.violations:
        assert v.message_index is not None and 0 <= v.message_index < sizes[v.snapshot]
        assert v.severity in ("error", "warning")
    assert report.passed == (report.errors == 0)
    assert report.errors + report.warnings == len(report.violations)
