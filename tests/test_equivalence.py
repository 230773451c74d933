"""Equivalence-aware pins and retention (`match: equivalent`, `retain.compare: equivalent`).

Three kinds of evidence: real third-party re-serializations, data-driven
(`tests/cases/equivalence/*.yaml`, each run under `exact` and `equivalent`); hypothesis
properties of the neutral form (a pure re-serialization is never flagged, an edit that changes
a character, a block, an id, an argument value or a role always is, and equivalence is coarser
than exact identity); and the mutation fast path judged against a full recheck under
`equivalent` contracts, on outputs re-serialized so that the comparison matters.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frayproof_audit import check
from frayproof_audit.contract import ContractError, Pin, Retain
from frayproof_audit.equivalence import content_form, equivalence_key, neutral_form
from frayproof_audit.formats.openai import message_identity
from frayproof_audit.model import ROLES, TEXT_BLOCK_TYPES
from sessiongen.strategies import (
    clean_mutation_cases,
    mutation_cases,
    reordered,
    well_formed_sessions,
)
from tests.helpers import conditions, make_contract
from tests.test_mutation_equivalence import _judge_both_ways

CASES_FILE = Path(__file__).parent / "cases" / "equivalence" / "reserializations.yaml"
DEFAULT_PIN_TEXT = "Never write to production"


def _cases() -> list[dict[str, Any]]:
    document = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))
    before = document["defaults"]["before"]
    return [{"before": before, **case} for case in document["cases"]]


CASES = _cases()


def _rules(compare: str, pin_text: str) -> dict[str, Any]:
    return {
        "pins": [{"name": "system-prompt", "role": "system", "match": compare},
                 {"name": "rules", "contains": pin_text, "match": compare}],
        "retain": {"latest_user_message": compare, "recent_exchanges": 2,
                   "tool_results": "complete", "compare": compare},
    }


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
@pytest.mark.parametrize("compare", ["exact", "equivalent"])
def test_reserialization_cases(case: dict[str, Any], compare: str) -> None:
    contract = make_contract(_rules(compare, case.get("pin_text", DEFAULT_PIN_TEXT)))
    report = check(copy.deepcopy(case["before"]), copy.deepcopy(case["after"]), contract)
    assert conditions(report) == case[compare]


def test_the_cases_cover_both_directions() -> None:
    forgiven = [case for case in CASES if case["exact"] and not case["equivalent"]]
    never = [case for case in CASES if case["equivalent"]]
    assert len(forgiven) >= 5 and len(never) >= 8
    assert all(case["exact"] == case["equivalent"] for case in never)


# --------------------------------------------------------------------------- the neutral form

def test_the_brief_examples() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
    spaced = {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    assert equivalence_key({"role": "assistant", "content": None, "tool_calls": [call]}) == \
        equivalence_key({"role": "assistant", "content": "", "tool_calls": [spaced]})
    assert equivalence_key({"role": "user", "content": "hi"}) == equivalence_key(
        {"role": "user", "content": [{"type": "text", "text": "hi", "annotations": []}]})
    assert equivalence_key({"role": "user", "content": "hi", "name": None}) == \
        equivalence_key({"role": "user", "content": "hi"})


def test_arguments_text_and_json_never_meet() -> None:
    def with_arguments(text: str) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": text}}]}
    assert equivalence_key(with_arguments('"x"')) != equivalence_key(with_arguments("x"))
    assert equivalence_key(with_arguments("{'a': 1}")) != equivalence_key(
        with_arguments("{'a':1}"))  # not JSON: compared as raw text
    assert equivalence_key(with_arguments('{"a": 1, "a": 2}')) != equivalence_key(
        with_arguments('{"a": 2}'))  # a duplicate key is not strict JSON


def test_content_form_keeps_blocks_in_place() -> None:
    image = {"type": "image_url", "image_url": {"url": "u", "detail": None}}
    content = [{"type": "text", "text": "a"}, {"type": "input_text", "text": "b"}, image,
               {"type": "text", "text": ""}, {"type": "output_text", "text": "c"}]
    assert content_form(content) == ["ab", {"type": "image_url", "image_url": {"url": "u"}}, "c"]
    assert content_form(None) == content_form("") == content_form([]) == []
    cached = {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}
    assert content_form([cached]) == [cached]  # a text block that is more than text stays one


# --------------------------------------------------------------------------- properties

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=10)
_KEY = st.text(alphabet="abcdefgh_", min_size=1, max_size=6)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | _TEXT
    | st.floats(allow_nan=False, allow_infinity=False, width=32),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEY, inner, max_size=3),
    max_leaves=8)
_BLOCK = st.fixed_dictionaries({"type": st.sampled_from(["image_url", "file", "reasoning"]),
                                "id": _KEY}) | st.fixed_dictionaries(
    {"type": st.just("text"), "text": _TEXT, "cache_control": st.just({"type": "ephemeral"})})


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    """A Chat message: any role, string or block content, calls, ids and metadata."""
    role = draw(st.sampled_from(sorted(ROLES)))
    message: dict[str, Any] = {"role": role}
    kind = draw(st.sampled_from(["none", "string", "blocks"]))
    if kind == "string":
        message["content"] = draw(_TEXT)
    elif kind == "blocks":
        message["content"] = draw(st.lists(
            st.builds(lambda t, k: {"type": k, "text": t}, _TEXT, st.sampled_from(
                sorted(TEXT_BLOCK_TYPES))) | _BLOCK, max_size=4))
    else:
        message["content"] = None
    if role == "assistant" and draw(st.booleans()):
        message["tool_calls"] = [
            {"id": draw(_KEY), "type": "function",
             "function": {"name": draw(_KEY), "arguments": draw(
                 st.dictionaries(_KEY, _JSON, max_size=3).map(
                     lambda value: json.dumps(value, separators=(",", ":")))
                 | st.sampled_from(["", "{'a': 1}", "not json"]))}}
            for _ in range(draw(st.integers(1, 2)))]
    if role == "tool":
        message["tool_call_id"] = draw(_KEY)
    if draw(st.booleans()):
        message["name"] = draw(_KEY)
    return message


@st.composite
def reserialized(draw: st.DrawFn, message: dict[str, Any]) -> dict[str, Any]:
    """The same message as another library may write it: text re-split into parts of any text
    type (with `annotations: []`), empty content spelled any way, arguments re-dumped with
    other spacing and key order, empty optional fields added, keys reordered."""
    out = {key: value for key, value in message.items() if key != "content"}
    form = content_form(message.get("content"))
    if len(form) == 1 and type(form[0]) is str and draw(st.booleans()):
        out["content"] = form[0]
    elif not form:
        out["content"] = draw(st.sampled_from([None, "", [], [{"type": "text", "text": ""}]]))
    else:
        blocks: list[Any] = []
        for item in form:
            if type(item) is not str:
                blocks.append(item)
                continue
            cuts = sorted(draw(st.lists(st.integers(0, len(item)), max_size=2)))
            for start, stop in zip([0, *cuts], [*cuts, len(item)], strict=True):
                block: dict[str, Any] = {"type": draw(st.sampled_from(sorted(TEXT_BLOCK_TYPES))),
                                         "text": item[start:stop]}
                if draw(st.booleans()):
                    block["annotations"] = []
                blocks.append(block)
        out["content"] = blocks
    if message.get("tool_calls"):
        calls = []
        for call in message["tool_calls"]:
            arguments = call["function"]["arguments"]
            try:
                value = json.loads(arguments)
            except ValueError:
                pass
            else:
                arguments = json.dumps(value, sort_keys=draw(st.booleans()),
                                       ensure_ascii=draw(st.booleans()))
            calls.append({**call, "function": {**call["function"], "arguments": arguments}})
        out["tool_calls"] = calls
    for key, empty in (("annotations", []), ("audio", None), ("refusal", None),
                       ("function_call", None), ("metadata", {})):
        if key not in out and draw(st.booleans()):
            out[key] = empty
    return draw(reordered(out))  # type: ignore[no-any-return]


@st.composite
def changed(draw: st.DrawFn, message: dict[str, Any]) -> dict[str, Any]:
    """The message with one change of substance: a character of text inserted, deleted or
    replaced, a non-empty text part or a non-text block dropped, a call id or an argument
    value changed, or the role changed."""
    out = copy.deepcopy(message)
    content = out.get("content")
    options = ["role"]
    if type(content) is str or (type(content) is list and any(
            type(b.get("text")) is str for b in content)):
        options.append("text")
    if type(content) is list and content:
        options.append("drop")
    if out.get("tool_calls"):
        options += ["call_id", "argument"]
    what = draw(st.sampled_from(options))
    if what == "role":
        out["role"] = draw(st.sampled_from(sorted(ROLES - {out["role"]})))
    elif what == "text":
        if type(content) is str:
            out["content"] = draw(_edited_text(content))
        else:
            block = draw(st.sampled_from([b for b in content if type(b.get("text")) is str]))
            block["text"] = draw(_edited_text(block["text"]))
    elif what == "drop":
        droppable = [i for i, b in enumerate(content) if b.get("text") != ""]
        if not droppable:
            out["role"] = draw(st.sampled_from(sorted(ROLES - {out["role"]})))
        else:
            del content[draw(st.sampled_from(droppable))]
    elif what == "call_id":
        call = draw(st.sampled_from(out["tool_calls"]))
        call["id"] += "x"
    else:
        call = draw(st.sampled_from(out["tool_calls"]))
        function = call["function"]
        try:
            value = json.loads(function["arguments"])
        except ValueError:
            function["arguments"] += " "
        else:
            key = draw(_KEY)
            changed_value = [value.get(key)] if type(value) is dict else [value]
            function["arguments"] = json.dumps({**value, key: changed_value}
                                               if type(value) is dict else changed_value)
    return out


@st.composite
def _edited_text(draw: st.DrawFn, text: str) -> str:
    position = draw(st.integers(0, len(text)))
    kind = draw(st.sampled_from(["insert", "delete", "replace"]) if text else st.just("insert"))
    if kind == "insert":
        return text[:position] + draw(st.characters(blacklist_categories=("Cs",))) + text[position:]
    position = min(position, len(text) - 1)
    if kind == "delete":
        return text[:position] + text[position + 1:]
    other = draw(st.characters(blacklist_categories=("Cs",)).filter(lambda c: c != text[position]))
    return text[:position] + other + text[position + 1:]


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_reserialization_is_never_flagged(data: st.DataObject) -> None:
    message = data.draw(messages())
    again = data.draw(reserialized(message))
    assert equivalence_key(again) == equivalence_key(message), (message, again)
    assert equivalence_key(data.draw(reserialized(again))) == equivalence_key(message)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_change_of_substance_is_always_caught(data: st.DataObject) -> None:
    message = data.draw(messages())
    edited = data.draw(reserialized(data.draw(changed(message))))
    assert equivalence_key(edited) != equivalence_key(message), (message, edited)


@settings(max_examples=100, deadline=None)
@given(messages(), st.data())
def test_equivalence_is_coarser_than_identity(message: dict[str, Any], data: st.DataObject) -> None:
    """Exactly identical messages (same identity, keys in any order, SDK nulls) are always
    equivalent, so `equivalent` never fails a pair `exact` passes."""
    same = data.draw(reordered({**message, **data.draw(st.fixed_dictionaries(
        {}, optional={"audio": st.none(), "function_call": st.none(), "annotations": st.none()}))}))
    assert message_identity(same) == message_identity(message)
    assert equivalence_key(same) == equivalence_key(message)
    assert neutral_form(message)["role"] == message["role"]


def _all_rules(compare: str) -> Any:
    return make_contract({
        "pins": [{"name": role, "role": role, "match": compare} for role in sorted(ROLES)],
        "retain": {"latest_user_message": compare, "recent_exchanges": 3,
                   "tool_results": "complete", "compare": compare},
    })


_RULE_CHECKS = ("pinned_content", "retention")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(well_formed_sessions(), st.data())
def test_sessions_reserialized_keep_every_pin_and_rule(
        before: list[dict[str, Any]], data: st.DataObject) -> None:
    after = [data.draw(reserialized(message)) for message in before]
    report = check(before, after, _all_rules("equivalent"))
    assert [v for v in report.violations if v.check in _RULE_CHECKS] == []
    if before:  # and one change of substance in any message is a lost pin
        index = data.draw(st.integers(0, len(before) - 1))
        after[index] = data.draw(reserialized(data.draw(changed(before[index]))))
        lost = check(before, after, _all_rules("equivalent"))
        assert any(v.code == "PIN-ROLE" for v in lost.violations)


# --------------------------------------------------------------------------- mutation testing

@st.composite
def equivalent_mutation_cases(draw: st.DrawFn) -> tuple[list[Any], list[Any], dict[str, Any]]:
    """A generated mutation case whose after is partly re-serialized and whose contract
    compares pins and retention by equivalence (all of them, or a mix with `exact`)."""
    before, after, contract_yaml = draw(st.one_of(mutation_cases(), clean_mutation_cases()))
    document = yaml.safe_load(contract_yaml) or {}
    mode = draw(st.sampled_from(["all", "pins", "retain", "latest-only"]))
    for pin in document.get("pins", []):
        if mode in ("all", "pins") or draw(st.booleans()):
            pin["match"] = "equivalent"
    retain = document.setdefault("retain", {})
    if draw(st.booleans()):
        retain.setdefault("recent_exchanges", draw(st.integers(1, 3)))
        retain.setdefault("latest_user_message", "exact")
    if mode in ("all", "retain"):
        retain["compare"] = "equivalent"
        if retain.get("latest_user_message") is not None:
            retain["latest_user_message"] = "equivalent"
    elif mode == "latest-only" and retain.get("latest_user_message") is not None:
        retain["latest_user_message"] = "equivalent"
    after = list(after)
    for index in draw(st.sets(st.integers(0, max(len(after) - 1, 0)), max_size=len(after))):
        if index < len(after) and _safe_to_reserialize(after[index]):
            after[index] = draw(reserialized(after[index]))
    return before, after, document


def _safe_to_reserialize(message: Any) -> bool:
    """Generated noisy messages the strategy can rewrite without changing what loads."""
    if type(message) is not dict or type(message.get("role")) is not str:
        return False
    content = message.get("content")
    if content is not None and type(content) is not str and not (
            type(content) is list and all(type(b) is dict for b in content)):
        return False
    calls = message.get("tool_calls")
    return calls is None or (type(calls) is list and all(
        type(c) is dict and type(c.get("function")) is dict
        and type(c["function"].get("arguments", "")) is str for c in calls))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(equivalent_mutation_cases())
def test_fast_path_equals_full_recheck_under_equivalent_contracts(
        case: tuple[list[Any], list[Any], dict[str, Any]]) -> None:
    _judge_both_ways(*case)


# --------------------------------------------------------------------------- the contract

def test_contract_reads_the_new_values() -> None:
    contract = make_contract({
        "pins": [{"name": "s", "role": "system", "match": "equivalent"}],
        "retain": {"latest_user_message": "equivalent", "recent_exchanges": 2,
                   "compare": "equivalent"}})
    assert contract.pins == (Pin(name="s", role="system", match="equivalent"),)
    assert contract.retain == Retain("equivalent", 2, None, "equivalent")
    assert make_contract({"retain": {"latest_user_message": "equivalent"}}).retain.compare == "exact"


def test_contract_errors_come_together_with_suggestions() -> None:
    with pytest.raises(ContractError) as raised:
        make_contract({"pins": [{"name": "s", "role": "system", "match": "equivelent"}],
                       "retain": {"compare": "exakt", "latest_user_message": "similar"}})
    message = str(raised.value)
    assert ("pins[0].match: must be one of 'exact', 'equivalent'; did you mean 'equivalent'?"
            in message)
    assert "retain.compare: must be one of 'exact', 'equivalent'; did you mean 'exact'?" in message
    assert "retain.latest_user_message: must be one of 'exact', 'equivalent' or null" in message
    for bad in (None, True, ["equivalent"]):
        with pytest.raises(ContractError, match=r"retain\.compare"):
            make_contract({"retain": {"compare": bad}})


def test_a_contradiction_is_refused() -> None:
    with pytest.raises(ContractError, match=r"'exact' contradicts retain\.compare: 'equivalent'"):
        make_contract({"retain": {"compare": "equivalent", "latest_user_message": "exact"}})


def test_fingerprints_keep_their_meaning() -> None:
    plain = make_contract({"retain": {"recent_exchanges": 2}})
    assert make_contract({"retain": {"recent_exchanges": 2, "compare": "exact"}}).fingerprint == \
        plain.fingerprint
    assert "compare" not in plain.normalised()["retain"]
    assert make_contract({"retain": {"recent_exchanges": 2, "compare": "equivalent"}}
                         ).fingerprint != plain.fingerprint


def test_fast_path_reads_a_split_literal_as_its_pin_does() -> None:
    """A contains pin under `equivalent` finds its literal across text parts; the fast path
    must see that message as holding it, or a mutant that drops it would keep the original's
    (clean) verdict."""
    before = [{"role": "system", "content": "Never write to production."},
              {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
              {"role": "user", "content": "latest"}]
    after = [{"role": "system", "content": [{"type": "text", "text": "Never write "},
                                            {"type": "input_text", "text": "to production."}]},
             *copy.deepcopy(before[1:])]
    contract = {"pins": [{"name": "rules", "contains": "Never write to production",
                          "match": "equivalent"}]}
    assert sum(_judge_both_ways(before, after, contract).values()) > 0


def test_no_pinned_text_mutant_when_the_literal_stays_split() -> None:
    """Under `equivalent` a literal split across parts survives a per-part removal, so
    `remove_pinned_text` offers no mutant for it rather than one that removes nothing."""
    from frayproof_audit.engine import prepare_before
    from frayproof_audit.mutate.operators import get_operator
    from frayproof_audit.snapshot import load_list

    literal = "Never write to production"
    before = load_list([{"role": "system", "content": f"{literal}."}, {"role": "user", "content": "q"}])
    whole = [{"role": "system", "content": f"{literal}."}, {"role": "user", "content": f"{literal}!"}]
    split = [{"role": "system", "content": f"{literal}."}, {"role": "user", "content": [
        {"type": "text", "text": "Never write "}, {"type": "text", "text": "to production!"}]}]

    def sites(after: list[dict[str, Any]], match: str) -> list[str]:
        contract = make_contract({"pins": [{"name": "p", "contains": literal, "match": match}]})
        loaded = load_list(after)
        return [c.site for c in get_operator("remove_pinned_text").find_sites(
            loaded, contract, prepare_before(before, contract))]
    assert sites(whole, "equivalent") == sites(whole, "exact") == ["pin:p"]
    assert sites(split, "exact") == ["pin:p"]
    assert "pin:p" not in sites(split, "equivalent")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutation_cases(), st.data())
def test_equivalent_never_fails_what_exact_passes(case: Any, data: st.DataObject) -> None:
    """Role pins and retention rules: a pair they pass under `exact` also passes under
    `equivalent` (equivalence is coarser), also when the after is partly re-serialized."""
    before, after, contract_yaml = case
    if data.draw(st.booleans()):
        after = [data.draw(reserialized(m)) if _safe_to_reserialize(m) and data.draw(st.booleans())
                 else m for m in after]
    document = yaml.safe_load(contract_yaml) or {}
    document["pins"] = [pin for pin in document.get("pins", []) if "role" in pin]
    retain = document.setdefault("retain", {})
    retain.setdefault("recent_exchanges", data.draw(st.integers(0, 3)))
    retain.setdefault("latest_user_message", "exact")
    retain.setdefault("tool_results", "complete")
    exact = check(before, after, make_contract(document))
    for pin in document["pins"]:
        pin["match"] = "equivalent"
    retain.update(compare="equivalent", latest_user_message="equivalent")
    equivalent = check(before, after, make_contract(document))
    for name in _RULE_CHECKS:
        if not [v for v in exact.violations if v.check == name]:
            assert [v for v in equivalent.violations if v.check == name] == [], name
