"""`-o` of `repair`, `compact` and `report` writes through what the path names: a regular file
is replaced atomically, a symbolic link's target is written (atomically, where the target
is), and a FIFO or device is opened and written; none of them is ever replaced by a regular
file (issue 23, D5). No test touches a real /dev file: devices are made with `os.mknod` in a
temporary folder, where that is permitted."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from frayproof_audit.files import write_through
from tests.helpers import FIXTURES, REPO, CliResult, run_cli

OK = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
DATASET = REPO / "tests" / "data" / "v1" / "example-dataset"


def _repair(tmp_path: Path, target: Path, real: bool = False, expect: int = 0) -> CliResult:
    source = tmp_path / "ok.json"
    source.write_text(json.dumps(OK), encoding="utf-8")
    return run_cli("repair", source, "-o", target, expect=expect, real=real)


def _compact(tmp_path: Path, target: Path, real: bool = False, expect: int = 1) -> CliResult:
    # The broken fixtures are each refused (exit 1); their JSONL lines are written all the same.
    return run_cli("compact", FIXTURES / "transcripts", "--max-tokens", "100000", "-o", target,
                   expect=expect, real=real)


def _report(tmp_path: Path, target: Path, real: bool = False, expect: int = 0) -> CliResult:
    return run_cli("report", DATASET, "-o", target, expect=expect, real=real)


Command = Callable[..., CliResult]
COMMANDS: dict[str, tuple[Command, Callable[[str], bool]]] = {
    "repair": (_repair, lambda text: json.loads(text) == OK),
    "compact": (_compact, lambda text: len(text.splitlines()) == 4
                and all(json.loads(line)["status"] == "refused" for line in text.splitlines())),
    "report": (_report, lambda text: text.startswith("<!DOCTYPE html>")),
}


def _temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("name", COMMANDS)
def test_a_regular_file_is_replaced_whole(tmp_path: Path, name: str) -> None:
    command, good = COMMANDS[name]
    target = tmp_path / "out"
    target.write_text("old contents, longer than nothing\n" * 100, encoding="utf-8")
    command(tmp_path, target)
    assert good(target.read_text(encoding="utf-8")) and not _temporaries(tmp_path)


@pytest.mark.parametrize("name", COMMANDS)
def test_a_symlink_is_written_through_to_its_target(tmp_path: Path, name: str) -> None:
    command, good = COMMANDS[name]
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out"
    target.write_text("old\n", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(Path("real") / "out")
    command(tmp_path, link)
    assert link.is_symlink() and os.readlink(link) == os.path.join("real", "out")
    assert good(target.read_text(encoding="utf-8"))
    assert not _temporaries(tmp_path) and not _temporaries(tmp_path / "real")


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to("made.json")
    _repair(tmp_path, link)
    assert link.is_symlink() and json.loads((tmp_path / "made.json").read_text()) == OK


@pytest.mark.parametrize("name", COMMANDS)
def test_a_fifo_is_written_into_and_stays_a_fifo(tmp_path: Path, name: str) -> None:
    command, good = COMMANDS[name]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as handle:
            received.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        command(tmp_path, fifo, real=True)
    finally:
        reader.join(timeout=30)
        if reader.is_alive():  # the command replaced the FIFO: unblock the reader before failing
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            reader.join(timeout=5)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received and good(received[0].decode("utf-8"))
    assert not _temporaries(tmp_path)


def _device(tmp_path: Path, name: str, minor: int) -> Path:
    """A character device node (1, `minor`) in `tmp_path`: 3 is null, 7 is full. Skips where
    nodes cannot be made (not root) or not opened (a `nodev` mount)."""
    node = tmp_path / name
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, minor))
        os.close(os.open(node, os.O_WRONLY))
    except PermissionError:
        pytest.skip("character devices cannot be made or opened here (needs root, no nodev)")
    return node


@pytest.mark.parametrize("name", COMMANDS)
def test_a_character_device_is_written_through_and_stays_a_device(tmp_path: Path,
                                                                   name: str) -> None:
    command, _ = COMMANDS[name]
    null = _device(tmp_path, "mynull", 3)
    command(tmp_path, null)
    assert stat.S_ISCHR(os.lstat(null).st_mode) and not _temporaries(tmp_path)


def test_a_full_device_is_an_output_error_and_stays_a_device(tmp_path: Path) -> None:
    full = _device(tmp_path, "myfull", 7)
    done = _repair(tmp_path, full, expect=2)
    assert "cannot write" in done.stderr and "No space left on device" in done.stderr
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    done = _report(tmp_path, full, expect=2)
    assert "No space left on device" in done.stderr and stat.S_ISCHR(os.lstat(full).st_mode)


def test_write_through_refuses_a_folder_and_leaves_it(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        write_through(str(tmp_path), b"x")
    assert tmp_path.is_dir() and not _temporaries(tmp_path)
