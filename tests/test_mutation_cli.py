"""The `mutate` command: the README demo's exact output, exit codes, the input-error envelope,
`--after`, `--operators`, `--verify`, and a real `python -m frayproof_audit` run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from frayproof_audit.mutate import run_mutations
from tests.helpers import REPO, run_cli, session

DEMO = ("--target", "examples/mutation_compactor.py:compact",
        "--input", "fixtures/mutation_session.json")
WEAK = ("--contract", "examples/weak_contract.yaml")
STRONG = ("--contract", "examples/mutation_contract.yaml")

# The demo's exact expected output, kept next to the operator cases (lines are too long for code).
WEAK_OUTPUT = (REPO / "tests/cases/mutation/demo_weak_contract.txt").read_text(encoding="utf-8")
STRONG_OUTPUT = (REPO / "tests/cases/mutation/demo_mutation_contract.txt").read_text(
    encoding="utf-8")


def test_demo_weak_contract_output() -> None:
    assert run_cli("mutate", *DEMO, *WEAK, expect=1).stdout == WEAK_OUTPUT


def test_demo_reusable_contract_output() -> None:
    assert run_cli("mutate", *DEMO, *STRONG, expect=0).stdout == STRONG_OUTPUT


def test_demo_json_counts() -> None:
    weak = json.loads(run_cli("mutate", *DEMO, *WEAK, "--format", "json", expect=1).stdout)
    strong = json.loads(run_cli("mutate", *DEMO, *STRONG, "--format", "json", expect=0).stdout)
    assert (weak["caught"], weak["survived"], weak["applicable"]) == (12, 8, 20)
    assert (strong["caught"], strong["applicable"], strong["skipped"]) == (20, 20, 0)
    assert strong["score_percent"] == 100.0 and strong["passed"] is True


def test_the_compactor_keeps_ten_messages() -> None:
    from examples.mutation_compactor import compact
    before = json.loads((REPO / "fixtures" / "mutation_session.json").read_text())
    after = compact(before)
    assert len(after) == 10 and after[2:] == before[5:]


CONSOLE = re.compile(r"```console\n\$ (frayproof-audit mutate [^\n]*)\n(.*?)```", re.S)


def transcripts(path: Path) -> list[tuple[str, str, int]]:
    """(command, stdout, exit code) of each `mutate` console block in a document, in the
    project's transcript convention: output lines, then `[exit N]` unless the code is 0."""
    if not path.exists():
        return []
    found = []
    for command, output in CONSOLE.findall(path.read_text(encoding="utf-8")):
        code = 0
        lines = output.splitlines()
        if lines and (exit_line := re.fullmatch(r"\[exit (\d+)\]", lines[-1])):
            code = int(exit_line.group(1))
            lines = lines[:-1]
        found.append((command, "\n".join(lines) + "\n", code))
    return found


@pytest.mark.parametrize("document", ["docs/mutation.md", "README.md"])
def test_documented_mutate_transcripts_stay_true(document: str) -> None:
    found = transcripts(REPO / document)
    if document == "docs/mutation.md":
        assert [output for _, output, _ in found] == [WEAK_OUTPUT, STRONG_OUTPUT]
    elif not found:
        pytest.skip("README.md has no mutate transcript yet")
    for command, output, code in found:
        ran = run_cli(*command.split()[1:], expect=code)
        assert ran.stdout == output, f"{document}: {command}"


def test_real_subprocess_run() -> None:
    ran = run_cli("mutate", *DEMO, *STRONG, real=True, expect=0)
    assert ran.stdout == STRONG_OUTPUT and ran.stderr == ""
    weak = run_cli("mutate", *DEMO, *WEAK, "--format", "json", real=True, expect=1)
    assert json.loads(weak.stdout)["survived"] == 8


def test_after_mode(tmp_path: Path) -> None:
    after = tmp_path / "after.json"
    from examples.mutation_compactor import compact
    before = json.loads((REPO / "fixtures" / "mutation_session.json").read_text())
    after.write_text(json.dumps(compact(before)))
    ran = run_cli("mutate", "--input", "fixtures/mutation_session.json", "--after", str(after),
                  *STRONG, expect=0)
    assert ran.stdout == STRONG_OUTPUT


def test_async_target_exits_0(tmp_path: Path) -> None:
    target = tmp_path / "async_target.py"
    target.write_text("async def compact(messages):\n    return messages\n")
    contract = tmp_path / "all.yaml"
    contract.write_text("pins:\n  - {name: s, role: system}\n  - {name: u, role: user}\n"
                        "  - {name: t, role: tool}\n")
    source = tmp_path / "input.json"
    source.write_text(json.dumps(session()))
    ran = run_cli("mutate", "--target", f"{target}:compact", "--input", str(source),
                  "--contract", str(contract), expect=0)
    assert "MUTATION SCORE: 12/12 caught (100.00%)" in ran.stdout


def test_baseline_failure_exits_1_with_no_mutants(tmp_path: Path) -> None:
    after = tmp_path / "after.json"
    after.write_text(json.dumps([{"role": "tool", "tool_call_id": "x", "content": "orphan"}]))
    ran = run_cli("mutate", "--input", "fixtures/mutation_session.json", "--after", str(after),
                  "--format", "json", expect=1)
    data = json.loads(ran.stdout)
    assert data["mutants"] == [] and data["operators"] == {} and data["passed"] is False
    text = run_cli("mutate", "--input", "fixtures/mutation_session.json", "--after", str(after),
                   expect=1).stdout
    assert text.startswith("BASELINE FAIL:") and "ERROR TP-ORPHAN tool_pair_integrity after[0]" in text


def test_bad_target_is_an_input_error_envelope() -> None:
    ran = run_cli("mutate", "--target", "missing", "--input", "fixtures/mutation_session.json",
                  "--format", "json", expect=2)
    assert json.loads(ran.stdout) == {
        "schema_version": 1, "error": "Target must be path.py:function or "
        "package.module:function, got 'missing'"}
    assert ran.stderr == ""
    text = run_cli("mutate", "--target", "nowhere.py:compact", "--input",
                   "fixtures/mutation_session.json", expect=2)
    assert text.stdout == "" and text.stderr.startswith("INPUT ERROR: Cannot import target:")


def test_contract_is_validated_before_the_target_is_imported(tmp_path: Path) -> None:
    target = tmp_path / "loud.py"
    marker = tmp_path / "ran.marker"
    target.write_text(f"open({str(marker)!r}, 'w').write('x')\n"
                      "def compact(messages):\n    return messages\n")
    contract = tmp_path / "bad.yaml"
    contract.write_text("version: 2\n")
    run_cli("mutate", "--target", f"{target}:compact", "--input",
            "fixtures/mutation_session.json", "--contract", str(contract), expect=2)
    assert not marker.exists()
    run_cli("mutate", "--target", f"{target}:compact", "--input", str(tmp_path / "none.json"),
            expect=2)
    assert not marker.exists()


@pytest.mark.parametrize("args", [
    (),
    ("--input", "fixtures/mutation_session.json"),
    ("--input", "fixtures/mutation_session.json", "--target", "a.py:f", "--after", "x.json"),
    (*DEMO, "--format", "yaml"),
])
def test_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    ran = run_cli("mutate", *args, expect=2)
    assert "Usage:" in ran.stderr or "Error:" in ran.stderr


def test_operator_selection_and_verify() -> None:
    ran = run_cli("mutate", *DEMO, *WEAK, "--operators", "drop_latest_user, drop_tool_call",
                  expect=1)
    lines = ran.stdout.splitlines()
    assert lines[1] == "MUTATION SCORE: 3/4 caught (75.00%); 1 survived, 0 skipped."
    assert [line.split()[1] for line in lines[2:]] == ["drop_tool_call"] * 3 + ["drop_latest_user"]
    bad = run_cli("mutate", *DEMO, "--operators", "drop_everything", "--format", "json", expect=2)
    assert "Unknown mutation operator 'drop_everything'" in json.loads(bad.stdout)["error"]
    verified = run_cli("mutate", *DEMO, *STRONG, "--verify", expect=0)
    assert verified.stdout == STRONG_OUTPUT


def test_help_says_the_target_is_executed() -> None:
    text = run_cli("mutate", "--help").stdout
    assert "IMPORTED AND EXECUTED" in text
    assert "--after" in text and "--verify" in text and "--operators" in text
    assert "mutate" in run_cli("--help").stdout


def test_cli_json_equals_the_library_report() -> None:
    ran = run_cli("mutate", *DEMO, *WEAK, "--format", "json", expect=1)
    from examples.mutation_compactor import compact
    report = run_mutations(REPO / "fixtures" / "mutation_session.json", compact,
                           REPO / "examples" / "weak_contract.yaml")
    assert ran.stdout == report.to_json() + "\n"
