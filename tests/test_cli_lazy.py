"""The command group imports a command's module only when that command runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from frayproof_audit.cli import COMMANDS, main
from frayproof_audit.cli.lazy import LazyCommands

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "clean_session.json"
CONTRACT = ROOT / "examples" / "contract.yaml"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_lazy_name_is_the_command_it_imports(name: str) -> None:
    command = main.commands[name]
    assert isinstance(command, click.Command)
    assert command.name == name


def test_listing_the_commands_imports_none_and_help_lists_them_all() -> None:
    commands = LazyCommands({"check": "frayproof_audit.cli.single:check_command"})
    assert list(commands) == ["check"] and len(commands) == 1 and "check" in commands
    assert commands._loaded == {}  # what "lazy" means: nothing imported yet
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    listed = {line.split()[0] for line in result.output.split("Commands:")[1].splitlines() if line.strip()}
    assert listed == set(COMMANDS)


def test_an_unknown_command_still_gets_click_s_suggestion() -> None:
    result = CliRunner().invoke(main, ["chek"])
    assert result.exit_code == 2
    assert "No such command 'chek'" in result.output and "check" in result.output


def test_added_and_removed_commands_behave_as_in_a_dict() -> None:
    commands = LazyCommands({"check": "frayproof_audit.cli.single:check_command"})
    extra = click.Command("extra")
    commands["extra"] = extra
    assert list(commands) == ["check", "extra"] and commands["extra"] is extra
    del commands["check"]
    assert list(commands) == ["extra"] and commands.get("check") is None
    with pytest.raises(KeyError):
        del commands["check"]


def test_a_spec_that_is_not_a_command_is_refused() -> None:
    commands = LazyCommands({"bad": "frayproof_audit.cli:COMMANDS"})
    with pytest.raises(TypeError, match="is not a click command"):
        commands["bad"]


def test_running_check_imports_neither_the_mutation_runner_nor_the_transcript_tools() -> None:
    """A real process: what `check` leaves in `sys.modules` (the point of the lazy group is the
    start-up time of every run)."""
    script = (
        "import json, sys\n"
        "from frayproof_audit.cli import main\n"
        "try:\n"
        f"    main(['check', '--before', {str(FIXTURE)!r}, '--after', {str(FIXTURE)!r},"
        f" '--contract', {str(CONTRACT)!r}])\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          cwd=ROOT)
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["code"] == 0
    modules = set(outcome["modules"])
    assert "frayproof_audit.cli.single" in modules
    for heavy in ("frayproof_audit.cli.mutate_cmd", "frayproof_audit.cli.transcript_cmd",
                  "frayproof_audit.cli.report_cmd", "frayproof_audit.mutate.target", "asyncio"):
        assert heavy not in modules, heavy


@pytest.mark.parametrize(("given", "expected"), [(None, "1"), ("3", "3")])
def test_the_cli_keeps_openblas_to_one_thread_unless_told_otherwise(given: str | None, expected: str) -> None:
    """numpy (imported by pyarrow) would start a spinning OpenBLAS thread per core."""
    import os

    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    script = "import os, frayproof_audit.cli; print(os.environ['OPENBLAS_NUM_THREADS'])"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          env=env)
    assert done.stdout.strip() == expected


def test_loky_s_resource_tracker_warnings_are_silenced_for_the_processes_the_cli_starts() -> None:
    """Its leaked-semaphore notes after a stopped run would break the one-line error; only that
    module's warnings are ignored, in the environment children inherit."""
    import os

    env = {key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"}
    script = (
        "import os, subprocess, sys, frayproof_audit.cli\n"
        "child = ('import warnings\\n'\n"
        "         'warnings.warn_explicit(\"leaked\", UserWarning, \"t.py\", 1,'\n"
        "         ' module=\"joblib.externals.loky.backend.resource_tracker\")\\n'\n"
        "         'warnings.warn_explicit(\"kept\", UserWarning, \"x.py\", 1, module=\"other\")\\n')\n"
        "subprocess.run([sys.executable, '-c', child], check=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          env=env)
    assert "leaked" not in done.stderr and "kept" in done.stderr
