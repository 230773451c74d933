"""`guard(record=writer)`: every pair the guard sees is logged, passing or not, with the guard's
own verdict, before `on_violation` acts; `before=`/`after=` extractors guard functions whose
input and output are not message lists. The log audits to the guard's verdicts."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit import ContractViolation, ContractWarning, InputError, guard
from frayproof_audit.capture import PairWriter
from frayproof_audit.contract import parse_contract
from tests.capture_support import CONTRACT, lines_of, run_audit, verdicts, write_contract
from tests.helpers import assistant, call, result, system, user

CHECKED = parse_contract(CONTRACT)


def history() -> list[dict[str, Any]]:
    return [system("Never write to production."), user("old"), assistant("old answer"), user("read"),
            call("c1"), result("c1"), assistant("answer"), user("question")]


def summarize(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [messages[0], user("Summary: old"), *messages[3:]]


def drop_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return messages[1:]


def records(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines_of(root)]


def test_passing_and_failing_pairs_are_both_recorded_with_the_verdict(tmp_path: Path) -> None:
    with PairWriter(tmp_path / "logs") as writer:
        good = guard(CHECKED, record=writer, session_id="s-1")(summarize)
        bad = guard(CHECKED, record=writer, compactor="drop-system-v1")(drop_system)
        assert good(history()) == summarize(history())
        with pytest.raises(ContractViolation) as raised:
            bad(history())
    first, second = records(tmp_path / "logs")
    assert first["compactor"] == f"{__name__}.summarize" and first["session_id"] == "s-1"
    assert first["format"] == "openai" and first["before"] == history()
    assert first["guard"] == {"passed": True, "errors": 0, "warnings": 0, "codes": [],
                              "contract": CHECKED.fingerprint}
    assert second["compactor"] == "drop-system-v1" and second["after"] == drop_system(history())
    codes = [v.code for v in raised.value.report.violations]
    assert second["guard"]["passed"] is False and second["guard"]["codes"] == list(dict.fromkeys(codes))
    assert second["guard"]["errors"] == raised.value.report.errors == 2


def test_the_recorded_pairs_audit_to_the_guards_verdicts(tmp_path: Path) -> None:
    with PairWriter(tmp_path / "logs") as writer:
        for mode in ("warn", "log"):
            bad = guard(CHECKED, on_violation=mode, record=writer)(drop_system)
            with pytest.warns(ContractWarning) if mode == "warn" else _quiet():
                bad(history())
        guard(CHECKED, record=writer)(summarize)(history())
    logged = records(tmp_path / "logs")
    run_audit(str(tmp_path / "logs"), write_contract(tmp_path), tmp_path / "out")
    audited = verdicts(tmp_path / "out")
    for record in logged:
        status, findings = audited[record["pair_id"]]
        assert status == ("pass" if record["guard"]["passed"] else "fail")
        assert sorted({code for _, code, _, _ in findings}) == sorted(record["guard"]["codes"])


class _quiet:
    def __enter__(self) -> None:
        logging.getLogger("frayproof_audit").disabled = True

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("frayproof_audit").disabled = False


def test_async_functions_record_the_input_as_it_was_when_called(tmp_path: Path) -> None:
    with PairWriter(tmp_path) as writer:

        @guard(CHECKED, record=writer)
        async def passthrough(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
            await asyncio.sleep(0)
            return messages

        @guard(CHECKED, record=writer)
        async def compact(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
            await asyncio.sleep(0)
            return summarize(messages)

        messages = history()
        pending = passthrough(messages)
        messages[0]["content"] = "Be brief."  # another task edits the shared list before it runs
        with pytest.raises(ContractViolation):
            asyncio.run(pending)
        assert asyncio.run(compact(history())) == summarize(history())
    edited, compacted = records(tmp_path)
    assert edited["before"][0]["content"] == "Never write to production."
    assert edited["after"][0]["content"] == "Be brief." and edited["guard"]["passed"] is False
    assert compacted["guard"]["passed"] is True


def test_a_bad_output_is_recorded_then_raised_and_a_bad_input_is_not_recorded(tmp_path: Path) -> None:
    with PairWriter(tmp_path) as writer:
        broken = guard(CHECKED, record=writer)(lambda messages: [{"role": 7}])
        with pytest.raises(InputError):
            broken(history())
        ran = []
        with pytest.raises(InputError):
            guard(CHECKED, record=writer)(lambda messages: ran.append(1) or messages)([{"role": 7}])
        assert ran == []
    [record] = records(tmp_path)
    assert record["guard"]["passed"] is False and "role must be a string" in record["guard"]["input_error"]
    summary = run_audit(str(tmp_path), write_contract(tmp_path.parent), tmp_path.parent / "out")
    assert summary.input_errors == 1  # the audit agrees: the record cannot be read


def test_the_contracts_format_reads_the_snapshots() -> None:
    """Regression: guard read every snapshot as `openai`, whatever the contract's format, so
    an Anthropic compaction that loses a tool result passed."""
    contract = parse_contract("format: anthropic\n")
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Read it."}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    ]
    with pytest.raises(ContractViolation) as raised:
        guard(contract)(lambda m: m[:2])(messages)
    assert [v.code for v in raised.value.report.violations] == ["TP-UNANSWERED"]
    with pytest.raises(ContractViolation):  # input_format overrides the contract's
        guard(None, input_format="anthropic")(lambda m: m[:2])(messages)


def test_extractors_guard_a_function_on_state(tmp_path: Path) -> None:
    """A LangGraph-style node: state in, partial state out."""

    def trim_node(state: dict[str, Any], keep: int = 5) -> dict[str, Any]:
        return {"messages": [state["messages"][0], *state["messages"][-keep:]], "trimmed": True}

    with PairWriter(tmp_path) as writer:
        guarded = guard(CHECKED, record=writer, before=lambda state: state["messages"],
                        after=lambda update, state: update["messages"],
                        session_id=lambda state: state["thread"])(trim_node)
        update = guarded({"messages": history(), "thread": "t-9"})
        assert update["trimmed"] is True
        with pytest.raises(ContractViolation):
            guarded({"messages": history(), "thread": "t-9"}, keep=1)
    first, second = records(tmp_path)
    assert first["session_id"] == second["session_id"] == "t-9"
    assert first["after"] == update["messages"] and second["guard"]["passed"] is False


def test_unchanged_outputs_can_be_skipped(tmp_path: Path) -> None:
    with PairWriter(tmp_path) as writer:
        guarded = guard(CHECKED, record=writer, record_unchanged=False)(
            lambda messages: messages if len(messages) < 8 else summarize(messages))
        guarded(history()[:6])
        guarded(history())
        guard(CHECKED, record=writer)(lambda messages: messages)(history())
    assert [r["before"] == r["after"] for r in records(tmp_path)] == [False, True]


def test_a_failing_log_never_stops_the_guard(tmp_path: Path) -> None:
    folder = tmp_path / "file-not-folder"
    folder.write_text("x", encoding="utf-8")
    writer = PairWriter(folder / "logs")  # cannot be created: a file is in the way
    guarded = guard(CHECKED, record=writer)(summarize)
    assert guarded(history()) == summarize(history())
    with pytest.raises(ContractViolation):
        guard(CHECKED, record=writer)(drop_system)(history())
    assert writer.errors == 2


def test_record_must_be_a_writer() -> None:
    with pytest.raises(TypeError, match="PairWriter"):
        guard(record="logs/")(summarize)  # type: ignore[arg-type]
