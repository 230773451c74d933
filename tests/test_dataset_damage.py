"""Damaged datasets (issue 23, D10): each damage is exit 2 naming the file, for every reader, and
never a hang.

Every damage is applied to a copy of one two-run dataset, and every reader (`stats`, `stats
--format json`, `trend`, `report`) runs on it in a child process under a timeout, so a reader
that blocks (on a FIFO, say) fails its case instead of the suite.
The four commands of a damage run in turn in one process, which says which command starts
before it does, so a hang names its command; two damages also run each command as its own
`python -m frayproof_audit`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.dataset.checked_files import DatasetError, committed_files
from frayproof_audit.corpus.dataset.run_details import run_details
from frayproof_audit.corpus.store.arrow_tables import SCHEMAS, TABLES, TABLES_SCHEMA_VERSION, schema_of
from tests import test_scale
from tests.corpus_support import good_lines, write_contract, write_jsonl
from tests.helpers import REPO

s3 = test_scale.s3
"""The fixture: an S3 API server (moto) on 127.0.0.1, and the environment that points at it."""
TIMEOUT = 60
"""Seconds a reader gets (each takes about one): beyond it, it hangs."""


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two committed runs, `r1` (night 0) and `r2` (night 1), with findings and mutants."""
    folder = tmp_path_factory.mktemp("two-runs")
    contract = write_contract(folder)
    out = folder / "out"
    for night in (0, 1):
        logs = write_jsonl(folder / f"n{night}.jsonl", good_lines(8, start=10 * night, night=night))
        audit([str(logs)], str(contract), str(out), jobs=1, run_id=f"r{night + 1}", fail_on=("none",))
    return out


def _runs(out: Path, run_id: str = "r2") -> Path:
    return out / "runs" / f"part-{run_id}.parquet"


def _part(out: Path, table: str = "pairs", run_id: str = "r2") -> Path:
    return next(Path(p) for p in committed_files(out, table, [run_id]))


def _rewrite(path: Path, change: Callable[[pa.Table], pa.Table]) -> Path:
    table = pq.read_table(path)
    pq.write_table(change(table), path)
    return path


def _retype(table: pa.Table, name: str, values: pa.Array) -> pa.Table:
    return table.set_column(table.column_names.index(name), name, values)


def _fifo(path: Path) -> Path:
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


def _other_parquet(path: Path) -> Path:
    pq.write_table(pa.table({"x": [1, 2]}), path)
    return path


def _garbage(path: Path) -> Path:
    path.write_bytes(b"not parquet at all " * 20)
    return path


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


DAMAGES: dict[str, Callable[[Path], Path]] = {
    # name: damage the dataset in place, returning the file every reader must name
    "fifo in runs/": lambda out: _fifo(out / "runs" / "part-fifo.parquet"),
    "folder in runs/": lambda out: _folder(out / "runs" / "part-dir.parquet"),
    "runs file of garbage": lambda out: _garbage(_runs(out)),
    "runs row without files": lambda out: _rewrite(_runs(out), lambda t: t.drop(["files"])),
    "runs row with null files": lambda out: _rewrite(_runs(out), lambda t: _retype(
        t, "files", pa.nulls(1, pa.list_(pa.string())))),
    "runs pairs as strings": lambda out: _rewrite(_runs(out), lambda t: _retype(
        t, "pairs", pa.array([str(v) for v in t["pairs"].to_pylist()]))),
    "runs row of another run": lambda out: Path(shutil.copyfile(_runs(out, "r1"), _runs(out))),
    "runs row of a newer schema": lambda out: _rewrite(_runs(out), lambda t: _retype(
        t, "schema_version", pa.array([99], pa.int32()))),
    "runs row listing a path outside": lambda out: _rewrite(_runs(out), lambda t: _retype(
        t, "files", pa.array([["pairs/../../escaped.parquet"]], t.schema.field("files").type))),
    "listed part is other parquet": lambda out: _other_parquet(_part(out)),
    "first listed part is other parquet": lambda out: _other_parquet(_part(out, run_id="r1")),
    "listed part is a fifo": lambda out: _fifo(_part(out)),
    "listed part is garbage": lambda out: _garbage(_part(out, "findings")),
    "listed part lacks a column": lambda out: _rewrite(_part(out), lambda t: t.drop(["status"])),
    "listed part with a retyped column": lambda out: _rewrite(_part(out, "mutants"), lambda t: _retype(
        t, "operator", pa.array(range(t.num_rows), pa.int64()))),
}

NOT_DAMAGED = {"runs row of a newer schema"}
"""Not damage but a newer release's run: named the same way, with what to do about it."""

COMMANDS: dict[str, tuple[str, ...]] = {
    "stats": ("stats", "{out}"),
    "stats --format json": ("stats", "{out}", "--format", "json"),
    "trend": ("trend", "{out}"),
    "report": ("report", "{out}", "-o", "{tmp}/report.html"),
}


_CHILD = """
import json, sys
from tests.helpers import run_cli
for name, args in json.loads(sys.argv[1]).items():
    print(json.dumps({"start": name}), flush=True)
    done = run_cli(*args, expect=None)
    print(json.dumps({"name": name, "code": done.exit_code, "stdout": done.stdout,
                      "stderr": done.stderr}), flush=True)
"""
"""Runs the commands in turn in one process (through CliRunner, as the CLI tests do), saying
which one starts before it does, so a hang names its command."""


def _argv(out: Path, tmp: Path) -> dict[str, list[str]]:
    return {name: [arg.format(out=out, tmp=tmp) for arg in args] for name, args in COMMANDS.items()}


def _run_in_one_process(out: Path, tmp: Path) -> dict[str, tuple[int | None, str, str]]:
    """Every command on `out`; (exit code, or None for the one that hung, stdout, stderr)."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(_argv(out, tmp))], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        stdout, stderr = child.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        child.kill()
        stdout, stderr = child.communicate()
    done: dict[str, tuple[int | None, str, str]] = {}
    for text in stdout.splitlines():
        event = json.loads(text)
        if "start" in event:
            done[event["start"]] = (None, "", stderr)
        else:
            done[event["name"]] = (event["code"], event["stdout"], event["stderr"])
    return done


def _run_each_as_a_process(out: Path, tmp: Path) -> dict[str, tuple[int | None, str, str]]:
    """Every command on `out` as `python -m frayproof_audit`, all at once."""
    running = {name: subprocess.Popen([sys.executable, "-m", "frayproof_audit", *argv], cwd=REPO,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      env={**os.environ, "PYTHONPATH": str(REPO)})
               for name, argv in _argv(out, tmp).items()}
    done: dict[str, tuple[int | None, str, str]] = {}
    for name, process in running.items():
        try:
            stdout, stderr = process.communicate(timeout=TIMEOUT)
            done[name] = (process.returncode, stdout, stderr)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            done[name] = (None, stdout, stderr)
    return done


def _problems(damage: str, named: Path, done: dict[str, tuple[int | None, str, str]]) -> list[str]:
    """What is wrong with the commands' outcomes: each must be exit 2, one line naming `named`."""
    problems = []
    expected = (f"cannot read '{named}': run 'r2' was written with tables schema 99"
                if damage in NOT_DAMAGED else f"damaged dataset: cannot read '{named}'")
    for command in COMMANDS:
        if command not in done:
            problems.append(f"{command}: never ran (a command before it hung)")
            continue
        code, stdout, stderr = done[command]
        if command.endswith("json"):
            message = json.loads(stdout)["error"] if code == 2 and stdout.strip() else stderr
        else:
            message = stderr.strip()
        if code is None:
            problems.append(f"{command}: hung (killed after {TIMEOUT} s)")
        elif code != 2 or expected not in message or "\n" in message or "Traceback" in stderr:
            problems.append(f"{command}: exit {code}, {message[-400:]!r}")
    return problems


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_every_reader_names_the_damaged_file_and_exits_2(
        damage: str, dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(dataset, out)
    named = DAMAGES[damage](out)
    problems = _problems(damage, named, _run_in_one_process(out, tmp_path))
    assert not problems, f"{damage}:\n" + "\n".join(problems)
    # the library says the same, as a DatasetError (the readers above have shown it cannot hang)
    with pytest.raises(DatasetError, match=f"cannot read '{re.escape(str(named))}'"):
        for table in TABLES:
            read_table(out, table).collect()


@pytest.mark.parametrize("damage", ["fifo in runs/", "runs pairs as strings"])
def test_the_issue_reproducers_as_python_m_processes(damage: str, dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(dataset, out)
    named = DAMAGES[damage](out)
    problems = _problems(damage, named, _run_each_as_a_process(out, tmp_path))
    assert not problems, f"{damage}:\n" + "\n".join(problems)


def test_the_undamaged_dataset_reads_with_every_command(dataset: Path, tmp_path: Path) -> None:
    # the control: each command succeeds on the dataset the damages start from
    for command, (code, _, stderr) in _run_each_as_a_process(dataset, tmp_path).items():
        assert code == 0, f"{command}: exit {code}: {stderr}"
    assert read_table(dataset, "pairs").collect().height == 16


# --- The same damages on an object store (an S3 API server on 127.0.0.1) -------------------------

REMOTE_DAMAGES = ("listed part is other parquet", "listed part lacks a column",
                  "listed part with a retyped column")
"""pyarrow, which reads remote datasets, would fill a missing column with nulls, drop an unknown
one and cast a string to a number: each must still be an error naming the file."""


@pytest.mark.parametrize("damage", REMOTE_DAMAGES)
def test_a_damaged_dataset_on_s3_names_the_file(
        damage: str, dataset: Path, tmp_path: Path, s3: dict[str, str]) -> None:
    from frayproof_audit.corpus.inputs import location

    local = tmp_path / "out"
    shutil.copytree(dataset, local, ignore=shutil.ignore_patterns(".frayproof-audit.lock", "_staging"))
    named = DAMAGES[damage](local)
    out = f"s3://audit/damaged-{abs(hash(damage))}"
    fs, root = location.filesystem(out)
    fs.put(f"{local}/", root, recursive=True)
    fs.invalidate_cache()
    remote = f"{root}/{named.relative_to(local)}"
    done = subprocess.run([sys.executable, "-m", "frayproof_audit", "stats", out], cwd=REPO,
                          capture_output=True, text=True, timeout=TIMEOUT, check=False,
                          env={**os.environ, **s3, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"INPUT ERROR: damaged dataset: cannot read '{remote}'"), done.stderr
    with pytest.raises(DatasetError, match=f"cannot read '{re.escape(remote)}'"):
        for table in TABLES:
            read_table(out, table).collect()


# --- What the checks compare against ----------------------------------------------------------------

V1 = REPO / "tests" / "data" / "v1"


@pytest.mark.parametrize("table", TABLES)
def test_schema_1_columns_are_those_the_schema_1_files_hold(table: str) -> None:
    # ADDED_IN is the changelog as data: schema_of(table, 1) must be what schema 1 really wrote
    for fixture in ("example-dataset", "generated-dataset"):
        for path in committed_files(V1 / fixture, table):
            assert pq.read_schema(path).remove_metadata().equals(schema_of(table, 1)), path
    assert schema_of(table, TABLES_SCHEMA_VERSION).equals(SCHEMAS[table])


def test_ci_details_of_a_schema_1_run_read_with_codes_null() -> None:
    details = run_details(V1 / "example-dataset", "v1-example", 5)
    assert details.findings and all(row.code is None for row in details.findings)


@pytest.mark.parametrize("damage", ["listed part is other parquet", "listed part lacks a column",
                                    "runs row of another run"])
def test_ci_details_of_a_damaged_run_name_the_file(damage: str, dataset: Path, tmp_path: Path) -> None:
    # audit --format sarif/junit/github reads its run back through run_details
    out = tmp_path / "out"
    shutil.copytree(dataset, out)
    named = DAMAGES[damage](out)
    with pytest.raises(DatasetError, match=f"damaged dataset: cannot read '{re.escape(str(named))}'"):
        run_details(out, "r2", 10)
