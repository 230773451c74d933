"""Ctrl-C reaches every process of the terminal's process group, the workers included (loky's, and
those of the Dask `LocalCluster` that `--scheduler local` starts): the parent owns the
interruption (it stops the workers, removes its staging folder, exits 130), and no worker prints
a traceback, whether it is starting, importing the engine or auditing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from frayproof_audit.corpus.store.layout import STAGING
from frayproof_audit.report import EXIT_INTERRUPTED
from tests.corpus_support import good_lines, write_contract, write_jsonl
from tests.helpers import REPO
from tests.worker_faults import child_pids


def _workers(pid: int) -> list[int]:
    """Children of `pid` that are loky or Dask workers (any state of their start-up)."""
    return child_pids(pid, b"popen_loky_posix", b"spawn_main")


def _staged(out: Path) -> bool:
    return any((out / STAGING).glob("*/**/*.parquet"))


MOMENTS: dict[str, Callable[[subprocess.Popen[str], Path], bool]] = {
    # a worker was just spawned: the interpreter starts and imports loky and joblib (or Dask)
    "spawned": lambda process, _: bool(_workers(process.pid)),
    # 0.35 s later: a worker imports the engine (in loky's initializer, `start_worker`)
    "starting": lambda process, _: bool(_workers(process.pid)),
    # a shard is staged: workers are auditing the next ones
    "mid-run": lambda _, out: _staged(out),
}
AFTER = {"spawned": 0.0, "starting": 0.35, "mid-run": 0.0}
BACKENDS = {"loky": ("--backend", "loky"), "dask": ("--backend", "dask", "--scheduler", "local")}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("interrupt")
    data = write_jsonl(folder / "in" / "night.jsonl", good_lines(300))  # about 6 s with two workers
    return data, write_contract(folder)


@pytest.mark.parametrize(("backend", "moment"), [
    *(("loky", moment) for moment in MOMENTS), ("dask", "starting"), ("dask", "mid-run"),
])
def test_ctrl_c_to_the_process_group_exits_130_without_a_worker_traceback(
    tmp_path: Path, corpus: tuple[Path, Path], backend: str, moment: str
) -> None:
    # repro (issue 23, D18): a loky worker's KeyboardInterrupt traceback on stderr (in the
    # engine import of `start_worker`, or in joblib's import before it), 2 of 3 trials
    data, contract = corpus
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "frayproof_audit", "audit", str(data), "--contract", str(contract), "--out",
         str(out), *BACKENDS[backend], "--jobs", "2", "--shard-bytes", "20000", "--fail-on", "none", "-q"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not MOMENTS[moment](process, out) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(AFTER[moment])
        assert process.poll() is None, "the run ended before the moment to interrupt it"
        workers = _workers(process.pid)
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == EXIT_INTERRUPTED, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert stderr.strip().splitlines() == [stderr.strip()] and stderr.startswith(
        "INTERRUPTED: stopped by Ctrl-C; run "), stderr
    assert stdout == ""
    assert not (out / "runs").exists() or not any((out / "runs").iterdir())
    assert not (out / STAGING).exists() or [p.name for p in (out / STAGING).iterdir()] == []
    assert workers and _gone_within(workers, 10) == []  # they ignore Ctrl-C: the parent stopped them


def _gone_within(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := [pid for pid in pids if _alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
