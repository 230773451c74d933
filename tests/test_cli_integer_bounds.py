"""Every integer a user gives is bounded where it is parsed (`frayproof_audit.bounds`): a value
past what it can mean is exit 2 naming the bound, before any work; never exit 123 after it.

The option cases are found from the commands themselves, so a new integer option is tested (and
must be bounded) without editing this file; only its command's base arguments live here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest

from frayproof_audit.bounds import MAX_BYTES, MAX_COUNT
from frayproof_audit.cli import COMMANDS, main
from frayproof_audit.contract import ContractError, parse_contract
from frayproof_audit.corpus.inputs.field_map import ConfigError
from frayproof_audit.corpus.run.audit_config import AuditConfig
from tests.corpus_support import good_lines, write_jsonl
from tests.helpers import EXAMPLES, FIXTURES, run_cli

HUGE = "99999999999999999999999"
CLEAN = str(FIXTURES / "clean_session.json")
TRANSCRIPT = str(FIXTURES / "transcripts" / "openai.json")

BASE = {
    # command: its arguments without the integer option under test ({tmp}: the test's folder)
    "validate": ["--snapshot", CLEAN],
    "check": ["--before", CLEAN, "--after", str(FIXTURES / "legitimate_compaction.json")],
    "mutate": ["--target", str(EXAMPLES / "mutation_compactor.py") + ":compact",
               "--input", str(FIXTURES / "mutation_session.json")],
    "audit": ["{tmp}/in.jsonl", "--out", "{tmp}/out", "--no-mutate", "--jobs", "1", "-q"],
    "trend": ["{tmp}/ds"],
    "report": ["{tmp}/ds", "-o", "{tmp}/r.html"],
    "rejudge": ["{tmp}/ds", "--contract", "{tmp}/other.yaml", "-q"],
    "pairs": [str(EXAMPLES / "agent-logs" / "codex")],
    "compact": ["{tmp}/t.json", "--max-tokens", "100"],
    "suggest": ["{tmp}/in.jsonl", "--good", "all", "-o", "{tmp}/out", "--mutation-pairs", "0"],
}


def integer_options() -> list[tuple[str, click.Option]]:
    context = click.Context(main)
    found = []
    for name in sorted(COMMANDS):
        command = main.get_command(context, name)
        assert command is not None
        for param in command.params:
            if isinstance(param, click.Option) and isinstance(param.type, click.types.IntParamType):
                found.append((name, param))
    return found


OPTIONS = integer_options()
IDS = [f"{name} {param.opts[0]}" for name, param in OPTIONS]


def test_the_cases_cover_every_integer_option() -> None:
    assert {name for name, _ in OPTIONS} == set(BASE)
    assert len(OPTIONS) == 24


@pytest.mark.parametrize(("command", "option"), OPTIONS, ids=IDS)
def test_every_integer_option_is_bounded_by_what_it_counts(command: str, option: click.Option) -> None:
    kind = option.type
    assert isinstance(kind, click.IntRange), "every integer option is a bounded range"
    bytes_option = option.name in ("max_record_bytes", "shard_bytes")
    assert kind.max == (MAX_BYTES if bytes_option else MAX_COUNT) and not kind.max_open


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder with what every command reads: a small log, a dataset of it, a transcript."""
    folder = tmp_path_factory.mktemp("inputs")
    write_jsonl(folder / "in.jsonl", good_lines(3))
    run_cli("audit", folder / "in.jsonl", "--out", folder / "ds", "--no-mutate", "--jobs", "1", "-q",
            "--fail-on", "none")
    (folder / "other.yaml").write_text("version: 1\nchecks:\n  structure: false\n", encoding="utf-8")
    shutil.copy(TRANSCRIPT, folder / "t.json")
    run_cli("repair", folder / "t.json", "-o", folder / "t.json")
    return folder


def argv(command: str, option: click.Option, value: object, folder: Path) -> list[str]:
    base = [part.replace("{tmp}", str(folder)) for part in BASE[command]]
    if option.opts[0] in base:  # the base's own value of this option is the one replaced
        index = base.index(option.opts[0])
        del base[index:index + 2]
    return [command, *base, option.opts[0], str(value)]


@pytest.mark.parametrize(("command", "option"), OPTIONS, ids=IDS)
def test_a_huge_value_is_one_usage_error_line_before_any_work(
        inputs: Path, tmp_path: Path, command: str, option: click.Option) -> None:
    folder = tmp_path / "run"
    shutil.copytree(inputs, folder)
    done = run_cli(*argv(command, option, HUGE, folder), expect=2)
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in done.stderr + done.stdout
    assert option.opts[0] in errors[0] and HUGE in errors[0]
    assert str(MAX_BYTES if option.name in ("max_record_bytes", "shard_bytes") else MAX_COUNT) in errors[0]
    assert not (folder / "out").exists() and not (folder / "r.html").exists()


@pytest.mark.parametrize(("command", "option"), OPTIONS, ids=IDS)
def test_the_bound_itself_is_accepted_and_runs(
        inputs: Path, tmp_path: Path, command: str, option: click.Option) -> None:
    folder = tmp_path / "run"
    shutil.copytree(inputs, folder)
    assert isinstance(option.type, click.IntRange)
    done = run_cli(*argv(command, option, option.type.max, folder), expect=None)
    assert done.exit_code in (0, 1), (done.exit_code, done.stderr, done.trace)


@pytest.mark.parametrize("option", ["--shard-bytes", "--max-record-bytes", "--jobs",
                                    "--max-mutants-per-pair"])
def test_the_issue_s_audit_options_in_a_subprocess(inputs: Path, tmp_path: Path, option: str) -> None:
    done = run_cli("audit", inputs / "in.jsonl", "--out", tmp_path / "out", option, HUGE,
                   expect=2, real=True)
    assert f"Invalid value for '{option}" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_audit_config_refuses_what_the_command_line_would(tmp_path: Path) -> None:
    """The library bounds its own options, for callers that never see click."""
    base = {"inputs": ("x.jsonl",), "out": str(tmp_path / "o")}
    for option, value, words in (("n_jobs", MAX_COUNT + 1, "jobs"),
                                 ("shard_bytes", MAX_BYTES + 1, "shard_bytes"),
                                 ("max_record_bytes", 2**64, "max_record_bytes"),
                                 ("max_mutants_per_pair", 10**23, "max-mutants-per-pair")):
        with pytest.raises(ConfigError, match=words) as raised:
            AuditConfig(**base, **{option: value})  # type: ignore[arg-type]
        bound = MAX_BYTES if "bytes" in option else MAX_COUNT
        assert str(bound) in str(raised.value)
        assert getattr(AuditConfig(**base, **{option: bound}), option) == bound  # type: ignore[arg-type]


# --- the contract's integers ---------------------------------------------------------------

def retain_contract(folder: Path, window: int) -> Path:
    text = (EXAMPLES / "audit_contract.yaml").read_text(encoding="utf-8")
    path = folder / "contract.yaml"
    path.write_text(text.replace("recent_exchanges: 2", f"recent_exchanges: {window}"), encoding="utf-8")
    return path


@pytest.mark.parametrize("window", [2**64, 2**64 - 1, MAX_COUNT + 1, 10**4000, -1])
def test_recent_exchanges_past_its_bound_is_a_contract_error(tmp_path: Path, window: int) -> None:
    """The issue's reproducer: `retain: {recent_exchanges: 18446744073709551616}`."""
    contract = retain_contract(tmp_path, window)
    expected = (f"INPUT ERROR: Invalid contract '{contract}': retain.recent_exchanges: must be an "
                f"integer from 0 to {MAX_COUNT}")
    write_jsonl(tmp_path / "in.jsonl", good_lines(2))
    for real in (False, True):
        done = run_cli("audit", "in.jsonl", "--contract", contract, "--out", "o", expect=2, real=real,
                       cwd=tmp_path)
        assert done.stderr.strip() == expected
        assert not (tmp_path / "o").exists()
    done = run_cli("check", "--before", CLEAN, "--after", CLEAN, "--contract", contract, expect=2)
    assert done.stderr.strip() == expected
    with pytest.raises(ContractError, match="from 0 to 2147483647"):
        parse_contract(f"retain:\n  recent_exchanges: {window}\n")


def test_recent_exchanges_at_its_bound_audits_and_commits(tmp_path: Path) -> None:
    contract = retain_contract(tmp_path, MAX_COUNT)
    write_jsonl(tmp_path / "in.jsonl", good_lines(4))
    done = run_cli("audit", "in.jsonl", "--contract", contract, "--out", "o", "--format", "json", "-q",
                   expect=None, cwd=tmp_path)
    assert done.exit_code in (0, 1) and json.loads(done.stdout)["pairs"] == 4
