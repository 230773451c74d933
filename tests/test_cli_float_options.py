"""Every float option of every command takes only finite numbers: `nan` (every comparison with
it is false, so a gate given it could never fire) and the infinities are exit 2 naming the
option, before any work.

The cases are found from the commands themselves, so a new float option is tested (and must be
a `FiniteRange`) without editing this file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import click
import pytest

from frayproof_audit.cli import COMMANDS, main
from frayproof_audit.cli.option_types import FiniteRange
from tests.corpus_support import good_lines, write_jsonl
from tests.helpers import run_cli

BASE = {
    # command: its arguments without the float option under test ({tmp}: the test's folder)
    "audit": ["{tmp}/in.jsonl", "--out", "{tmp}/out", "--no-mutate", "--jobs", "1", "-q"],
    "trend": ["{tmp}/ds"],
    "report": ["{tmp}/ds", "-o", "{tmp}/r.html"],
    "suggest": ["{tmp}/in.jsonl", "--good", "all", "-o", "{tmp}/out", "--mutation-pairs", "0"],
}


def float_options() -> list[tuple[str, click.Option]]:
    context = click.Context(main)
    found = []
    for name in sorted(COMMANDS):
        command = main.get_command(context, name)
        assert command is not None
        for param in command.params:
            if isinstance(param, click.Option) and isinstance(param.type, click.types.FloatParamType):
                found.append((name, param))
    return found


OPTIONS = float_options()
IDS = [f"{name} {param.opts[0]}" for name, param in OPTIONS]


def test_the_cases_cover_every_float_option() -> None:
    assert {name for name, _ in OPTIONS} == set(BASE)
    assert all(isinstance(param.type, FiniteRange) for _, param in OPTIONS), IDS


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("inputs")
    write_jsonl(folder / "in.jsonl", good_lines(3))
    run_cli("audit", folder / "in.jsonl", "--out", folder / "ds", "--no-mutate", "--jobs", "1", "-q",
            "--fail-on", "none")
    return folder


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
@pytest.mark.parametrize(("command", "option"), OPTIONS, ids=IDS)
def test_a_non_finite_value_is_a_usage_error_before_any_work(
        inputs: Path, tmp_path: Path, command: str, option: click.Option, value: str) -> None:
    folder = tmp_path / "run"
    shutil.copytree(inputs, folder)
    base = [part.replace("{tmp}", str(folder)) for part in BASE[command]]
    done = run_cli(command, *base, option.opts[0], value, expect=2)
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and option.opts[0] in errors[0], done.stderr
    assert not (folder / "out").exists() and not (folder / "r.html").exists()


def test_nan_for_the_regression_gate_in_a_subprocess(inputs: Path) -> None:
    done = run_cli("trend", inputs / "ds", "--fail-on-regression", "nan", expect=2, real=True)
    assert "--fail-on-regression" in done.stderr and "not a finite number" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("command", "option"), OPTIONS, ids=IDS)
def test_a_finite_value_in_range_still_runs(inputs: Path, tmp_path: Path, command: str,
                                             option: click.Option) -> None:
    folder = tmp_path / "run"
    shutil.copytree(inputs, folder)
    base = [part.replace("{tmp}", str(folder)) for part in BASE[command]]
    done = run_cli(command, *base, option.opts[0], "0.5", expect=None)
    assert done.exit_code in (0, 1), (done.exit_code, done.stderr, done.trace)
