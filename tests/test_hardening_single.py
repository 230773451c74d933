"""Single-pair commands and the contract under hostile input: every problem at once, no hangs,
no tracebacks, errors that name the user's own file (issue: a nightly job you can trust)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from frayproof_audit import InputError, load_contract
from tests.helpers import run_cli


def test_a_contract_reports_every_problem_at_once_with_suggestions(tmp_path: Path) -> None:
    path = tmp_path / "contract.yaml"
    path.write_text(
        "checks:\n  tool_pair: true\n  structure: {severity: fatal, system_message: anywhere}\n"
        "retain: {recent_exchange: 2, tool_results: all}\npins: [{name: a}]\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_contract(path)
    message = str(caught.value)
    assert message.startswith(f"Invalid contract '{path}': ")
    problems = message.split(": ", 1)[1].split("; ")
    assert "checks.tool_pair: unknown key (allowed: tool_pairs, unique_tool_ids, structure, " \
           "pinned_content, retention, tool_arguments, tool_call_integrity, format_notes, " \
           "provider_validity)" in problems
    assert "did you mean 'tool_pairs'?" in problems
    assert "checks.structure.severity: must be one of error, warning" in problems
    assert "did you mean 'system_messages'?" in problems
    assert "did you mean 'recent_exchanges'?" in problems
    assert "retain.tool_results: must be 'complete' or null" in problems
    assert "pins[0]: set exactly one of role or contains" in problems
    out = run_cli("validate", "--snapshot", "fixtures/clean_session.json", "--contract", path,
                  expect=2, real=True)
    assert out.stdout == "" and "Traceback" not in out.stderr
    assert out.stderr.count("did you mean") == 3


def test_an_unknown_key_far_from_any_known_one_gets_no_guess(tmp_path: Path) -> None:
    path = tmp_path / "contract.yaml"
    path.write_text("colour: blue\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"colour: unknown key \(allowed: [a-z, ]+\)$"):
        load_contract(path)


def test_an_integer_past_pythons_digit_limit_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "contract.yaml"
    path.write_text("version: " + "9" * 5000 + "\n", encoding="utf-8")
    out = run_cli("validate", "--snapshot", "fixtures/clean_session.json", "--contract", path,
                  expect=2, real=True)
    assert "Invalid contract" in out.stderr and "Traceback" not in out.stderr


def test_a_pin_named_with_a_lone_surrogate_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "contract.yaml"
    path.write_text('pins: [{name: "\\ud800", role: system}, {name: ok, contains: "\\udfff"}]\n',
                    encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_contract(path)
    assert "pins[0].name: must be valid Unicode text" in str(caught.value)
    assert "pins[1].contains: must be valid Unicode text" in str(caught.value)


@pytest.mark.parametrize("option", ["--snapshot", "--contract"])
def test_fifos_and_devices_are_refused_without_blocking(option: str, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero")):
        args = ["--snapshot", "fixtures/clean_session.json", option, path]
        if option == "--snapshot":
            args = ["--snapshot", path]
        out = run_cli("validate", *args, expect=2, real=True)  # run_cli times out after 60 s
        assert "is not a regular file" in out.stderr, out.stderr


def test_a_folder_as_contract_or_snapshot(tmp_path: Path) -> None:
    out = run_cli("check", "--before", tmp_path, "--after", tmp_path, expect=2)
    assert "is a folder" in out.stderr


def test_an_oversized_contract_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "contract.yaml"
    with path.open("wb") as handle:
        handle.truncate(5 * 1024 * 1024)
    with pytest.raises(InputError, match="over the limit"):
        load_contract(path)


def test_a_missing_target_function_names_the_users_file(tmp_path: Path) -> None:
    target = tmp_path / "compactor.py"
    target.write_text("def compact(messages):\n    return messages\n", encoding="utf-8")
    out = run_cli("mutate", "--input", "fixtures/clean_session.json",
                  "--target", f"{target}:compress", expect=2, real=True)
    assert out.stderr.strip() == (
        f"INPUT ERROR: Cannot import target: '{target}' has no 'compress'")
    assert "_frayproof_audit_target_" not in out.stderr


def test_lone_surrogates_are_input_errors_in_files_and_lists(tmp_path: Path) -> None:
    from frayproof_audit import validate

    path = tmp_path / "after.json"
    path.write_text('[{"role": "tool", "tool_call_id": "\\ud800", "content": "x"}]', encoding="utf-8")
    for command in (["validate", "--snapshot", path], ["check", "--before", path, "--after", path],
                    ["mutate", "--input", path, "--after", path]):
        out = run_cli(*command, expect=2, real=True)
        assert "lone surrogate" in out.stderr and "Traceback" not in out.stderr
    with pytest.raises(InputError, match=r"messages\[0\] holds a lone surrogate \\ud800"):
        validate([{"role": "tool", "tool_call_id": "\ud800", "content": "x"}])
    assert validate([{"role": "user", "content": "\U0001f600 a real emoji"}]).passed


def test_records_missing_before_get_one_hint_naming_their_keys(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    line = '{"request": {"messages": []}, "response": {"compacted": []}}\n'
    (logs / "a.jsonl").write_text(line * 3, encoding="utf-8")
    out = run_cli("audit", logs, "--out", logs / "out", "-q", expect=2, real=True)
    assert out.stdout.count("records lack `before`") == 1
    assert "top-level keys: request, response" in out.stdout
    assert "--field before=PATH" in out.stdout
    assert "NOTHING AUDITED" in out.stdout
    again = run_cli("audit", logs, "--out", logs / "out", "-q", "--format", "json", expect=2,
                    real=True)
    import json

    notes = json.loads(again.stdout)["notes"]
    assert any(note.startswith("skipped frayproof-audit output") for note in notes), notes
    fixed = run_cli("audit", logs, "--out", logs / "out", "-q", "--field", "before=request.messages",
                    "--field", "after=response.compacted", expect=0, real=True)
    assert "records lack" not in fixed.stdout
