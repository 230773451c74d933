"""The Python API: public names, reports, neutral values, guard and assert_contract."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import inspect
import io
import json
import logging
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import frayproof_audit
from frayproof_audit import (
    ContractViolation,
    ContractWarning,
    InputError,
    Message,
    Report,
    Snapshot,
    ToolCall,
    Violation,
    check,
    guard,
    load_contract,
    load_snapshot,
    validate,
)
from frayproof_audit.report import input_error_json
from frayproof_audit.testing import assert_contract
from tests.helpers import (
    EXAMPLE_CONTRACT,
    FIXTURES,
    REPO,
    conditions,
    make_contract,
    result,
    session,
    system,
    user,
)

PINS = make_contract({"pins": [{"name": "hello", "role": "system"}]})

# --- public names -------------------------------------------------------------------------

FRAYPROOF_NAMES = ("Contract", "ContractViolation", "ContractWarning", "InputError", "Report",
                   "check", "guard", "load_contract", "load_snapshot", "validate")


def test_frayproof_public_names_exist() -> None:
    for name in (*FRAYPROOF_NAMES, "Violation", "Snapshot", "Message", "ToolCall"):
        assert name in frayproof_audit.__all__
        assert hasattr(frayproof_audit, name)
    # The version the package was installed as, whatever it is: no literal to forget on release.
    assert frayproof_audit.__version__ == importlib.metadata.version("frayproof-audit")


def test_input_error_is_a_value_error() -> None:
    assert issubclass(InputError, ValueError)
    with pytest.raises(ValueError):
        validate(None)


# --- reports ------------------------------------------------------------------------------

def test_report_json_is_deterministic_and_complete() -> None:
    report = validate([result("a"), user()])
    text = report.to_json()
    assert text == validate([result("a"), user()]).to_json()
    data = json.loads(text)
    assert list(data) == ["errors", "passed", "schema_version", "violations", "warnings"]
    assert data["schema_version"] == 1 and data["passed"] is False and data["errors"] == 1
    assert data["violations"] == [{
        "check": "tool_pair_integrity", "code": "TP-ORPHAN", "message": report.violations[0].message,
        "message_index": 0, "pin": None, "rule": None, "severity": "error",
        "snapshot": "after", "tool_call_id": "a",
    }]
    assert text.startswith('{\n  "errors": 1,')


def test_report_json_keeps_non_ascii_literal() -> None:
    report = check([system("é")], [system("è")], make_contract(
        {"pins": [{"name": "règle", "role": "system"}]}))
    assert '"pin": "règle"' in report.to_json()


def test_report_text() -> None:
    report = check([system("Never write to production")], [result("a")], PINS)
    lines = report.to_text().splitlines()
    assert lines[0] == "FAIL: 2 error(s), 0 warning(s)"
    assert lines[1].startswith("ERROR TP-ORPHAN tool_pair_integrity after[0]: ")
    assert lines[1].endswith(' tool_call_id="a"')
    assert lines[2].startswith("ERROR PIN-ROLE pinned_content before[0]: ")
    assert lines[2].endswith(' pin="hello"')


def test_report_text_quotes_values_as_json_strings() -> None:
    report = validate([user(), result('say "hi"\n')])
    assert report.to_text().endswith(' tool_call_id="say \\"hi\\"\\n"')


def test_empty_report() -> None:
    report = validate([])
    assert report.to_text() == "PASS: 0 error(s), 0 warning(s)"
    assert (report.passed, report.errors, report.warnings, report.exit_code) == (True, 0, 0, 0)
    assert json.loads(report.to_json())["violations"] == []


def test_exit_codes_come_from_the_report() -> None:
    assert validate([user(), result("z")]).exit_code == 1
    warning = make_contract({"checks": {"tool_pairs": {"severity": "warning"}}})
    assert validate([user(), result("z")], warning).exit_code == 0


def test_violation_records() -> None:
    violation = Violation("retention", "error", "before", 3, "lost", rule="recent_exchanges")
    assert violation.to_dict() == {
        "check": "retention", "code": None, "severity": "error", "snapshot": "before",
        "message_index": 3,
        "tool_call_id": None, "pin": None, "rule": "recent_exchanges", "message": "lost"}
    assert Report((violation,)).error_checks() == ["retention"]


def test_input_error_envelope() -> None:
    assert input_error_json("bad é") == '{"schema_version": 1, "error": "bad é"}'


# --- neutral values -----------------------------------------------------------------------

def test_neutral_values_round_trip() -> None:
    snapshot = load_snapshot(FIXTURES / "sdk_dump_session.json")
    assert isinstance(snapshot, Snapshot) and len(snapshot) == 6
    calls = snapshot.messages[2].tool_calls
    assert calls == (ToolCall("call_1", "list_migrations", '{"status": "pending"}', "function"),)
    assert snapshot.messages[2].metadata == {"annotations": None, "audio": None,
                                             "function_call": None}
    assert check(snapshot, FIXTURES / "clean_session.json", EXAMPLE_CONTRACT).passed
    assert load_snapshot(snapshot) == snapshot


def test_neutral_messages_can_be_built_directly() -> None:
    before = Snapshot((
        Message("system", "Never write to production", metadata={"name": "ops"}),
        Message("user", "read it"),
        Message("assistant", None, tool_calls=(ToolCall("a", "read", "{}"),)),
        Message("tool", "ok", tool_call_id="a"),
        Message("assistant", None, refusal="I can't."),
    ))
    assert validate(before).passed
    contract = make_contract({"pins": [{"name": "bot", "role": "assistant"}]})
    changed = Snapshot((*before.messages[:4], before.messages[4]._replace(refusal="I won't.")))
    assert conditions(check(before, changed, contract)) == ["PIN-ROLE"]


def test_contract_objects_are_accepted_everywhere() -> None:
    contract = make_contract({"checks": {"structure": {"system_messages": "anywhere"}}})
    assert validate([user(), system()], contract).passed
    assert load_contract(EXAMPLE_CONTRACT) == load_contract(str(EXAMPLE_CONTRACT))


# --- guard --------------------------------------------------------------------------------

def keep_system_and_last(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [messages[0], messages[-1]]


def lose_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return messages[1:]


def test_guard_returns_the_same_object_when_the_contract_holds() -> None:
    output = [system(), user("Continue")]
    guarded = guard(EXAMPLE_CONTRACT)(lambda messages: output)
    assert guarded(session()) is output


def test_guard_raises_with_the_report() -> None:
    guarded = guard(PINS)(lose_system)
    with pytest.raises(ContractViolation) as raised:
        guarded(session())
    assert raised.value.report.errors == 1
    assert str(raised.value) == raised.value.report.to_text()
    assert conditions(raised.value.report) == ["PIN-ROLE"]


def test_guard_catches_in_place_edits_of_a_keyword_argument() -> None:
    @guard(PINS)
    def compact(messages: list[dict[str, Any]], keep: int = 1) -> Any:
        messages[0]["content"] = "Be brief"
        return messages

    with pytest.raises(ContractViolation):
        compact(keep=2, messages=session())


def test_guard_checks_the_first_declared_parameter() -> None:
    @guard(PINS)
    def compact(keep: int, messages: list[dict[str, Any]]) -> Any:
        return messages

    with pytest.raises(InputError):  # `keep`, an int, is what gets loaded
        compact(1, session())


def test_guard_applies_defaults_of_the_first_parameter() -> None:
    default = [system(), user()]

    @guard(PINS)
    def compact(messages: list[dict[str, Any]] = default) -> list[dict[str, Any]]:
        return messages[1:]

    with pytest.raises(ContractViolation):
        compact()


def test_guard_preserves_name_doc_and_wrapped() -> None:
    def compact(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Docs."""
        return messages

    guarded = guard()(compact)
    assert guarded.__name__ == "compact" and guarded.__doc__ == "Docs."
    assert guarded.__wrapped__ is compact  # type: ignore[attr-defined]


def test_guard_warn_mode_returns_the_output() -> None:
    output: list[dict[str, Any]] = []
    guarded = guard(PINS, on_violation="warn")(lambda messages: output)
    with pytest.warns(ContractWarning, match="FAIL: 1 error") as caught:
        assert guarded(session()) is output
    assert len(caught) == 1


def test_guard_log_mode_logs_an_error(caplog: pytest.LogCaptureFixture) -> None:
    output = session()[1:]
    guarded = guard(PINS, on_violation="log")(lambda messages: output)
    with caplog.at_level(logging.ERROR, logger="frayproof_audit"):
        assert guarded(session()) is output
    [record] = caplog.records
    assert record.name == "frayproof_audit" and record.levelno == logging.ERROR
    assert "pinned_content" in record.getMessage()


@pytest.mark.parametrize("mode", ["raise", "warn", "log"])
def test_guard_is_silent_on_warnings(mode: str, caplog: pytest.LogCaptureFixture) -> None:
    contract = make_contract({"pins": [{"name": "s", "role": "system", "severity": "warning"}]})
    guarded = guard(contract, on_violation=mode)(lose_system)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with caplog.at_level(logging.DEBUG, logger="frayproof_audit"):
            guarded(session())
    assert caplog.records == []


def test_guard_configuration_errors() -> None:
    with pytest.raises(ValueError, match="on_violation"):
        guard(on_violation="ignore")
    with pytest.raises(TypeError):
        guard()(lambda: [])
    with pytest.raises(InputError):
        guard({"pins": []})


def test_guard_resolves_the_contract_once(tmp_path: Path) -> None:
    path = tmp_path / "contract.yaml"
    path.write_text("pins: [{name: s, role: system}]\n", encoding="utf-8")
    guarded = guard(path)(lose_system)
    path.unlink()
    with pytest.raises(ContractViolation):
        guarded(session())


def test_guard_rejects_bad_input_before_running() -> None:
    ran = []
    guarded = guard()(lambda messages: ran.append(1) or messages)
    with pytest.raises(InputError):
        guarded([{"role": 2}])
    assert ran == []


def test_guard_rejects_bad_output_after_running() -> None:
    ran = []
    guarded = guard()(lambda messages: ran.append(1) or {"messages": messages})
    with pytest.raises(InputError):
        guarded(session())
    assert ran == [1]


def test_guard_lets_function_exceptions_through() -> None:
    def broken(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        raise KeyError("boom")

    with pytest.raises(KeyError):
        guard()(broken)(session())


def test_guard_accepts_snapshots_and_paths() -> None:
    guarded = guard(EXAMPLE_CONTRACT)(lambda messages: FIXTURES / "legitimate_compaction.json")
    assert guarded(load_snapshot(FIXTURES / "clean_session.json")).name.endswith(".json")
    snapshot = load_snapshot(session())
    assert guard(PINS)(lambda messages: messages)(snapshot) is snapshot


def test_guard_captures_neutral_content_before_in_place_edits() -> None:
    snapshot = load_snapshot(session())

    @guard(PINS)
    def edit(messages: Snapshot) -> Snapshot:
        messages.messages[0].metadata["name"] = "changed"  # type: ignore[index]
        return messages

    with pytest.raises(ContractViolation):
        edit(snapshot)


# --- guard on async functions -------------------------------------------------------------

def test_async_guard_raises_after_await() -> None:
    @guard(PINS)
    async def compact(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        await asyncio.sleep(0)
        return messages[1:]

    with pytest.raises(ContractViolation):
        asyncio.run(compact(session()))


def test_async_guard_success_returns_the_output() -> None:
    output = [system(), user("Continue")]

    @guard(EXAMPLE_CONTRACT)
    async def compact(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return output

    assert asyncio.run(compact(session())) is output


def test_async_guard_captures_input_at_call_time() -> None:
    """frayproof's B11, fixed: an edit made after the call but before the coroutine starts
    running cannot hide a loss from the check."""

    @guard(PINS)
    async def passthrough(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return messages

    messages = session()
    pending = passthrough(messages)
    messages[0]["content"] = "Be brief"  # someone edits the shared list before it runs
    with pytest.raises(ContractViolation):
        asyncio.run(pending)


def test_async_guard_reports_bad_input_when_awaited() -> None:
    ran = []

    @guard()
    async def compact(messages: Any) -> Any:
        ran.append(1)
        return messages

    pending = compact([{"role": 2}])  # does not raise yet
    with pytest.raises(InputError):
        asyncio.run(pending)
    assert ran == []


def test_async_guard_warn_and_log(caplog: pytest.LogCaptureFixture) -> None:
    async def lose(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return messages[1:]

    with pytest.warns(ContractWarning):
        asyncio.run(guard(PINS, on_violation="warn")(lose)(session()))
    with caplog.at_level(logging.ERROR, logger="frayproof_audit"):
        asyncio.run(guard(PINS, on_violation="log")(lose)(session()))
    assert len(caplog.records) == 1


@pytest.mark.skipif(not hasattr(inspect, "markcoroutinefunction"), reason="Python 3.12+")
def test_async_guard_looks_like_a_coroutine_function() -> None:
    async def compact(messages: Any) -> Any:
        return messages

    assert inspect.iscoroutinefunction(guard()(compact))


# --- assert_contract ----------------------------------------------------------------------

def test_assert_contract_passes() -> None:
    assert_contract(FIXTURES / "clean_session.json", FIXTURES / "legitimate_compaction.json",
                    EXAMPLE_CONTRACT)


def test_assert_contract_raises_with_the_report() -> None:
    with pytest.raises(AssertionError, match=r"after\[0\]"):
        assert_contract(session(), [result("z")])


def test_assert_contract_passes_warnings_and_propagates_input_errors() -> None:
    warning = make_contract({"checks": {"tool_pairs": {"severity": "warning"}}})
    assert_contract(session(), [user(), result("z")], warning)
    with pytest.raises(InputError):
        assert_contract(session(), [{"role": 2}])


def test_assert_contract_with_the_toy_compactor() -> None:
    from examples.toy_agent import compact

    messages = json.loads((FIXTURES / "clean_session.json").read_text(encoding="utf-8"))
    assert_contract(FIXTURES / "clean_session.json", compact(messages), EXAMPLE_CONTRACT)


# --- the documentation's Python examples run ------------------------------------------------

def python_blocks(path: Path) -> list[str]:
    blocks, current, inside = [], [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() == "```python":
            inside, current = True, []
        elif line.strip() == "```" and inside:
            inside = False
            blocks.append("\n".join(current))
        elif inside:
            current.append(line)
    return blocks


@pytest.mark.parametrize("index", range(len(python_blocks(REPO / "docs" / "api.md"))))
def test_api_docs_examples_run(index: int, monkeypatch: pytest.MonkeyPatch,
                               caplog: pytest.LogCaptureFixture) -> None:
    """Each block runs, and every `print(...)  # text` prints that text."""
    monkeypatch.chdir(REPO)
    code = python_blocks(REPO / "docs" / "api.md")[index]
    printed = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(printed):
        warnings.simplefilter("ignore", ContractWarning)
        exec(compile(code, f"docs/api.md[{index}]", "exec"), {"__name__": "docs_example"})
    promised = [line.split("#", 1)[1].strip() for line in code.splitlines()
                if line.lstrip().startswith("print(") and "#" in line]
    lines = printed.getvalue().splitlines()
    for text in promised:
        assert text in lines, (text, lines)



def test_toy_agent_script_output() -> None:
    done = subprocess.run([sys.executable, str(REPO / "examples" / "toy_agent.py")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == ["Safe compaction: 6 -> 3 messages", "Broken compaction blocked:",
                         "FAIL: 1 error(s), 0 warning(s)"]
    assert lines[3].startswith("ERROR TP-ORPHAN tool_pair_integrity after[2]: ")
    assert lines[3].endswith(' tool_call_id="call_1"') and len(lines) == 4
