"""`init`: the starter pair is valid, written both or neither, and never overwrites anything."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit.contract import ContractError, load_contract, parse_contract
from frayproof_audit.mutate import mutate_pair
from frayproof_audit.snapshot import load_list
from frayproof_audit.starter import (
    CONTRACT_NAME,
    CONTRACT_TEMPLATE,
    SCHEMA_NAME,
    SCHEMA_TEMPLATE,
    StarterError,
    StarterExists,
    write_starter,
)
from frayproof_audit.toolargs.schemas import ToolSchema
from tests.helpers import run_cli

TOOLS_LINE = f"tools: {SCHEMA_NAME}"


def _folder_state(folder: Path) -> dict[str, Any]:
    """Every entry of `folder` (hidden temporaries included) with what it is."""
    return {entry.name: (os.readlink(entry) if entry.is_symlink() else
                         entry.read_text(encoding="utf-8") if entry.is_file() else "<dir>")
            for entry in folder.iterdir()}


# --- the starter files ---------------------------------------------------------------------

def test_writes_both_files_and_returns_them(tmp_path: Path) -> None:
    written = write_starter(tmp_path)
    assert written.paths == (tmp_path / CONTRACT_NAME, tmp_path / SCHEMA_NAME)
    assert _folder_state(tmp_path) == {CONTRACT_NAME: CONTRACT_TEMPLATE, SCHEMA_NAME: SCHEMA_TEMPLATE}
    mode = (tmp_path / CONTRACT_NAME).stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # an ordinary file, not a private temporary's 0600


def test_the_contract_is_valid_without_its_tools_line() -> None:
    assert TOOLS_LINE in CONTRACT_TEMPLATE
    rest = "\n".join(line for line in CONTRACT_TEMPLATE.splitlines() if not line.startswith("tools:"))
    contract = parse_contract(rest, CONTRACT_NAME)
    assert contract.settings("tool_call_integrity").enabled
    assert [pin.name for pin in contract.pins] == ["system-prompt"]
    assert contract.retain.active


def test_the_contract_loads_with_its_tools_line(tmp_path: Path) -> None:
    """Activates once the contract's `tools:` key exists (tool-schema loading, another branch)."""
    write_starter(tmp_path)
    try:
        contract = load_contract(tmp_path / CONTRACT_NAME)
    except ContractError as exc:
        if "tools: unknown key" in str(exc):
            pytest.skip("the contract's `tools:` key is not implemented yet; this test activates "
                        "when load_contract accepts it")
        raise
    assert [tool.name for tool in contract.tools] == ["get_weather"]


def test_the_schema_is_an_openai_tools_list_the_argument_operators_use(tmp_path: Path) -> None:
    definitions = json.loads(SCHEMA_TEMPLATE)
    [function] = [item["function"] for item in definitions if item["type"] == "function"]
    tools = (ToolSchema(function["name"], function["parameters"]),)
    rest = "\n".join(line for line in CONTRACT_TEMPLATE.splitlines() if not line.startswith("tools:"))
    contract = replace(parse_contract(rest), tools=tools)
    call = {"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"location": "Paris, France", "days": 2}'}}
    session = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"},
               {"role": "assistant", "content": None, "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "call_1", "content": "12 C"},
               {"role": "user", "content": "Thanks"}]
    report = mutate_pair(load_list(session), load_list(session), contract)
    argument = [m for m in report.mutants if m.operator in ("drop_required_argument", "retype_argument")]
    assert [m.sites[0] for m in argument] == [
        "after[2].tool_calls[0].arguments.location", "after[2].tool_calls[0].arguments.location",
        "after[2].tool_calls[0].arguments.days"]
    assert all(m.status == "caught" and "tool_call_integrity" in m.caught_by for m in argument)


# --- refusals: nothing is overwritten, nothing is left behind -------------------------------

def _occupy(folder: Path, name: str, how: str) -> None:
    path = folder / name
    if how == "file":
        path.write_text("mine\n", encoding="utf-8")
    elif how == "dangling symlink":
        path.symlink_to(folder / "nowhere" / "target")
    else:
        path.mkdir()


@pytest.mark.parametrize("name", [CONTRACT_NAME, SCHEMA_NAME])
@pytest.mark.parametrize("how", ["file", "dangling symlink", "folder"])
def test_refuses_when_either_name_is_taken(tmp_path: Path, name: str, how: str) -> None:
    _occupy(tmp_path, name, how)
    state = _folder_state(tmp_path)
    with pytest.raises(StarterExists, match="already exists") as caught:
        write_starter(tmp_path)
    assert caught.value.path == tmp_path / name
    assert _folder_state(tmp_path) == state
    assert not (tmp_path / "nowhere").exists()  # the dangling symlink was never followed


def test_a_name_taken_between_the_check_and_the_link_undoes_the_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race the early check cannot see: `os.link` refuses, and the first link goes."""
    real_link = os.link
    calls: list[str] = []

    def link(source: Any, target: Any) -> None:
        calls.append(Path(target).name)
        if Path(target).name == SCHEMA_NAME:
            Path(target).symlink_to(tmp_path / "nowhere")  # someone else was faster
        real_link(source, target)

    monkeypatch.setattr(os, "link", link)
    with pytest.raises(StarterExists):
        write_starter(tmp_path)
    assert calls == [CONTRACT_NAME, SCHEMA_NAME]
    assert _folder_state(tmp_path) == {SCHEMA_NAME: str(tmp_path / "nowhere")}


def test_a_failing_second_link_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_link = os.link

    def link(source: Any, target: Any) -> None:
        if Path(target).name == SCHEMA_NAME:
            raise OSError(28, "No space left on device")
        real_link(source, target)

    monkeypatch.setattr(os, "link", link)
    with pytest.raises(StarterError, match="No space left on device"):
        write_starter(tmp_path)
    assert _folder_state(tmp_path) == {}


def test_an_unwritable_folder_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def deny(path: Any, *args: Any, **kwargs: Any) -> int:
        if Path(path).parent == tmp_path:
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    with pytest.raises(StarterError, match=r"Cannot write in .*Permission denied"):
        write_starter(tmp_path)
    assert _folder_state(tmp_path) == {}


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs POSIX permissions that apply (root writes anywhere)")
def test_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(StarterError, match="Permission denied"):
            write_starter(folder)
        assert _folder_state(folder) == {}
    finally:
        folder.chmod(0o755)


def test_the_target_must_be_a_folder(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    for target in (tmp_path / "file", tmp_path / "missing"):
        with pytest.raises(StarterError, match="is not a folder"):
            write_starter(target)


# --- the command ----------------------------------------------------------------------------

def test_cli_writes_and_prints_then_refuses(tmp_path: Path) -> None:
    done = run_cli("init", "--dir", tmp_path)
    assert done.stdout == f"Wrote {tmp_path / CONTRACT_NAME}\nWrote {tmp_path / SCHEMA_NAME}\n"
    again = run_cli("init", "--dir", tmp_path, expect=2)
    assert (again.stdout, again.stderr) == (
        "", f"INPUT ERROR: '{tmp_path / CONTRACT_NAME}' already exists: init never overwrites "
            "(remove it or use --dir)\n")


def test_cli_defaults_to_the_current_folder(tmp_path: Path) -> None:
    done = run_cli("init", cwd=tmp_path)
    assert done.stdout == f"Wrote {CONTRACT_NAME}\nWrote {SCHEMA_NAME}\n"
    assert (tmp_path / CONTRACT_NAME).read_text(encoding="utf-8") == CONTRACT_TEMPLATE


def test_real_process_writes(tmp_path: Path) -> None:
    done = run_cli("init", "--dir", tmp_path, real=True)
    assert done.stdout.splitlines() == [f"Wrote {tmp_path / CONTRACT_NAME}",
                                        f"Wrote {tmp_path / SCHEMA_NAME}"]
    assert _folder_state(tmp_path) == {CONTRACT_NAME: CONTRACT_TEMPLATE, SCHEMA_NAME: SCHEMA_TEMPLATE}


def test_real_process_refuses_a_dangling_symlink(tmp_path: Path) -> None:
    (tmp_path / SCHEMA_NAME).symlink_to(tmp_path / "gone.json")
    done = run_cli("init", "--dir", tmp_path, real=True, expect=2)
    assert done.stderr.startswith(f"INPUT ERROR: '{tmp_path / SCHEMA_NAME}' already exists")
    assert done.stdout == ""
    assert not (tmp_path / CONTRACT_NAME).exists() and not (tmp_path / "gone.json").exists()
