"""`audit --incremental`: what counts as already audited, scenario by scenario, through the CLI.

Each test is one row of the scenario table in docs/audit.md ("Incremental runs"), and
`test_every_scenario_in_the_docs_has_its_test` keeps the two in step. The invariant behind them:
after every incremental run, every complete record of the inputs is in `pairs` exactly once.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import frayproof_audit.corpus.run.audit_run as corpus_run
from frayproof_audit.corpus import read_table
from frayproof_audit.corpus.run.worker import ShardResult, ShardTask, audit_shard
from frayproof_audit.corpus.store.layout import RUNS_FOLDER, runs_name
from tests.corpus_support import good_lines, line, record, write_contract, write_jsonl
from tests.fault_entry import PAUSE_LINE
from tests.helpers import EXAMPLES, REPO, run_cli

NIGHT = EXAMPLES / "corpus" / "2025-06-02" / "compactions.jsonl"
AUDIT_CONTRACT = EXAMPLES / "audit_contract.yaml"


def night(logs: Path | str, out: Path, run_id: str, contract: Path, *extra: str, expect: int = 0,
          real: bool = False) -> dict[str, Any]:
    """One nightly `audit --incremental` through the CLI; its `--format json` summary."""
    done = run_cli("audit", logs, "--contract", contract, "--out", out, "--run-id", run_id,
                   "--incremental", "--no-mutate", "--fail-on", "none", "--jobs", "1", "-q",
                   "--format", "json", *extra, expect=expect, real=real)
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def pair_ids(out: Path, run_id: str | None = None) -> list[str]:
    frame = read_table(out, "pairs").collect()
    if run_id is not None:
        frame = frame.filter(pl.col("run_id") == run_id)
    return sorted(frame["pair_id"])


def ids(start: int, count: int) -> list[str]:
    return [f"p{index:04d}" for index in range(start, start + count)]


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(logs folder, OUT, contract)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    return logs, tmp_path / "out", write_contract(tmp_path)


# --- D1: the same run id -----------------------------------------------------------------------

def test_a_rerun_with_the_same_run_id_re_audits_its_night(tmp_path: Path) -> None:
    """issue 23 D1, exactly: the rerun audited nothing and replaced the 83 rows with none."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(NIGHT, logs / "compactions.jsonl")
    out = tmp_path / "o"
    first = night(logs, out, "night-2025-06-02", AUDIT_CONTRACT)
    again = night(logs, out, "night-2025-06-02", AUDIT_CONTRACT)
    assert first["pairs"] == again["pairs"] == 83
    assert again["incremental"]["new_inputs"] == 1 and again["incremental"]["skipped_records"] == 0
    stats = json.loads(run_cli("stats", out, "--format", "json").stdout)
    assert stats["pairs"][0]["pairs"] == 83
    # the next night audits only what is new (it re-audited all 83 + the new ones before)
    append(logs / "compactions.jsonl", NIGHT.read_bytes().splitlines(keepends=True)[0])
    assert night(logs, out, "night-2025-06-03", AUDIT_CONTRACT)["pairs"] == 1
    assert json.loads(run_cli("stats", out, "--format", "json").stdout)["pairs"][0]["pairs"] == 84


def test_a_rerun_with_the_same_run_id_in_a_real_process(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_jsonl(logs / "a.jsonl", good_lines(6))
    contract, out = write_contract(tmp_path), tmp_path / "out"
    night(logs, out, "n1", contract, real=True)
    append(logs / "a.jsonl", b"".join(good_lines(2, start=6)))
    night(logs, out, "n2", contract, real=True)
    again = night(logs, out, "n2", contract, real=True)
    assert again["pairs"] == 2 and again["incremental"]["appended_records_skipped"] == 6
    assert pair_ids(out) == ids(0, 8)


def test_re_running_an_older_night_keeps_every_record_once(setup: tuple[Path, Path, Path]) -> None:
    """Night 1 audited lines 1-4, night 2 lines 5-7: re-running night 1 must re-audit lines 1-4
    (only night 1 audited them) and nothing of night 2's."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(4))
    night(logs, out, "n1", contract)
    append(logs / "a.jsonl", b"".join(good_lines(3, start=4)))
    night(logs, out, "n2", contract)
    append(logs / "a.jsonl", b"".join(good_lines(2, start=7)))
    rerun = night(logs, out, "n1", contract)
    assert rerun["pairs"] == 6  # lines 1-4 again, and the 2 new ones
    assert pair_ids(out, "n1") == [*ids(0, 4), *ids(7, 2)]
    assert pair_ids(out) == ids(0, 9)
    rows = read_table(out, "pairs").filter(pl.col("run_id") == "n1").collect()
    assert sorted(rows["source_row"]) == [1, 2, 3, 4, 8, 9]
    assert night(logs, out, "n3", contract)["pairs"] == 0


# --- D17: a half-written last line --------------------------------------------------------------

def test_a_half_written_last_line_is_held_back_until_complete(setup: tuple[Path, Path, Path]) -> None:
    """issue 23 D17: the only new bytes of the night are half a line: that was 1 input error of 1
    record, "NOTHING AUDITED", exit 2. It is not a record yet: held back, exit 0, audited once
    complete (once, not twice)."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(5))
    night(logs, out, "n1", contract)
    whole = line(record(5))
    append(logs / "a.jsonl", whole[:70])
    torn = night(logs, out, "n2", contract)
    assert torn["pairs"] == 0 and torn["input_errors"] == 0 and torn["exit_code"] == 0
    assert not torn["nothing_audited"]
    assert torn["incremental"]["held_back_lines"] == 1
    assert torn["incremental"]["held_back"] == [
        {"path": str(logs / "a.jsonl"), "line": 6, "offset": (logs / "a.jsonl").stat().st_size - 70}]
    append(logs / "a.jsonl", whole[70:])
    done = night(logs, out, "n3", contract)
    assert done["pairs"] == 1 and done["input_errors"] == 0 and done["incremental"]["held_back_lines"] == 0
    rows = read_table(out, "pairs").collect()
    assert sorted(rows["pair_id"]) == ids(0, 6) and rows["status"].to_list().count("input_error") == 0
    assert rows.filter(pl.col("run_id") == "n3")["source_row"].to_list() == [6]


def test_a_last_line_of_valid_json_without_its_newline_is_held_back_too(
        setup: tuple[Path, Path, Path]) -> None:
    """The writer may have written the JSON and not yet its newline: the line is complete only
    with it (otherwise it would be audited now and again once the newline comes)."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", [*good_lines(3), line(record(3))[:-1]])
    first = night(logs, out, "n1", contract)
    assert first["pairs"] == 3 and first["incremental"]["held_back_lines"] == 1
    append(logs / "a.jsonl", b"\n")
    assert night(logs, out, "n2", contract)["pairs"] == 1
    assert pair_ids(out) == ids(0, 4)


def test_a_file_that_is_only_a_half_written_line_is_not_nothing_audited(
        setup: tuple[Path, Path, Path]) -> None:
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", [line(record(0))[:50]])
    first = night(logs, out, "n1", contract)
    assert first["pairs"] == 0 and first["exit_code"] == 0 and first["incremental"]["held_back_lines"] == 1


def test_a_last_line_that_never_gets_its_newline_is_named_every_night(
        setup: tuple[Path, Path, Path]) -> None:
    """Held back each night (never lost silently); a newline appended by hand releases it, and a
    run without --incremental audits it as the record it then is."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", [*good_lines(2), line(record(2))[:40]])
    for run_id in ("n1", "n2", "n3"):
        summary = night(logs, out, run_id, contract)
        assert summary["incremental"]["held_back"][0]["line"] == 3
    text = run_cli("audit", logs, "--contract", contract, "--out", out, "--run-id", "n4",
                   "--incremental", "--no-mutate", "--fail-on", "none", "--jobs", "1").stdout
    assert f"held back 1 incomplete last line(s) (no newline yet): {logs / 'a.jsonl'} line 3" in text
    full = run_cli("audit", logs, "--contract", contract, "--out", out.with_name("full"),
                   "--no-mutate", "--fail-on", "none", "--jobs", "1", "--format", "json")
    summary = json.loads(full.stdout)
    assert summary["pairs"] == 3 and summary["input_errors"] == 1 and summary["incremental"] is None
    append(logs / "a.jsonl", b"\n")
    released = night(logs, out, "n5", contract, expect=2)  # its only record cannot be read
    assert released["pairs"] == 1 and released["input_errors"] == 1  # the record it is: torn JSON
    assert released["incremental"]["held_back_lines"] == 0 and released["nothing_audited"]


def test_racing_appends_are_left_to_the_next_run(setup: tuple[Path, Path, Path],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytes written after the inputs were listed belong to the next run; a line the writer was
    in the middle of when they were listed is held back, and audited once, by the next run."""
    logs, out, contract = setup
    path = write_jsonl(logs / "a.jsonl", good_lines(3))
    night(logs, out, "n1", contract)
    late = line(record(3))
    append(path, late[:30])  # mid-line when the inputs are listed
    plan = corpus_run.plan_incremental

    def write_while_planning(*args: Any, **kwargs: Any) -> Any:
        append(path, late[30:] + b"".join(good_lines(2, start=4)))
        return plan(*args, **kwargs)

    monkeypatch.setattr(corpus_run, "plan_incremental", write_while_planning)
    racing = night(logs, out, "n2", contract)
    assert racing["pairs"] == 0 and racing["incremental"]["held_back_lines"] == 1
    monkeypatch.setattr(corpus_run, "plan_incremental", plan)
    assert night(logs, out, "n3", contract)["pairs"] == 3
    assert pair_ids(out) == ids(0, 6)


# --- D17: rotation -----------------------------------------------------------------------------

def test_a_file_rotated_by_rename_is_recognised(setup: tuple[Path, Path, Path]) -> None:
    """issue 23 D17: `a.jsonl` → `a-1.jsonl` and a new `a.jsonl`: the rotated file's lines were
    audited again (double counted). Now only what was written after the last audit is."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(10))
    night(logs, out, "n1", contract)
    append(logs / "a.jsonl", b"".join(good_lines(2, start=10)))  # written before the rotation
    (logs / "a.jsonl").rename(logs / "a-1.jsonl")
    write_jsonl(logs / "a.jsonl", good_lines(3, start=50))
    second = night(logs, out, "n2", contract)
    assert second["pairs"] == 5
    assert second["incremental"]["moved_inputs"] == 1
    assert second["incremental"]["moved_records_skipped"] == 10
    assert pair_ids(out) == [*ids(0, 12), *ids(50, 3)]
    rows = read_table(out, "pairs").filter(pl.col("run_id") == "n2").collect()
    assert sorted(rows.filter(pl.col("source").str.ends_with("a-1.jsonl"))["source_row"]) == [11, 12]
    # nothing new: nothing audited; rotated once more, still nothing
    assert night(logs, out, "n3", contract)["pairs"] == 0
    (logs / "a-1.jsonl").rename(logs / "a-2.jsonl")
    (logs / "a.jsonl").rename(logs / "a-1.jsonl")
    third = night(logs, out, "n4", contract)
    assert third["pairs"] == 0 and third["incremental"]["moved_inputs"] == 2
    assert pair_ids(out) == [*ids(0, 12), *ids(50, 3)]


def test_a_copy_is_not_a_rotation(setup: tuple[Path, Path, Path]) -> None:
    """The original is still there with the same bytes: its copy is another input, audited."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(4))
    night(logs, out, "n1", contract)
    shutil.copy(logs / "a.jsonl", logs / "b.jsonl")
    second = night(logs, out, "n2", contract)
    assert second["pairs"] == 4 and second["incremental"]["new_inputs"] == 1


def test_a_file_rotated_into_gzip_is_recognised(setup: tuple[Path, Path, Path]) -> None:
    """Rotation with compression (logrotate's `compress`, named to keep `.jsonl.gz`):
    `a.jsonl` → `a-1.jsonl.gz`. Its decompressed bytes start with
    what was audited: only the lines after that are audited, the last one even without its
    newline (a compressed file is never appended to: its last line is complete)."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(6))
    night(logs, out, "n1", contract)
    append(logs / "a.jsonl", b"".join(good_lines(2, start=6)) + line(record(8))[:-1])
    night(logs, out, "n2", contract)  # lines 7-8, line 9 held back
    data = (logs / "a.jsonl").read_bytes()
    (logs / "a-1.jsonl.gz").write_bytes(gzip.compress(data))
    (logs / "a.jsonl").unlink()
    third = night(logs, out, "n3", contract)
    assert third["pairs"] == 1 and third["incremental"]["moved_inputs"] == 1
    assert third["incremental"]["moved_records_skipped"] == 8
    rows = read_table(out, "pairs").filter(pl.col("run_id") == "n3").collect()
    assert rows["source_row"].to_list() == [9] and rows["status"].to_list() != ["input_error"]
    assert pair_ids(out) == ids(0, 9)
    # the next night decompresses nothing to know it, and a renamed .gz is the same file
    assert night(logs, out, "n4", contract)["pairs"] == 0
    (logs / "a-1.jsonl.gz").rename(logs / "a-2.jsonl.gz")
    assert night(logs, out, "n5", contract)["pairs"] == 0
    # re-running the first night: only what it alone audited, lines 1-6, is audited again
    assert night(logs, out, "n1", contract)["pairs"] == 6
    assert pair_ids(out) == ids(0, 9)
    assert night(logs, out, "n6", contract)["pairs"] == 0


# --- what is audited in full ---------------------------------------------------------------------

def test_appended_lines_only_are_audited(setup: tuple[Path, Path, Path]) -> None:
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(4))
    night(logs, out, "n1", contract)
    append(logs / "a.jsonl", b"".join(good_lines(3, start=4)))
    second = night(logs, out, "n2", contract)
    assert second["pairs"] == 3 and second["incremental"]["appended_inputs"] == 1
    assert pair_ids(out) == ids(0, 7)


def test_a_truncated_file_is_audited_in_full(setup: tuple[Path, Path, Path]) -> None:
    """Its bytes are not the ones audited: its lines are audited again (the old rows stay: the
    run that audited them is not replaced)."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(4))
    night(logs, out, "n1", contract)
    write_jsonl(logs / "a.jsonl", good_lines(2))
    second = night(logs, out, "n2", contract)
    assert second["pairs"] == 2 and second["incremental"]["changed_inputs"] == 1


def test_a_same_size_replacement_is_audited_in_full(setup: tuple[Path, Path, Path]) -> None:
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(3))
    night(logs, out, "n1", contract)
    before = (logs / "a.jsonl").stat()
    data = (logs / "a.jsonl").read_bytes()
    (logs / "a.jsonl").write_bytes(data.replace(b'"p0001"', b'"p0009"'))  # same length
    os.utime(logs / "a.jsonl", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (logs / "a.jsonl").stat().st_size == before.st_size
    second = night(logs, out, "n2", contract)
    assert second["pairs"] == 3 and second["incremental"]["changed_inputs"] == 1
    assert pair_ids(out, "n2") == ["p0000", "p0002", "p0009"]


def test_a_killed_run_is_re_run_with_its_id(setup: tuple[Path, Path, Path]) -> None:
    """kill -9 of a same-id rerun inside its commit (its old rows already removed, its runs row
    not yet written): nothing of it counts, and the next run of that id audits its night again."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(4))
    night(logs, out, "n1", contract)
    append(logs / "a.jsonl", b"".join(good_lines(3, start=4)))
    night(logs, out, "n2", contract)
    args = ["audit", str(logs), "--contract", str(contract), "--out", str(out), "--run-id", "n2",
            "--incremental", "--no-mutate", "--jobs", "1", "-q"]
    process = subprocess.Popen([sys.executable, "-m", "tests.fault_entry", "commit", *args], cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        for text in process.stderr:
            if f"{PAUSE_LINE}commit" in text:
                break
        else:
            pytest.fail(f"the audit ended before its commit: exit {process.wait()}")
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    assert pair_ids(out) == ids(0, 4)  # n2 is gone until it is re-run
    assert night(logs, out, "n2", contract)["pairs"] == 3
    assert pair_ids(out) == ids(0, 7)


def _lose_line_3(task: ShardTask) -> ShardResult:
    """`audit_shard`, except that the shard holding line 3 is given up, as when its worker died twice."""
    if task.shard.first_row == 3:
        return ShardResult(task.shard.ordinal, error="the worker died twice (simulated)")
    return audit_shard(task)


def test_a_shard_not_audited_is_audited_by_the_next_run(setup: tuple[Path, Path, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Its range is left out of the run's entries (the ranges before and after it are kept), so
    the next run audits that shard's lines only."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(6))
    monkeypatch.setattr(corpus_run, "audit_shard", _lose_line_3)
    first = night(logs, out, "n1", contract, "--shard-bytes", "1")
    assert first["pairs"] == 5 and len(first["not_audited"]) == 1
    monkeypatch.setattr(corpus_run, "audit_shard", audit_shard)
    second = night(logs, out, "n2", contract, "--shard-bytes", "1")
    assert second["pairs"] == 1 and second["incremental"]["appended_records_skipped"] == 5
    assert pair_ids(out, "n2") == ["p0002"] and pair_ids(out) == ids(0, 6)


# --- D10: a damaged dataset ---------------------------------------------------------------------

def _runs_file(out: Path, run_id: str) -> Path:
    return out / RUNS_FOLDER / runs_name(run_id)


def _rewrite_sources(out: Path, run_id: str, value: str | None) -> None:
    path = _runs_file(out, run_id)
    table = pq.read_table(path)
    column = table.schema.get_field_index("sources")
    table = table.set_column(column, "sources", pa.array([value], pa.string()))
    pq.write_table(table, path)


@pytest.mark.parametrize(("sources", "reason"), [
    ("not json", "its sources are not JSON"),
    ('{"path": "a.jsonl"}', "its sources are not a list of entries"),
    ("[1]", "sources entry 1 is not an entry"),
    ('[{"path": "a.jsonl", "size": "big"}]', "sources entry 1 is not an entry"),
])
def test_damaged_sources_are_an_input_error_naming_the_file(
        setup: tuple[Path, Path, Path], sources: str, reason: str) -> None:
    """issue 23 D10: exit 123 (JSONDecodeError, TypeError) before; `stats` said "damaged"."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(2))
    night(logs, out, "n1", contract)
    _rewrite_sources(out, "n1", sources)
    done = run_cli("audit", logs, "--contract", contract, "--out", out, "--run-id", "n2",
                   "--incremental", "--no-mutate", "--jobs", "1", "-q", expect=2)
    assert done.stderr.startswith(f"INPUT ERROR: damaged dataset: '{_runs_file(out, 'n1')}' (run 'n1'):"
                                  f" {reason}"), done.stderr
    assert "\n" not in done.stderr.strip()


def test_a_garbage_runs_file_is_an_input_error_naming_it(setup: tuple[Path, Path, Path]) -> None:
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(2))
    night(logs, out, "n1", contract)
    _runs_file(out, "n1").write_bytes(b"PAR1" + b"garbage" * 40)
    done = run_cli("audit", logs, "--contract", contract, "--out", out, "--run-id", "n2",
                   "--incremental", "--no-mutate", "--jobs", "1", "-q", expect=2)
    assert done.stderr.startswith(f"INPUT ERROR: damaged dataset: cannot read '{_runs_file(out, 'n1')}'"
                                  " (run 'n1'): "), done.stderr


def test_a_fifo_among_the_runs_files_is_refused_not_waited_on(setup: tuple[Path, Path, Path]) -> None:
    """A real process with a timeout: reading a FIFO would wait for a writer forever."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(2))
    night(logs, out, "n1", contract)
    fifo = _runs_file(out, "fifo")
    os.mkfifo(fifo)
    done = run_cli("audit", logs, "--contract", contract, "--out", out, "--run-id", "n2",
                   "--incremental", "--no-mutate", "--jobs", "1", "-q", expect=2, real=True)
    assert done.stderr.strip() == (f"INPUT ERROR: damaged dataset: cannot read '{fifo}' (run 'fifo'):"
                                   " it is a FIFO, not a regular file")


# --- the invariant, over random nights ----------------------------------------------------------

_STEPS = st.lists(st.sampled_from(["append", "torn", "rotate", "gzip", "rerun", "first", "same"]),
                  min_size=2, max_size=6)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=_STEPS)
@example(steps=["append", "rotate", "rerun", "same"])  # a re-run of the night that found a rotation
def test_every_complete_record_is_audited_exactly_once(tmp_path_factory: pytest.TempPathFactory,
                                                       steps: list[str]) -> None:
    """Whatever happens between nights (appends, a torn last line, rotation by rename or into
    gzip, a rerun of the last night, of the first or of one between), after each incremental run the
    pairs are exactly the complete records of the inputs, each once."""
    from frayproof_audit.corpus import audit

    folder = tmp_path_factory.mktemp("nights")
    logs, out, contract = folder / "logs", folder / "out", write_contract(folder)
    live = write_jsonl(logs / "a.jsonl", good_lines(2))
    written, pending, rotations, nights = 2, b"", 0, ["n0"]

    def run(run_id: str) -> None:
        summary = audit([str(logs)], str(contract), str(out), run_id=run_id, incremental=True,
                        jobs=1, mutate=False, fail_on=("none",), shard_bytes=800)
        assert summary.input_errors == 0

    run("n0")
    for number, step in enumerate(steps, start=1):
        if step in ("append", "torn"):
            whole = pending + b"".join(good_lines(2, start=written))
            written += 2
            pending = b""
            if step == "torn":
                torn = line(record(written))
                written += 1
                whole, pending = whole + torn[:25], torn[25:]
            append(live, whole)
        elif step in ("rotate", "gzip"):
            rotations += 1
            data = live.read_bytes()
            if step == "gzip":
                if pending:
                    data += pending  # the writer finished its line before the file was rotated
                    pending = b""
                (logs / f"a-{rotations}.jsonl.gz").write_bytes(gzip.compress(data))
                live.unlink()
            else:
                live.rename(logs / f"a-{rotations}.jsonl")
                if pending:  # finished where it is now
                    append(logs / f"a-{rotations}.jsonl", pending)
                    pending = b""
            live = write_jsonl(logs / "a.jsonl", good_lines(1, start=written))
            written += 1
        if step == "rerun":
            run(nights[len(nights) // 2])
        elif step == "first":
            run(nights[0])
        elif step == "same":
            run(nights[-1])
        else:
            nights.append(f"n{number}")
            run(nights[-1])
        complete = written - (1 if pending else 0)
        assert pair_ids(out) == ids(0, complete), steps


# --- the docs ---------------------------------------------------------------------------------

def test_every_scenario_in_the_docs_has_its_test() -> None:
    """docs/audit.md's scenario table names one test of this module per row."""
    text = (REPO / "docs" / "audit.md").read_text(encoding="utf-8")
    table = text.split("### Incremental runs", 1)[1].split("\n#", 1)[0]
    named = re.findall(r"`(test_[a-z_]+)`", table)
    scenarios = ("append", "torn", "truncat", "same-size", "rename", "gzip", "same run id", "kill -9",
                 "racing")
    rows = [row for row in table.splitlines() if row.startswith("| ") and "`test_" in row]
    for scenario in scenarios:
        assert any(scenario in row.lower() for row in rows), scenario
    module = sys.modules[__name__]
    assert named and all(callable(getattr(module, name, None)) for name in named), named


def test_entries_of_an_older_version_still_count(setup: tuple[Path, Path, Path]) -> None:
    """`runs.sources` written before entries had `start_offset`: each covered its file from the
    start, as the latest one then did."""
    logs, out, contract = setup
    write_jsonl(logs / "a.jsonl", good_lines(3))
    night(logs, out, "n1", contract)
    path = _runs_file(out, "n1")
    entries = orjson.loads(pq.read_table(path)["sources"][0].as_py())
    old = [{key: entry[key] for key in ("path", "size", "sha256", "resume_offset", "resume_line", "records")}
           for entry in entries]
    _rewrite_sources(out, "n1", orjson.dumps(old).decode())
    append(logs / "a.jsonl", b"".join(good_lines(1, start=3)))
    assert night(logs, out, "n2", contract)["pairs"] == 1
