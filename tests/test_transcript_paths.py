"""File names and folders of the transcript commands (issue 23, D13 and D11): a name that is not
UTF-8 is written as text that reads back to the same path, in every writer, and a folder that
cannot be listed is a skipped input named in the output (exit 2), never silently left out."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.transcript.sources import path_of, shown_path
from tests.helpers import REPO, run_cli

OK = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
BROKEN = [{"role": "user", "content": "hi"},
          {"role": "assistant", "content": None, "tool_calls": [
              {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]
BAD_NAME = os.fsdecode(b"bad-\xff.json")


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "nd"
    folder.mkdir()
    (folder / BAD_NAME).write_text(json.dumps(BROKEN), encoding="utf-8")
    (folder / "ok.json").write_text(json.dumps(OK), encoding="utf-8")
    return folder


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "frayproof_audit", *args], capture_output=True,
                          cwd=tmp_path, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.mark.parametrize("command", [("repair",), ("compact", "--max-tokens", "100000")])
def test_a_non_utf8_name_is_written_as_text_that_reads_back(tmp_path: Path,
                                                            command: tuple[str, ...]) -> None:
    _folder(tmp_path)
    done = run_cli(*command, "nd", "-o", "x.jsonl", cwd=tmp_path,
                   expect=0 if command[0] == "repair" else 1)
    assert "nd/bad-\\xff.json" in done.stdout + done.stderr  # the account, or the refusal
    data = (tmp_path / "x.jsonl").read_bytes()
    lines = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    sources = [line["source"] for line in lines]
    assert sources == ["nd/bad-\\xff.json", "nd/ok.json"]
    assert [os.fsencode(path_of(source)) for source in sources] == [b"nd/bad-\xff.json",
                                                                    b"nd/ok.json"]
    assert all(os.path.exists(tmp_path / path_of(source)) for source in sources)
    back = run_cli("inspect", "x.jsonl", cwd=tmp_path, expect=None)
    transcripts = sum(line["after"] is not None for line in lines)  # a refused line has none
    assert f"{transcripts} checked, 0 invalid, {2 - transcripts} skipped" in back.stdout
    assert "not valid" not in back.stderr


def test_to_stdout_every_writer_writes_utf8_that_reads_back(tmp_path: Path) -> None:
    _folder(tmp_path)
    repaired = _run(tmp_path, "repair", "nd")
    assert repaired.returncode == 0, repaired.stderr
    text = repaired.stdout.decode("utf-8")
    (tmp_path / "back.jsonl").write_text(text, encoding="utf-8")
    assert [json.loads(line)["source"] for line in text.splitlines()] == [
        "nd/bad-\\xff.json", "nd/ok.json"]
    assert "nd/bad-\\xff.json" in repaired.stderr.decode("utf-8")
    back = _run(tmp_path, "inspect", "back.jsonl")
    assert back.returncode == 0 and b"2 checked, 0 invalid, 0 skipped" in back.stdout, back.stdout
    inspected = _run(tmp_path, "inspect", "nd")
    assert inspected.returncode == 1 and "FAIL  nd/bad-\\xff.json" in inspected.stdout.decode("utf-8")
    listed = json.loads(_run(tmp_path, "inspect", "nd", "--format", "json").stdout.decode("utf-8"))
    assert path_of(listed["inputs"][0]["input"]) == os.fsdecode(b"nd/bad-\xff.json")


def test_a_lone_non_utf8_file_is_repaired_to_a_non_utf8_output(tmp_path: Path) -> None:
    _folder(tmp_path)
    target = os.fsdecode(b"out-\xfe.json")
    done = _run(tmp_path, "repair", os.path.join("nd", BAD_NAME), "-o", target)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / target).read_text(encoding="utf-8"))[2]["role"] == "tool"
    assert "nd/bad-\\xff.json: 1 change(s)" in done.stdout.decode("utf-8")


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=12).filter(lambda raw: b"\0" not in raw))
def test_shown_paths_turn_back_into_the_same_bytes(raw: bytes) -> None:
    path = os.fsdecode(raw)
    shown = shown_path(path)
    shown.encode("utf-8")  # valid text
    assert os.fsencode(path_of(shown)) == raw
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    if b"\\x" not in raw:
        assert shown == path  # an ordinary name is written as it is


UNLISTABLE = """
import os, sys
real = os.scandir
def scandir(path="."):
    if os.path.basename(os.fspath(path)) == "locked":
        raise PermissionError(13, "Permission denied", os.fspath(path))
    return real(path)
os.scandir = scandir
from frayproof_audit.cli import main
sys.argv = ["frayproof-audit", *sys.argv[1:]]
main()
"""


def _logs(tmp_path: Path) -> None:
    (tmp_path / "logs" / "locked").mkdir(parents=True)
    (tmp_path / "logs" / "locked" / "hidden.json").write_text(json.dumps(OK), encoding="utf-8")
    (tmp_path / "logs" / "a.json").write_text(json.dumps(OK), encoding="utf-8")


@pytest.mark.parametrize("command", ["inspect", "repair"])
def test_a_folder_that_cannot_be_listed_is_named_and_fails_the_run(tmp_path: Path,
                                                                  command: str) -> None:
    _logs(tmp_path)
    done = subprocess.run([sys.executable, "-c", UNLISTABLE, command, "logs"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2, done.stderr
    assert "skip  logs/locked: cannot list this folder: Permission denied" in done.stderr
    if command == "inspect":
        assert "1 checked, 0 invalid, 1 skipped" in done.stdout
    else:
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        assert [(line["source"], line["status"]) for line in lines] == [
            ("logs/a.json", "unchanged"), ("logs/locked", "skipped")]


def test_an_unlistable_folder_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _logs(tmp_path)
    real = os.scandir

    def scandir(path: str = ".") -> object:
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    done = run_cli("compact", "logs", "--max-tokens", "1000", cwd=tmp_path, expect=2)
    assert "skip  logs/locked: cannot list this folder: Permission denied" in done.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists every folder: the simulated tests cover it")
def test_a_folder_without_permissions_is_named(tmp_path: Path) -> None:
    _logs(tmp_path)
    (tmp_path / "logs" / "locked").chmod(0)
    try:
        done = run_cli("inspect", "logs", cwd=tmp_path, expect=2)
    finally:
        (tmp_path / "logs" / "locked").chmod(stat.S_IRWXU)
    assert "logs/locked: cannot list this folder" in done.stderr
