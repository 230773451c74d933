"""Checks on the bundled fixtures and the review regressions that need Python to express.

Rule-by-rule cases live in tests/cases/*.yaml (run by test_cases.py).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from frayproof_audit import InputError, Snapshot, check, load_snapshot, validate
from frayproof_audit.checks import CHECK_NAMES, CONDITIONS
from frayproof_audit.model import text_parts
from tests.helpers import (
    EXAMPLE_CONTRACT,
    FIXTURES,
    assistant,
    call,
    conditions,
    history,
    make_contract,
    result,
    session,
    system,
    tool_call,
    user,
    verdict,
)

CLEAN = FIXTURES / "clean_session.json"
ALL_RULES = {"retain": {"latest_user_message": "exact", "recent_exchanges": 2,
                        "tool_results": "complete"}}


def fixture(name: str) -> list[Any]:
    loaded: list[Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return loaded


# --- golden behaviour of the fixtures (frayproof's documented fixture verdicts) -----------------

@pytest.mark.parametrize("name", ["clean_session.json", "legitimate_compaction.json",
                                  "dropped_constraint.json", "sdk_dump_session.json"])
def test_well_formed_fixtures_validate(name: str) -> None:
    assert verdict(validate(FIXTURES / name)) == []


def test_orphaned_result_is_exactly_one_orphan_at_2() -> None:
    report = validate(FIXTURES / "orphaned_result.json")
    assert verdict(report) == [("tool_pair_integrity", "error", "after", 2, "call_1", None, None)]
    assert conditions(report) == ["TP-ORPHAN"]


def test_legitimate_compaction_passes_the_example_contract() -> None:
    report = check(CLEAN, FIXTURES / "legitimate_compaction.json", EXAMPLE_CONTRACT)
    assert verdict(report) == []


def test_dropped_constraint_fails_both_pins_in_contract_order() -> None:
    report = check(CLEAN, FIXTURES / "dropped_constraint.json", EXAMPLE_CONTRACT)
    assert verdict(report) == [
        ("pinned_content", "error", "before", 0, None, "system-prompt", None),
        ("pinned_content", "error", "before", 0, None, "no-prod-writes", None),
    ]
    assert conditions(report) == ["PIN-ROLE", "PIN-TEXT"]


def test_pending_batch_fails_by_default() -> None:
    report = validate(FIXTURES / "pending_batch.json")
    assert verdict(report) == [("tool_pair_integrity", "error", "after", 2, "call_7", None, None)]


def test_pending_batch_passes_with_the_allowance() -> None:
    allowance = make_contract({"checks": {"tool_pairs": {"allow_trailing_pending_call": True}}})
    assert verdict(validate(FIXTURES / "pending_batch.json", allowance)) == []
    # ... and against the example contract, which has the allowance and both pins.
    assert verdict(check(CLEAN, FIXTURES / "pending_batch.json", EXAMPLE_CONTRACT)) == []


def test_pending_batch_with_warning_severity_is_one_warning() -> None:
    warning = make_contract({"checks": {"tool_pairs": {"severity": "warning"}}})
    report = validate(FIXTURES / "pending_batch.json", warning)
    assert report.passed and (report.errors, report.warnings) == (0, 1)


def test_malformed_content_is_an_input_error() -> None:
    with pytest.raises(InputError, match=r"messages\[1\]\.content"):
        validate(FIXTURES / "malformed_content.json")


def test_sdk_dump_equals_the_clean_session_both_ways() -> None:
    """Explicit SDK nulls (name, refusal, audio, annotations, function_call, tool_calls) are
    the same as leaving the keys out, whichever side they are on."""
    sdk = FIXTURES / "sdk_dump_session.json"
    strict = make_contract({
        "pins": [{"name": role, "role": role} for role in ("system", "user", "assistant", "tool")],
        **ALL_RULES,
    })
    assert verdict(check(CLEAN, sdk, strict)) == []
    assert verdict(check(sdk, CLEAN, strict)) == []
    assert verdict(check(sdk, sdk, strict)) == []


def test_check_ignores_the_defects_of_before() -> None:
    assert check(FIXTURES / "orphaned_result.json", CLEAN).passed


def test_toy_agent_compactors_produce_the_fixtures() -> None:
    from examples.toy_agent import build_session, compact, compact_broken

    assert build_session() == fixture("clean_session.json")
    assert compact(build_session()) == fixture("legitimate_compaction.json")
    assert compact_broken(build_session()) == fixture("orphaned_result.json")


# --- whole-contract behaviour -------------------------------------------------------------

def test_all_checks_off_pass_anything() -> None:
    off = make_contract({"checks": {name: False for name in (
        "tool_pairs", "unique_tool_ids", "structure", "pinned_content", "retention")},
        "pins": [{"name": "s", "role": "system"}], **ALL_RULES})
    broken = [result("z"), {"role": "alien", "content": None}, call("a", "a")]
    assert verdict(check(session(), broken, off)) == []


def test_warning_severities_pass_with_one_warning_each() -> None:
    contract = make_contract({"checks": {"tool_pairs": {"severity": "warning"},
                                         "unique_tool_ids": {"severity": "warning"},
                                         "structure": {"severity": "warning"}}})
    report = validate([user(), call("a", "a"), {"role": "system", "content": "late"}], contract)
    assert report.passed
    assert (report.errors, report.warnings) == (0, 4)
    assert {v.severity for v in report.violations} == {"warning"}


def test_report_order_is_check_order() -> None:
    contract = make_contract({"pins": [{"name": "s", "role": "system"}], **ALL_RULES,
                              "tools": [{"name": "write", "parameters": {}}],  # calls `read`
                              "checks": {"tool_call_integrity": True, "provider_validity": True}})
    renamed = {"role": "assistant", "content": None, "tool_calls": [tool_call("c0", "write")]}
    after = [{"role": "alien", "content": "x"}, result("z"), call("b", "b"), renamed]
    checks = [v.check for v in check(history(1), after, contract).violations]
    assert checks == sorted(checks, key=CHECK_NAMES.index)
    # format_notes never finds anything in openai input (tests/cases/format_notes.yaml: last).
    assert set(checks) == set(CHECK_NAMES) - {"format_notes"}


def test_retention_warning_text_names_the_rule() -> None:
    contract = make_contract({"retain": {"latest_user_message": "exact"},
                              "checks": {"retention": {"severity": "warning"}}})
    report = check(session(), session()[:-1], contract)
    assert report.passed
    assert report.to_text().splitlines() == [
        "PASS: 0 error(s), 1 warning(s)",
        "WARNING RET-LATEST retention before[4]: "
        + CONDITIONS["RET-LATEST"].title.format(how="exactly") + ' rule="latest_user_message"',
    ]


def test_retention_findings_say_how_messages_were_compared() -> None:
    """Under `equivalent` the messages must not claim an exact or verbatim comparison."""
    equivalent = make_contract({"retain": {"latest_user_message": "equivalent",
                                           "recent_exchanges": 1, "compare": "equivalent"}})
    exact = make_contract({"retain": {"latest_user_message": "exact", "recent_exchanges": 1}})
    as_exact, as_equivalent = ([v.message for v in check(session(), session()[:2], contract).violations]
                               for contract in (exact, equivalent))
    assert any("retained exactly" in m for m in as_exact)
    assert any("retained verbatim and in order" in m for m in as_exact)
    assert any("retained as an equivalent message" in m for m in as_equivalent)
    assert any("retained as equivalent messages and in order" in m for m in as_equivalent)
    assert not any("exactly" in m or "verbatim" in m for m in as_equivalent)


def test_exchange_findings_name_the_lost_span() -> None:
    contract = make_contract({"retain": {"recent_exchanges": 1}})
    [finding] = check(session(), [system()], contract).violations
    assert "before[1:4]" in finding.message


def test_inputs_are_not_mutated() -> None:
    before, after = session(), [*session()[:2], assistant("summary"), session()[-1]]
    saved = copy.deepcopy((before, after))
    contract = make_contract({"pins": [{"name": "s", "role": "system"}], **ALL_RULES})
    check(before, after, contract)
    validate(after)
    assert (before, after) == saved


def test_loaded_snapshot_is_detached_from_its_source() -> None:
    messages = session()
    snapshot = load_snapshot(messages)
    messages[0]["content"] = "changed"
    messages.append(user("more"))
    assert len(snapshot.messages) == 5
    assert snapshot.messages[0].content == "Never write to production"


def test_role_pin_on_directly_built_neutral_messages() -> None:
    from frayproof_audit.model import Message

    before = Snapshot((Message("system", "Never write to production"), Message("user", "hi")))
    pins = make_contract({"pins": [{"name": "s", "role": "system"}]})
    assert check(before, [system(), user("hi")], pins).passed
    assert not check(before, [system("Be brief"), user("hi")], pins).passed


REPLACEMENTS = {
    "content": {"content": "Be brief"},
    "refusal": {"refusal": "no"},
    "metadata": {"metadata": {"name": "ops"}},
    "tool-call-id": {"tool_call_id": "x"},
}


@pytest.mark.parametrize("fields", REPLACEMENTS.values(), ids=REPLACEMENTS.keys())
def test_replaced_neutral_fields_break_role_pins_and_retention(fields: dict[str, Any]) -> None:
    before = load_snapshot(history(2))
    index = 9  # the open user turn
    changed = before.messages[index]._replace(**fields)
    after = Snapshot((*before.messages[:index], changed))
    pins = make_contract({"pins": [{"name": "u", "role": "user"}]})
    assert conditions(check(before, after, pins))[-1] == "PIN-ROLE"
    latest = make_contract({"retain": {"latest_user_message": "exact"}})
    assert "RET-LATEST" in conditions(check(before, after, latest))
    exchange_changed = before.messages[5]._replace(**fields)
    after_exchange = Snapshot((*before.messages[:5], exchange_changed, *before.messages[6:]))
    window = make_contract({"retain": {"recent_exchanges": 1}})
    assert "RET-EXCHANGE" in conditions(check(before, after_exchange, window))


def test_neutral_replacement_keeps_metadata() -> None:
    before = load_snapshot([{"role": "system", "content": "rules", "name": "ops"}])
    changed = before.messages[0]._replace(content="rules")
    assert changed.metadata == {"name": "ops"}
    pins = make_contract({"pins": [{"name": "s", "role": "system"}]})
    assert check(before, Snapshot((changed,)), pins).passed


NESTED_EDITS = {
    "block-text": lambda m: m["content"][0].__setitem__("text", "other"),
    "block-extra-key": lambda m: m["content"][0].__setitem__("cache_control", {"type": "x"}),
    "metadata-deep": lambda m: m["meta"]["tags"].append("new"),
    "call-arguments": lambda m: m["tool_calls"][0]["function"].__setitem__("arguments", "{}"),
    "call-metadata": lambda m: m["tool_calls"][0].__setitem__("index", 1),
    "function-metadata": lambda m: m["tool_calls"][0]["function"].__setitem__("strict", False),
}


@pytest.mark.parametrize("edit", NESTED_EDITS.values(), ids=NESTED_EDITS.keys())
def test_nested_edits_change_identity(edit: Any) -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "calling"}],
        "meta": {"tags": ["a"]},
        "tool_calls": [{"id": "a", "type": "function", "index": 0,
                        "function": {"name": "read", "arguments": '{"q": 1}', "strict": True}}],
    }
    before = [user(), message, result("a")]
    after = copy.deepcopy(before)
    edit(after[1])
    pins = make_contract({"pins": [{"name": "bot", "role": "assistant"}]})
    assert check(before, copy.deepcopy(before), pins).passed
    assert conditions(check(before, after, pins)) == ["PIN-ROLE"]


OPTIONAL_NULLS = ("name", "audio", "annotations", "function_call", "tool_calls",
                  "tool_call_id", "refusal")


@pytest.mark.parametrize("key", OPTIONAL_NULLS)
def test_optional_null_fields_equal_omitted_both_ways(key: str) -> None:
    plain = [system("rules"), user(), assistant("hi")]
    nulled = [{**m, key: None} for m in plain]
    contract = make_contract({
        "pins": [{"name": r, "role": r} for r in ("system", "user", "assistant")], **ALL_RULES})
    assert verdict(check(plain, nulled, contract)) == []
    assert verdict(check(nulled, plain, contract)) == []
    assert verdict(validate(nulled)) == []


DISCRIMINATORS = {"list": [], "object": {}, "null": None, "number": 1, "boolean": True}


@pytest.mark.parametrize("value", DISCRIMINATORS.values(), ids=DISCRIMINATORS.keys())
def test_non_string_block_types_are_input_errors_everywhere(value: Any) -> None:
    from frayproof_audit.model import Message

    bad = [user([{"type": value, "text": "x"}])]
    for run in (lambda: validate(bad), lambda: check(bad, [user()]), lambda: check([user()], bad),
                lambda: validate(Snapshot((Message("user", [{"type": value}]),)))):
        with pytest.raises(InputError, match=r"content\[0\]\.type"):
            run()


@pytest.mark.parametrize("value", DISCRIMINATORS.values(), ids=DISCRIMINATORS.keys())
def test_text_helpers_tolerate_odd_blocks(value: Any) -> None:
    assert text_parts([{"type": value, "text": "x"}, {"type": "text", "text": "y"}]) == ["y"]
