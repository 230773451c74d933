"""`frayproof-audit validate` and `check`: output, exit codes, errors, help and the docs."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import click
import pytest

from frayproof_audit import __version__
from frayproof_audit.cli import main
from frayproof_audit.cli.single import check_command, validate_command
from tests.helpers import REPO, run_cli

CLEAN = "fixtures/clean_session.json"
CONTRACT = "examples/contract.yaml"
Writer = Callable[..., Path]


# --- validate -----------------------------------------------------------------------------

def test_validate_clean_session() -> None:
    out = run_cli("validate", "--snapshot", CLEAN, expect=0)
    assert out.stdout == "PASS: 0 error(s), 0 warning(s)\n"
    assert out.stderr == ""


def test_validate_orphaned_result() -> None:
    out = run_cli("validate", "--snapshot", "fixtures/orphaned_result.json", expect=1)
    lines = out.stdout.splitlines()
    assert lines[0] == "FAIL: 1 error(s), 0 warning(s)"
    assert lines[1].startswith("ERROR TP-ORPHAN tool_pair_integrity after[2]: ")
    assert lines[1].endswith(' tool_call_id="call_1"')
    assert len(lines) == 2


def test_validate_json() -> None:
    out = run_cli("validate", "--snapshot", "fixtures/orphaned_result.json",
                  "--format", "json", expect=1)
    data = json.loads(out.stdout)
    assert data["passed"] is False and data["schema_version"] == 1
    assert [(v["check"], v["message_index"], v["tool_call_id"]) for v in data["violations"]] == [
        ("tool_pair_integrity", 2, "call_1")]
    assert out.stdout.endswith("}\n")


def test_validate_warning_only_exits_0(write_contract: Writer) -> None:
    contract = write_contract("checks:\n  tool_pairs:\n    severity: warning\n")
    out = run_cli("validate", "--snapshot", "fixtures/pending_batch.json",
                  "--contract", contract, expect=0)
    assert out.stdout.splitlines()[0] == "PASS: 0 error(s), 1 warning(s)"
    assert out.stdout.splitlines()[1].startswith("WARNING TP-UNANSWERED tool_pair_integrity after[2]: ")


def test_validate_pending_batch_with_the_allowance(write_contract: Writer) -> None:
    run_cli("validate", "--snapshot", "fixtures/pending_batch.json", expect=1)
    contract = write_contract("checks: {tool_pairs: {allow_trailing_pending_call: true}}\n")
    run_cli("validate", "--snapshot", "fixtures/pending_batch.json", "--contract", contract,
            expect=0)


def test_validate_sdk_dump() -> None:
    run_cli("validate", "--snapshot", "fixtures/sdk_dump_session.json", expect=0)


# --- check --------------------------------------------------------------------------------

def test_check_legitimate_compaction() -> None:
    out = run_cli("check", "--before", CLEAN, "--after", "fixtures/legitimate_compaction.json",
                  "--contract", CONTRACT, expect=0)
    assert out.stdout == "PASS: 0 error(s), 0 warning(s)\n"


def test_check_dropped_constraint_json() -> None:
    out = run_cli("check", "--before", CLEAN, "--after", "fixtures/dropped_constraint.json",
                  "--contract", CONTRACT, "--format", "json", expect=1)
    data = json.loads(out.stdout)
    assert data["errors"] == 2
    assert [v["pin"] for v in data["violations"]] == ["system-prompt", "no-prod-writes"]
    assert {v["snapshot"] for v in data["violations"]} == {"before"}


def test_check_retention_finding_in_json(write_contract: Writer) -> None:
    contract = write_contract("retain:\n  latest_user_message: exact\n")
    out = run_cli("check", "--before", CLEAN, "--after", "fixtures/pending_batch.json",
                  "--contract", contract, "--format", "json", expect=1)
    found = [(v["check"], v["snapshot"], v["message_index"], v["rule"])
             for v in json.loads(out.stdout)["violations"]]
    assert found == [("tool_pair_integrity", "after", 2, None),
                     ("retention", "before", 5, "latest_user_message")]


def test_check_sdk_dump_both_ways() -> None:
    sdk = "fixtures/sdk_dump_session.json"
    run_cli("check", "--before", CLEAN, "--after", sdk, "--contract", CONTRACT, expect=0)
    run_cli("check", "--before", sdk, "--after", CLEAN, "--contract", CONTRACT, expect=0)


# --- input errors -------------------------------------------------------------------------

INPUT_ERRORS: dict[str, tuple[str, ...]] = {
    "malformed-content": ("validate", "--snapshot", "fixtures/malformed_content.json"),
    "missing-snapshot": ("validate", "--snapshot", "fixtures/no_such_file.json"),
    "directory-snapshot": ("validate", "--snapshot", "fixtures"),
    "missing-contract": ("validate", "--snapshot", CLEAN, "--contract", "no_such.yaml"),
    "pins-need-check": ("validate", "--snapshot", CLEAN, "--contract", CONTRACT),
    "malformed-after": ("check", "--before", CLEAN, "--after", "fixtures/malformed_content.json"),
    "malformed-before": ("check", "--before", "fixtures/malformed_content.json", "--after", CLEAN),
    "missing-before": ("check", "--before", "nope.json", "--after", CLEAN),
}


@pytest.mark.parametrize("args", INPUT_ERRORS.values(), ids=INPUT_ERRORS.keys())
def test_input_errors_in_json_are_one_envelope_line_on_stdout(args: tuple[str, ...]) -> None:
    out = run_cli(*args, "--format", "json", expect=2)
    assert out.stderr == ""
    assert out.stdout.endswith("\n") and out.stdout.count("\n") == 1
    assert re.fullmatch(r'\{"schema_version": 1, "error": ".+"\}\n', out.stdout)
    assert list(json.loads(out.stdout)) == ["schema_version", "error"]


@pytest.mark.parametrize("args", INPUT_ERRORS.values(), ids=INPUT_ERRORS.keys())
def test_input_errors_in_text_go_to_stderr(args: tuple[str, ...]) -> None:
    out = run_cli(*args, expect=2)
    assert out.stdout == ""
    assert out.stderr.startswith("INPUT ERROR: ") and out.stderr.count("\n") == 1


def test_bad_contract_exit_2(write_contract: Writer) -> None:
    contract = write_contract("checks:\n  tool_pairs: maybe\n")
    out = run_cli("check", "--before", CLEAN, "--after", CLEAN, "--contract", contract, expect=2)
    assert "checks.tool_pairs" in out.stderr and str(contract) in out.stderr


def test_deeply_nested_snapshot_exit_2(write_json: Writer) -> None:
    path = write_json(b"[" * 100_000 + b"]" * 100_000)
    out = run_cli("validate", "--snapshot", path, "--format", "json", expect=2)
    assert "nested deeper" in json.loads(out.stdout)["error"]


# --- usage --------------------------------------------------------------------------------

USAGE_ERRORS = {
    "missing-snapshot-option": ("validate",),
    "missing-after-option": ("check", "--before", CLEAN),
    "format-is-case-sensitive": ("validate", "--snapshot", CLEAN, "--format", "JSON"),
    "unknown-format": ("validate", "--snapshot", CLEAN, "--format", "xml"),
    "unknown-option": ("validate", "--snapshot", CLEAN, "--strict"),
    "unknown-command": ("verify",),
}


@pytest.mark.parametrize("args", USAGE_ERRORS.values(), ids=USAGE_ERRORS.keys())
def test_usage_errors_exit_2_with_usage_on_stderr(args: tuple[str, ...]) -> None:
    out = run_cli(*args, expect=2)
    assert out.stdout == ""
    assert "Usage: frayproof-audit" in out.stderr and "Error:" in out.stderr


def test_version() -> None:
    assert run_cli("--version", expect=0).stdout == f"frayproof-audit {__version__}\n"


def test_bare_invocation_prints_help_and_exits_2() -> None:
    out = run_cli(expect=2)
    assert "Usage: frayproof-audit" in out.stdout + out.stderr
    assert "validate" in out.stdout + out.stderr


@pytest.mark.parametrize("args", [("--help",), ("-h",), ("validate", "--help"), ("check", "-h")])
def test_help_exits_0(args: tuple[str, ...]) -> None:
    out = run_cli(*args, expect=0)
    assert out.stdout.startswith("Usage: frayproof-audit")


@pytest.mark.parametrize("command", [validate_command, check_command], ids=["validate", "check"])
def test_every_option_has_help(command: click.Command) -> None:
    assert command.help
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.help, param.name
    assert command.name in main.commands


# --- real processes -----------------------------------------------------------------------

def test_python_m_validate() -> None:
    out = run_cli("validate", "--snapshot", "fixtures/orphaned_result.json", real=True, expect=1)
    assert out.stdout.startswith("FAIL: 1 error(s), 0 warning(s)\nERROR TP-ORPHAN tool_pair_integrity")


def test_python_m_check_json_input_error() -> None:
    out = run_cli("check", "--before", CLEAN, "--after", "fixtures/malformed_content.json",
                  "--format", "json", real=True, expect=2)
    assert out.stderr == "" and json.loads(out.stdout)["schema_version"] == 1


def test_python_m_check_from_another_directory(tmp_path: Path) -> None:
    out = run_cli("check", "--before", REPO / CLEAN, "--after",
                  REPO / "fixtures/legitimate_compaction.json", "--contract", REPO / CONTRACT,
                  real=True, cwd=tmp_path, expect=0)
    assert out.stdout == "PASS: 0 error(s), 0 warning(s)\n"


def test_python_m_version() -> None:
    assert run_cli("--version", real=True).stdout == f"frayproof-audit {__version__}\n"


# --- the docs show real output ---------------------------------------------------------
# tests/test_readme.py runs every ```console transcript (stdout and exit code). Output that goes
# to stderr is shown in ```text blocks ending "(on stderr; exit N)"; these are checked here.

def stderr_examples() -> list[tuple[str, str, int]]:
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"```text\n(\$ frayproof-audit .*?)\n```", text, re.DOTALL):
        command, *output, last = block.splitlines()
        code = re.fullmatch(r"\(on stderr; exit (\d)\)", last)
        assert code, block
        found.append((command.removeprefix("$ frayproof-audit "), "\n".join(output),
                      int(code.group(1))))
    return found


@pytest.mark.parametrize("command, expected, code", stderr_examples(),
                         ids=[c for c, _, _ in stderr_examples()])
def test_cli_docs_stderr_examples_are_real(command: str, expected: str, code: int) -> None:
    out = run_cli(*shlex.split(command), expect=code)
    assert (out.stdout, out.stderr) == ("", expected + "\n")


def test_cli_docs_have_a_section_per_command() -> None:
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for command in ("validate", "check"):
        assert f"\n## {command}\n" in text
        assert f"$ frayproof-audit {command} " in text
