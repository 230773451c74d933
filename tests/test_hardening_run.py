"""A nightly job you can trust (issue 8), the run side: every exit code means one thing, nothing
audited never passes, paths are local paths, a bug costs one record, the machine's faults are
one-line messages, and no process or staging folder outlives a run.

Each behaviour is checked through the real CLI in a subprocess; faults are injected from the test
side by `tests/fault_run.py` (production code has no hooks).
"""

from __future__ import annotations

import fcntl
import gzip
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq
import pytest

from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.dataset.checked_files import DatasetChanged, committed_files
from frayproof_audit.corpus.store.layout import LOCK, LOGS_FOLDER, STAGING
from frayproof_audit.corpus.store.parquet_files import read_handle
from frayproof_audit.report import (
    EXIT_FAIL,
    EXIT_INPUT_ERROR,
    EXIT_INTERNAL_ERROR,
    EXIT_INTERRUPTED,
    EXIT_PASS,
    EXIT_TERMINATED,
)
from tests import fault_run
from tests.corpus_support import good_lines, line, record, write_contract, write_jsonl, write_parquet
from tests.helpers import EXAMPLES, REPO, run_cli


def passing(count: int, start: int = 0) -> list[bytes]:
    """Records that pass the test contract (the keep_all compactor)."""
    return good_lines(count, start=start, compactor="keep_all")


def audit_cli(inputs: Path | str, out: Path | str, contract: Path, *extra: str, expect: int | None,
              cwd: Path = REPO) -> tuple[int, str, str]:
    result = run_cli("audit", str(inputs), "--contract", str(contract), "--out", str(out), "-j", "1",
                     *extra, expect=expect, real=True, cwd=cwd)
    return result.exit_code, result.stdout, result.stderr


def fault(name: str, *args: str | Path, env: dict[str, str] | None = None,
          timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.fault_run", name, *map(str, args)],
        cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False,
        env={**os.environ, **(env or {})},
    )


def one_line(stderr: str) -> str:
    """The command's stderr, asserted to be exactly one line and no traceback."""
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip("\n").splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def leftovers(out: Path) -> list[str]:
    """Whatever a run left behind that is not a committed dataset: staging folders, locks, part
    files no `runs` row lists."""
    found = [p.name for p in (out / STAGING).iterdir()] if (out / STAGING).is_dir() else []
    listed = {f for t in ("pairs", "findings", "mutants") for f in committed_files(out, t)} if (
        (out / "runs").is_dir()) else set()
    found += [str(p) for p in out.glob("*/log_date=*/*.parquet") if str(p) not in listed]
    return found


@pytest.fixture
def contract(tmp_path: Path) -> Path:
    return write_contract(tmp_path)


# --- 1. A run that audited nothing never passes ------------------------------------------------

@pytest.mark.parametrize("gates", [(), ("--fail-on", "none")], ids=["default", "fail-on-none"])
def test_an_empty_input_is_nothing_audited_exit_2_and_still_committed(
    tmp_path: Path, contract: Path, gates: tuple[str, ...]
) -> None:
    # repro: an empty file → "0 pairs audited … PASS", exit 0
    empty = write_jsonl(tmp_path / "empty.jsonl", [])
    _, stdout, _ = audit_cli(empty, tmp_path / "out", contract, "--run-id", "r", *gates,
                             expect=EXIT_INPUT_ERROR)
    assert stdout.splitlines()[-1] == "NOTHING AUDITED: no pair could be checked (the inputs hold no record)"
    (run,) = read_table(tmp_path / "out", "runs").collect().to_dicts()
    assert (run["run_id"], run["pairs"]) == ("r", 0)


def test_every_record_an_input_error_is_nothing_audited(tmp_path: Path, contract: Path) -> None:
    # repro: gzip bytes in a `.jsonl` → 322 input errors, PASS, exit 0
    data = gzip.compress(b"".join(passing(40)))
    (tmp_path / "gz.jsonl").write_bytes(data)
    _, stdout, _ = audit_cli(tmp_path / "gz.jsonl", tmp_path / "out", contract, "--fail-on", "none",
                             "--format", "json", expect=EXIT_INPUT_ERROR)
    summary = json.loads(stdout)
    assert summary["nothing_audited"] and summary["exit_code"] == EXIT_INPUT_ERROR
    assert summary["pairs"] == summary["input_errors"] > 0
    # repro: every record missing `before` (the fields live elsewhere)
    moved = [line({**(rec := record(i, "keep_all")), "before": None} | {"request": rec["before"]})
             for i in range(30)]
    write_jsonl(tmp_path / "moved.jsonl", moved)
    _, stdout, _ = audit_cli(tmp_path / "moved.jsonl", tmp_path / "out2", contract,
                             expect=EXIT_INPUT_ERROR)
    assert stdout.splitlines()[-1].startswith("NOTHING AUDITED: no pair could be checked (30 input error(s))")


def test_the_docs_python_example_with_a_wrong_field_map_is_nothing_audited(tmp_path: Path) -> None:
    # repro: docs/audit.md's example with fields={"before": "request.messages"} → 83/83 input errors, PASS
    summary = audit([str(EXAMPLES / "corpus")], str(EXAMPLES / "audit_contract.yaml"), str(tmp_path / "o"),
                    jobs=1, mutate=False, fields={"before": "request.messages"}, fail_on=("none",))
    assert summary.nothing_audited and summary.exit_code == EXIT_INPUT_ERROR


@pytest.mark.parametrize(
    ("bad", "extra", "code"),
    [
        (1, (), EXIT_PASS),  # a truncated last line among 20: not a broken audit
        (1, ("--fail-on", "input-errors"), EXIT_FAIL),  # any input error, as documented
        (12, (), EXIT_FAIL),  # 12 of 20: most of the log unreadable
        (12, ("--max-input-error-rate", "0.7"), EXIT_PASS),
        (12, ("--fail-on", "none"), EXIT_PASS),
        (5, ("--max-input-error-rate", "0.2"), EXIT_FAIL),
    ],
    ids=["truncated-last-line", "fail-on-input-errors", "mostly-bad", "rate-raised", "fail-on-none",
         "rate-lowered"],
)
def test_the_input_error_rate_gate(
    tmp_path: Path, contract: Path, bad: int, extra: tuple[str, ...], code: int
) -> None:
    lines = passing(20 - bad) + [b'{"before": [' + b"\n"] * (bad - 1) + [line(record(99, "keep_all"))[:50]]
    write_jsonl(tmp_path / "live.jsonl", lines)
    _, stdout, _ = audit_cli(tmp_path / "live.jsonl", tmp_path / "out", contract, "--no-mutate", *extra,
                             expect=code)
    verdict = stdout.splitlines()[-1]
    assert verdict == "PASS" if code == EXIT_PASS else verdict.startswith("FAIL: ")
    if code == EXIT_FAIL and "--fail-on" not in extra:
        assert "input-error rate" in verdict and "--max-input-error-rate" in verdict


# --- 3. Paths are paths -------------------------------------------------------------------------

def test_a_relative_out_with_a_colon_is_a_local_folder(tmp_path: Path, contract: Path) -> None:
    # repro: --out audit:2025-06-02 → pyarrow ArrowInvalid "Unrecognized filesystem type in URI"
    data = write_jsonl(tmp_path / "a.jsonl", passing(6))
    for name in ("audit:2025-06-02", "hdfs:x"):
        audit_cli(data, name, contract, expect=EXIT_PASS, cwd=tmp_path)
        assert read_table(tmp_path / name, "pairs").collect().height == 6
        stats = run_cli("stats", name, "--format", "json", real=True, cwd=tmp_path)
        assert json.loads(stats.stdout)["runs"] == 1
    run_cli("stats", "audit:2025-06-02", "--format", "parquet", "--output", "s:1.parquet",
            real=True, cwd=tmp_path)
    assert pl.read_parquet(tmp_path / "s:1.parquet").height > 0
    # repro: `stats audit:abs` → traceback
    result = run_cli("stats", "audit:abs", real=True, cwd=tmp_path, expect=EXIT_INPUT_ERROR)
    assert one_line(result.stderr) == "INPUT ERROR: 'audit:abs' is not a folder"


@pytest.mark.parametrize("uri", ["gs://b/audit", "nope://b"])
def test_an_unusable_uri_out_is_one_line_exit_2_and_nothing_is_created(
    tmp_path: Path, contract: Path, uri: str
) -> None:
    # repro: --out s3://bucket/audit → traceback and a local ./s3:/bucket/audit/.frayproof-audit.lock
    data = write_jsonl(tmp_path / "in" / "a.jsonl", passing(3))
    before = sorted(tmp_path.rglob("*"))
    scheme = uri.split(":")[0]
    _, _, stderr = audit_cli(data, uri, contract, expect=EXIT_INPUT_ERROR, cwd=tmp_path)
    assert one_line(stderr).startswith(f"OUTPUT ERROR: cannot use {scheme}:// URIs")
    result = run_cli("stats", uri, real=True, cwd=tmp_path, expect=EXIT_INPUT_ERROR)
    assert f"cannot use {scheme}:// URIs" in one_line(result.stderr)
    assert sorted(tmp_path.rglob("*")) == before


def test_a_file_uri_out_is_the_local_folder(tmp_path: Path, contract: Path) -> None:
    data = write_jsonl(tmp_path / "in" / "a.jsonl", passing(3))
    audit_cli(data, f"file://{tmp_path}/out", contract, expect=EXIT_PASS, cwd=tmp_path)
    assert committed_files(tmp_path / "out", "runs") != []


# --- 4. Exit codes mean one thing each ------------------------------------------------------------

def test_a_bug_in_audit_exits_123_with_a_crash_log_under_out(tmp_path: Path, contract: Path) -> None:
    data = write_jsonl(tmp_path / "a.jsonl", passing(4))
    out = tmp_path / "out"
    done = fault("crash-commit", "audit", data, "--contract", contract, "--out", out, "-j", "1",
                 "--run-id", "night-1")
    assert done.returncode == EXIT_INTERNAL_ERROR, done.stderr
    log = out / LOGS_FOLDER / "crash-night-1.log"
    assert one_line(done.stderr) == (
        "INTERNAL ERROR: RuntimeError: injected bug in the parent (a bug in frayproof-audit;"
        f" the traceback is in {log})")
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "injected bug in the parent" in text
    assert not (out / "runs").exists() or not list((out / "runs").iterdir())
    assert leftovers(out) == []


def test_a_bug_in_a_command_without_out_logs_to_the_temp_folder(tmp_path: Path) -> None:
    done = fault("crash-validate", "validate", "--snapshot", REPO / "fixtures" / "clean_session.json",
                 env={"TMPDIR": str(tmp_path)})
    assert done.returncode == EXIT_INTERNAL_ERROR
    (log,) = tmp_path.glob("frayproof-audit-crash-*.log")
    assert one_line(done.stderr).endswith(f"(a bug in frayproof-audit; the traceback is in {log})")
    assert "injected bug in validate" in log.read_text()


def test_a_corrupt_parquet_input_is_an_input_error_not_the_end_of_the_run(
    tmp_path: Path, contract: Path
) -> None:
    folder = tmp_path / "in"
    write_jsonl(folder / "a.jsonl", passing(5))
    (folder / "magic.parquet").write_bytes(b"this is not parquet at all" * 10)
    good = write_parquet(folder / "cut.parquet", [record(i, "keep_all") for i in range(4)])
    good.write_bytes(good.read_bytes()[:-20])  # the footer cut off
    _, stdout, _ = audit_cli(folder, tmp_path / "out", contract, "--format", "json", expect=EXIT_PASS)
    assert json.loads(stdout)["input_errors"] == 2
    pairs = read_table(tmp_path / "out", "pairs").filter(pl.col("status") == "input_error").collect()
    assert sorted(Path(s).name for s in pairs["source"]) == ["cut.parquet", "magic.parquet"]
    assert all("cannot read the Parquet file" in r for r in pairs["input_error"])


# --- 5. One engine bug costs one record -----------------------------------------------------------

def _boom_corpus(tmp_path: Path) -> Path:
    lines = passing(12)
    lines[5] = line(record(5, "keep_all") | {"after": [*record(5, "keep_all")["after"][:-1],
                                                    {"role": "user", "content": fault_run.BOOM}]})
    return write_jsonl(tmp_path / "a.jsonl", lines)


@pytest.mark.parametrize(
    ("extra", "code"),
    [((), EXIT_FAIL), (("--fail-on", "none"), EXIT_FAIL), (("--allow-engine-errors",), EXIT_PASS)],
    ids=["default", "fail-on-none-does-not-cover-it", "allowed"],
)
def test_an_engine_bug_costs_one_record_in_a_subprocess(
    tmp_path: Path, contract: Path, extra: tuple[str, ...], code: int
) -> None:
    data = _boom_corpus(tmp_path)
    out = tmp_path / "out"
    done = fault("engine-bug", "audit", data, "--contract", contract, "--out", out, "-j", "2",
                 "--backend", "loky", "--shard-bytes", "4000", "--format", "json", *extra)
    assert done.returncode == code, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["pairs"], summary["passed"], summary["engine_errors"]) == (12, 11, 1)
    assert summary["not_audited"] == []
    (sample,) = summary["engine_error_samples"]
    assert sample.startswith(f"{data} line 6: RuntimeError: injected engine bug (at ")
    (row,) = read_table(out, "pairs").filter(pl.col("status") == "engine_error").collect().to_dicts()
    assert row["engine_error"] == sample and row["source_row"] == 6
    assert read_table(out, "runs").collect()["engine_errors"].to_list() == [1]


def test_an_engine_bug_in_process_keeps_the_rest_of_the_shard(
    tmp_path: Path, contract: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import frayproof_audit.checks as registry

    monkeypatch.setattr(registry, "CHECKS", registry.CHECKS)
    fault_run.install_engine_bug()
    monkeypatch.delattr(registry, "_fault_run_installed")
    summary = audit([str(_boom_corpus(tmp_path))], str(contract), str(tmp_path / "out"), jobs=1)
    assert (summary.passed, summary.engine_errors, summary.exit_code) == (11, 1, EXIT_FAIL)
    assert "engine_error 1" in summary.to_text()
    assert "in find" in summary.engine_error_samples[0]
    pairs = read_table(tmp_path / "out", "pairs").collect()
    assert pairs.height == 12
    mutants = read_table(tmp_path / "out", "mutants").collect()
    assert pairs.filter(pl.col("status") == "engine_error")["pair_id"][0] not in set(mutants["pair_id"])


def test_a_corrupt_row_group_is_one_input_error_per_row(tmp_path: Path, contract: Path) -> None:
    path = write_parquet(tmp_path / "rg.parquet", [record(i, "keep_all") for i in range(12)],
                         row_group_size=4)
    group = pq.ParquetFile(str(path)).metadata.row_group(1)
    data = bytearray(path.read_bytes())
    for index in range(group.num_columns):
        column = group.column(index)
        start = column.dictionary_page_offset or column.data_page_offset
        data[start : start + 32] = b"\xff" * 32
    path.write_bytes(bytes(data))
    _, stdout, _ = audit_cli(path, tmp_path / "out", contract, "--format", "json", expect=EXIT_PASS)
    assert (json.loads(stdout)["passed"], json.loads(stdout)["input_errors"]) == (8, 4)
    bad = read_table(tmp_path / "out", "pairs").filter(pl.col("status") == "input_error").collect()
    assert bad["source_row"].to_list() == [4, 5, 6, 7]
    assert all(reason.startswith(f"{path} row ") and "cannot read row group 1" in reason
               for reason in bad["input_error"])


# --- 10. Faults of the machine are messages --------------------------------------------------------

@pytest.mark.parametrize(("name", "jobs"), [("enospc-runs", "1"), ("enospc-empty", "1"),
                                            ("enospc-marker", "1"), ("enospc-marker", "2")])
def test_a_full_disk_is_one_line_exit_2_and_nothing_partial(
    tmp_path: Path, contract: Path, name: str, jobs: str
) -> None:
    data = write_jsonl(tmp_path / "a.jsonl", passing(6))
    out = tmp_path / "out"
    done = fault(name, "audit", data, "--contract", contract, "--out", out, "-j", jobs, "--no-mutate",
                 "--shard-bytes", "3000")
    assert done.returncode == EXIT_INPUT_ERROR, done.stderr
    message = one_line(done.stderr)
    assert message.startswith("OUTPUT ERROR: ") and "No space left on device" in message
    assert "nothing was committed" in message
    assert committed_files(out, "runs") == [] and leftovers(out) == []


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs (we run as root in CI); skipped where it cannot be mounted."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_an_audit_into_a_disk_that_fills_up(tmp_path: Path, contract: Path, small_disk: Path) -> None:
    # long random pair ids: the pairs table cannot be compressed below the disk's 2 MiB
    lines = [line(record(i, "keep_all") | {"pair_id": os.urandom(1000).hex()}) for i in range(4000)]
    data = write_jsonl(tmp_path / "big.jsonl", lines)
    out = small_disk / "out"
    _, _, stderr = audit_cli(data, out, contract, "--no-mutate", expect=EXIT_INPUT_ERROR)
    message = one_line(stderr)
    assert message.startswith("OUTPUT ERROR: ") and "No space left on device" in message
    assert committed_files(out, "runs") == [] and leftovers(out) == []


def _damaged(tmp_path: Path, contract: Path) -> Path:
    out = tmp_path / "out"
    audit([str(write_jsonl(tmp_path / "a.jsonl", passing(6)))], str(contract), str(out), jobs=1,
          run_id="r1")
    return out


def test_stats_on_a_damaged_dataset_names_the_file(tmp_path: Path, contract: Path) -> None:
    out = _damaged(tmp_path, contract)
    part = Path(committed_files(out, "pairs")[0])
    part.write_bytes(part.read_bytes()[:100])  # truncated
    result = run_cli("stats", out, real=True, expect=EXIT_INPUT_ERROR)
    assert one_line(result.stderr).startswith(
        f"INPUT ERROR: damaged dataset: cannot read '{part}' (run 'r1')")
    part.unlink()  # a file the runs row lists is missing
    result = run_cli("stats", out, real=True, expect=EXIT_INPUT_ERROR)
    assert one_line(result.stderr) == (
        f"INPUT ERROR: damaged dataset: run 'r1' lists '{part}', which is missing")
    runs = out / "runs" / "part-r1.parquet"
    runs.write_bytes(b"")  # a 0-byte runs file
    result = run_cli("stats", out, real=True, expect=EXIT_INPUT_ERROR)
    assert one_line(result.stderr).startswith(f"INPUT ERROR: damaged dataset: cannot read '{runs}'")


class _ThreadSpy(io.FileIO):
    """A file that records which threads read it."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "rb")
        self.readers: set[int] = set()

    def read(self, size: int = -1, /) -> bytes:
        self.readers.add(threading.get_ident())
        return super().read(size)

    def readinto(self, buffer: Any, /) -> int | None:
        self.readers.add(threading.get_ident())
        return super().readinto(buffer)


def test_reading_a_parquet_file_object_leaves_no_arrow_thread_holding_it(
        tmp_path: Path, contract: Path) -> None:
    # pq.read_table reads a Python file on Arrow's I/O threads too, and their read-ahead can
    # still hold its buffers after the call returns; an error exit right after such a read then
    # aborted ("terminate called without an active exception"). read_handle reads only here.
    out = _damaged(tmp_path, contract)
    with _ThreadSpy(out / "runs" / "part-r1.parquet") as spy:
        table = read_handle(spy, ["run_id", "files"])
    assert table.column_names == ["run_id", "files"] and table.num_rows == 1
    assert spy.readers == {threading.get_ident()}


_EXIT_RIGHT_AFTER_A_SLOW_READ = """
import io, sys, threading, time
from frayproof_audit.corpus.store.parquet_files import read_handle
caller = threading.get_ident()

class Slow(io.FileIO):
    def readinto(self, buffer):
        if threading.get_ident() != caller:  # an Arrow thread: still reading when we exit
            time.sleep(0.1)
        return super().readinto(buffer)

with Slow(sys.argv[1], "rb") as handle:
    read_handle(handle, ["files"])
sys.exit(2)
"""


def test_an_error_exit_right_after_reading_a_parquet_file_object_does_not_abort(
        tmp_path: Path, contract: Path) -> None:
    # With pq.read_table this aborted nearly every time ("terminate called without an active
    # exception", exit -6): an Arrow thread still held the file's buffers at interpreter exit.
    out = _damaged(tmp_path, contract)
    done = subprocess.run([sys.executable, "-c", _EXIT_RIGHT_AFTER_A_SLOW_READ,
                           str(out / "runs" / "part-r1.parquet")],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (2, "")


def test_stats_parquet_output_into_a_missing_or_read_only_folder(tmp_path: Path, contract: Path) -> None:
    out = _damaged(tmp_path, contract)
    target = tmp_path / "missing" / "s.parquet"
    result = run_cli("stats", out, "--format", "parquet", "--output", target, real=True,
                     expect=EXIT_INPUT_ERROR)
    assert one_line(result.stderr) == f"INPUT ERROR: cannot write '{target}': No such file or directory"
    read_only = tmp_path / "ro"
    read_only.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(read_only)],
                      capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot mount a read-only tmpfs here")
    try:
        for fmt in ("parquet", "csv"):
            result = run_cli("stats", out, "--format", fmt, "--output", read_only / "s", real=True,
                             expect=EXIT_INPUT_ERROR)
            assert "Read-only file system" in one_line(result.stderr)
    finally:
        subprocess.run(["umount", "-l", str(read_only)], check=False)


# --- 11. No orphans; Ctrl-C and SIGTERM clean up ---------------------------------------------------

def _parents() -> dict[int, int]:
    """pid → parent pid of every live (non-zombie) process, from /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state != "Z":
            found[int(entry.name)] = int(ppid)
    return found


def _descendants(pid: int) -> set[int]:
    parents = _parents()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    return pids & set(_parents())


def _paused_audit(tmp_path: Path, contract: Path) -> tuple[subprocess.Popen[str], Path, set[int]]:
    """An audit with two loky workers, its parent paused after the first shard; returns the
    process, OUT and the pids of its workers (and loky's helpers)."""
    data = write_jsonl(tmp_path / "big.jsonl", passing(400))
    out = tmp_path / "out-unique-7f3a"
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fault_run", "pause", "audit", str(data), "--contract",
         str(contract), "--out", str(out), "-j", "2", "--backend", "loky", "--shard-bytes", "20000",
         "-q"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    return process, out, _workers_once(process, fault_run.PAUSE_LINE)


def _workers_once(process: subprocess.Popen[str], line: str) -> set[int]:
    """Wait for `line` on the process's stderr, then return its descendants (it is killed if
    that fails, so no test leaves it behind)."""
    assert process.stderr is not None
    seen = []
    try:
        for text in process.stderr:
            if line in text:
                break
            seen.append(text)
        else:
            pytest.fail(f"the process ended before {line!r}: exit {process.wait()}\n{''.join(seen)}")
        workers = _descendants(process.pid)
        assert len(workers) >= 2, workers
    except BaseException:
        process.kill()
        process.wait()
        raise
    return workers


def _gone_within(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return _alive(pids)


def test_workers_exit_when_the_parent_is_killed(tmp_path: Path, contract: Path) -> None:
    # repro: after SIGKILL of the parent, loky workers stayed alive > 30 s in 16 of 28 trials
    process, out, workers = _paused_audit(tmp_path, contract)
    process.kill()
    process.wait(timeout=30)
    assert _gone_within(workers, 10) == set()
    mentioning = [pid for pid in _parents() if str(out) in _cmdline(pid) or (
        "loky" in _cmdline(pid) and pid in workers)]
    assert mentioning == []


def test_idle_workers_exit_when_the_parent_is_killed() -> None:
    """A pool of two with one task: one worker never runs anything and must still go."""
    process = subprocess.Popen([sys.executable, "-m", "tests.fault_run", "idle-pool"], cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    workers = _workers_once(process, fault_run.POOL_READY)
    process.kill()
    process.wait(timeout=30)
    assert _gone_within(workers, 10) == set()


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.parametrize(("signum", "code", "name"), [
    (signal.SIGTERM, EXIT_TERMINATED, "SIGTERM"), (signal.SIGINT, EXIT_INTERRUPTED, "Ctrl-C"),
])
def test_sigterm_and_ctrl_c_clean_up_and_exit_143_or_130(
    tmp_path: Path, contract: Path, signum: int, code: int, name: str
) -> None:
    # repro: SIGTERM left _staging and 4 orphans behind
    process, out, workers = _paused_audit(tmp_path, contract)
    process.send_signal(signum)
    assert process.wait(timeout=30) == code
    assert process.stderr is not None
    rest = process.stderr.read()
    assert one_line(rest).startswith(f"INTERRUPTED: stopped by {name}; run ")
    assert _gone_within(workers, 10) == set()
    assert leftovers(out) == [] and committed_files(out, "runs") == []
    with open(out / LOCK, "ab") as handle:  # the dataset lock is free
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_a_frame_collected_after_its_run_was_replaced_says_so(tmp_path: Path, contract: Path) -> None:
    out = _damaged(tmp_path, contract)
    frame = read_table(out, "pairs")
    assert frame.filter(pl.col("status") == "pass").select("pair_id").collect().height == 6
    audit([str(write_jsonl(tmp_path / "b.jsonl", passing(3, start=50)))], str(contract), str(out),
          jobs=1, run_id="r1")
    with pytest.raises(DatasetChanged, match=r"run 'r1' was replaced or deleted .* read_table\(\) again"):
        frame.collect()
    assert read_table(out, "pairs").collect().height == 3

