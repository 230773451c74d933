"""Provider profiles: one case per profile x rule, each with the provider's exact error text.

Each case is judged through the public API (`provider_defects`) and through the contract check
(`provider_validity`); both must name the rule's code, and the finding's message must quote
the error text the provider sends for that request, ids and wire indices filled in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from frayproof_audit import check, validate
from frayproof_audit.providers import (
    PROFILE_NAMES,
    PROFILES,
    RULES,
    UnknownProfile,
    get_profile,
    profile_for,
    provider_defects,
)
from frayproof_audit.snapshot import load_source
from tests.helpers import call, make_contract, result, user

Messages = Any

THOUGHT = {"type": "thinking", "thinking": "I should read the config.", "signature": "sig-1"}
REDACTED = {"type": "redacted_thinking", "data": "opaque-1"}
USE = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "app.toml"}}
ANSWER = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "80"}]}
ASK = {"role": "user", "content": "read the config"}
RS = {"type": "reasoning", "id": "rs_1", "summary": []}
FC = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{}"}
OUT = {"type": "function_call_output", "call_id": "call_1", "output": "80"}
MSG = {"type": "message", "id": "msg_1", "role": "assistant", "content": "Reading it."}


@dataclass(frozen=True)
class Case:
    id: str
    profile: str
    fmt: str
    after: Messages
    code: str | None
    error: str = ""
    before: Messages | None = None
    site: str = ""


CASES = [
    # --- openai-chat
    Case("chat-tool-after-user", "openai-chat", "openai",
         [user(), call("a"), result("a"), user("go on"), result("a")], "PV-CHAT-TOOL-ORPHAN",
         "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
         "message with 'tool_calls'.", site="after[4]"),
    Case("chat-tool-unknown-id", "openai-chat", "openai",
         [user(), call("a"), result("a"), result("b")], "PV-CHAT-TOOL-UNKNOWN-ID",
         "Invalid parameter: 'tool_call_id' of 'b' not found in 'tool_calls' of previous "
         "message.", site="after[3]"),
    Case("chat-call-unanswered", "openai-chat", "openai",
         [user(), call("a", "b"), result("a"), user("next")], "PV-CHAT-CALL-UNANSWERED",
         "An assistant message with 'tool_calls' must be followed by tool messages responding "
         "to each 'tool_call_id'. The following tool_call_ids did not have response messages: b",
         site="after[1].tool_calls[1]"),
    Case("chat-pass", "openai-chat", "openai",
         [user(), call("a", "b"), result("b"), result("a"), user("next")], None),
    # --- openai-responses
    Case("responses-call-unanswered", "openai-responses", "openai-responses",
         [ASK, FC, ASK], "PV-RESP-CALL-UNANSWERED",
         "No tool output found for function call call_1.", site="after[1]"),
    Case("responses-output-orphan", "openai-responses", "openai-responses",
         [ASK, OUT], "PV-RESP-OUTPUT-ORPHAN",
         "No tool call found for function call output with call_id call_1.", site="after[1]"),
    Case("responses-reasoning-alone", "openai-responses", "openai-responses",
         [ASK, RS, ASK], "PV-RESP-REASONING-ALONE",
         "Item 'rs_1' of type 'reasoning' was provided without its required following item.",
         site="after[1]"),
    Case("responses-reasoning-last", "openai-responses", "openai-responses",
         [ASK, RS], "PV-RESP-REASONING-ALONE",
         "Item 'rs_1' of type 'reasoning' was provided without its required following item.",
         site="after[1]"),
    Case("responses-call-missing-reasoning", "openai-responses", "openai-responses",
         [ASK, FC, OUT], "PV-RESP-REASONING-MISSING",
         "Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' "
         "item: 'rs_1'.", before=[ASK, RS, FC, OUT], site="after[1]"),
    Case("responses-message-missing-reasoning", "openai-responses", "openai-responses",
         [ASK, MSG], "PV-RESP-REASONING-MISSING",
         "Item 'msg_1' of type 'message' was provided without its required 'reasoning' "
         "item: 'rs_1'.", before=[ASK, RS, MSG], site="after[1]"),
    Case("responses-pass", "openai-responses", "openai-responses",
         [ASK, RS, FC, MSG, OUT], None, before=[ASK, RS, FC, MSG, OUT]),
    Case("responses-item-without-id-needs-no-reasoning", "openai-responses", "openai-responses",
         [ASK, {k: v for k, v in FC.items() if k != "id"}, OUT], None,
         before=[ASK, RS, {k: v for k, v in FC.items() if k != "id"}, OUT]),
    # --- anthropic
    Case("anthropic-result-orphan", "anthropic", "anthropic",
         [ASK, {"role": "assistant", "content": "Let me see."}, ANSWER], "PV-ANTH-RESULT-ORPHAN",
         "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
         "toolu_1. Each `tool_result` block must have a corresponding `tool_use` block in the "
         "previous message.", site="after[2].content[0]"),
    Case("anthropic-use-unanswered", "anthropic", "anthropic",
         [ASK, {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, USE]},
          ASK], "PV-ANTH-USE-UNANSWERED",
         "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
         "after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block "
         "in the next message.", site="after[1].content[1]"),
    Case("anthropic-thinking-first-dropped", "anthropic", "anthropic",
         [ASK, {"role": "assistant", "content": [USE]}, ANSWER], "PV-ANTH-THINKING-FIRST",
         "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
         "`tool_use`. When `thinking` is enabled, a final `assistant` message must start with a "
         "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).",
         before=[ASK, {"role": "assistant", "content": [THOUGHT, USE]}, ANSWER],
         site="after[1].content[0]"),
    Case("anthropic-thinking-first-reordered", "anthropic", "anthropic",
         [ASK, {"role": "assistant", "content": [{"type": "text", "text": "So:"}, THOUGHT, USE]},
          ANSWER], "PV-ANTH-THINKING-FIRST",
         "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
         "`text`.", site="after[1].content[0]"),
    Case("anthropic-thinking-modified", "anthropic", "anthropic",
         [ASK, {"role": "assistant", "content": [REDACTED, {**THOUGHT, "signature": "sig-2"}, USE]},
          ANSWER], "PV-ANTH-THINKING-MODIFIED",
         "messages.1.content.1: `thinking` or `redacted_thinking` blocks in the latest assistant "
         "message cannot be modified. These blocks must remain as they were in the original "
         "response.", before=[ASK, {"role": "assistant", "content": [REDACTED, THOUGHT, USE]}, ANSWER],
         site="after[1].content[1]"),
    Case("anthropic-pass", "anthropic", "anthropic",
         [ASK, {"role": "assistant", "content": [REDACTED, THOUGHT, USE]}, ANSWER], None,
         before=[ASK, {"role": "assistant", "content": [REDACTED, THOUGHT, USE]}, ANSWER]),
    Case("anthropic-new-turn-needs-no-thinking", "anthropic", "anthropic",
         [ASK, {"role": "assistant", "content": [USE]}, ANSWER,
          {"role": "assistant", "content": "Port 80."}, ASK], None,
         before=[ASK, {"role": "assistant", "content": [THOUGHT, USE]}, ANSWER,
                 {"role": "assistant", "content": "Port 80."}, ASK]),
    # --- gemini
    Case("gemini-response-count", "gemini", "openai",
         [user(), call("a", "b"), result("a"), user("next")], "PV-GEM-RESPONSE-COUNT",
         "Please ensure that the number of function response parts is equal to the number of "
         "function call parts of the function call turn.", site="after[1]"),
    Case("gemini-call-position", "gemini", "openai",
         [user(), {"role": "assistant", "content": "Let me look."}, call("a"), result("a")],
         "PV-GEM-CALL-POSITION",
         "Please ensure that function call turn comes immediately after a user turn or after a "
         "function response turn.", site="after[2]"),
    Case("gemini-pass", "gemini", "openai",
         [{"role": "system", "content": "Be brief."}, user(), call("a", "b"), result("b"),
          result("a"), call("c"), result("c")], None),
]


def _defects(case: Case) -> list[Any]:
    after = load_source(case.after, case.fmt)
    before = None if case.before is None else load_source(case.before, case.fmt)
    return provider_defects(after, case.profile, before)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_profile_rule(case: Case) -> None:
    defects = _defects(case)
    if case.code is None:
        assert defects == []
        return
    assert [d.code for d in defects] == [case.code], defects
    defect = defects[0]
    assert case.error in defect.error
    assert case.error in defect.message
    assert defect.site == case.site
    assert defect.code in {rule.code for rule in get_profile(case.profile).rules}


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_the_check_reports_the_same(case: Case) -> None:
    contract = make_contract({"format": case.fmt, "checks": {
        "provider_validity": {"profile": case.profile},
        "tool_pairs": False, "structure": False}})
    report = (validate(case.after, contract) if case.before is None
              else check(case.before, case.after, contract))
    found = [v for v in report.violations if v.check == "provider_validity"]
    assert [v.code for v in found] == ([] if case.code is None else [case.code])
    if case.code is not None:
        assert case.error in found[0].message


def test_every_rule_has_a_case_with_its_error_text() -> None:
    assert {case.code for case in CASES if case.code} == set(RULES)
    assert {case.profile for case in CASES} == set(PROFILE_NAMES)


def test_the_format_chooses_the_profile() -> None:
    assert profile_for("openai") == "openai-chat"
    assert profile_for("otel-genai") == "openai-chat"
    assert profile_for("anthropic") == "anthropic"
    assert profile_for("openai-responses") == "openai-responses"
    after = load_source([ASK, {"role": "assistant", "content": [USE]}, ASK], "anthropic")
    assert [d.code for d in provider_defects(after)] == ["PV-ANTH-USE-UNANSWERED"]


def test_an_unknown_profile_is_an_input_error() -> None:
    with pytest.raises(UnknownProfile, match="known: openai-chat, openai-responses"):
        get_profile("bedrock")
    with pytest.raises(Exception, match=r"checks.provider_validity.profile: must be one of"):
        make_contract({"checks": {"provider_validity": {"profile": "bedrock"}}})


def test_defects_name_wire_coordinates_and_serialise() -> None:
    request = {"system": "Be brief.", "messages": [
        ASK, {"role": "assistant", "content": [USE]}, ASK, ANSWER]}
    after = load_source(request, "anthropic")
    defects = provider_defects(after)
    assert [(d.index, d.message_index) for d in defects] == [(2, 1), (4, 3)]
    row = defects[1].to_dict()
    assert row["site"] == "after[3].content[0]" and row["tool_call_id"] == "toolu_1"
    assert row["profile"] == "anthropic" and row["error"] in row["message"]


def test_defects_say_which_call_or_block_they_are_about() -> None:
    chat = load_source([user(), call("a", "b"), result("a"), user("next")], "openai")
    [defect] = provider_defects(chat, "openai-chat")
    assert (defect.index, defect.call, defect.block, defect.tool_call_id) == (1, 1, None, "b")
    before = load_source([ASK, {"role": "assistant", "content": [REDACTED, THOUGHT, USE]}, ANSWER],
                         "anthropic")
    after = load_source([ASK, {"role": "assistant", "content": [REDACTED, {**THOUGHT, "thinking": ""}, USE]},
                         ANSWER], "anthropic")
    [defect] = provider_defects(after, None, before)
    assert (defect.code, defect.index, defect.block, defect.call) == (
        "PV-ANTH-THINKING-MODIFIED", 1, 1, None)
    items = load_source([ASK, RS, ASK], "openai-responses")
    [defect] = provider_defects(items)
    assert (defect.item_id, defect.block) == ("rs_1", 0)


def test_profiles_registry_is_consistent() -> None:
    codes = [rule.code for profile in PROFILES.values() for rule in profile.rules]
    assert len(codes) == len(set(codes))
    assert all(code.startswith("PV-") for code in codes)


def test_the_formats_doc_lists_every_rule_with_its_error_text() -> None:
    from tests.helpers import REPO

    doc = (REPO / "docs" / "formats.md").read_text(encoding="utf-8")
    table = doc.split("## Provider validity", 1)[1]
    for profile in PROFILES.values():
        for rule in profile.rules:
            assert f"| `{profile.name}` | `{rule.code}` | {rule.trigger} | {rule.error} |" in table


@pytest.mark.parametrize("real", [False, True])
def test_the_check_command_quotes_the_providers_error(
        real: bool, write_json: Any, write_contract: Any) -> None:
    from tests.helpers import run_cli

    before = write_json({"system": "Be brief.", "messages": [
        ASK, {"role": "assistant", "content": [THOUGHT, USE]}, ANSWER]})
    after = write_json({"system": "Be brief.", "messages": [
        ASK, {"role": "assistant", "content": [USE]}, ANSWER]})
    contract = write_contract("format: anthropic\nchecks:\n  provider_validity: true\n")
    out = run_cli("check", "--before", before, "--after", after, "--contract", contract,
                  expect=1, real=real)
    assert "ERROR PV-ANTH-THINKING-FIRST provider_validity after[1]:" in out.stdout
    assert ("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            "`tool_use`.") in out.stdout
