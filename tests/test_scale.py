"""Beyond one machine: a real Dask cluster, a real S3 API server, incremental runs, Ray.

The cluster (`dask scheduler` and two `dask worker` processes) and the S3 server (moto in
server mode) are started once for this module, on 127.0.0.1, and stopped at its end.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from frayproof_audit.corpus import audit, compute_stats, read_table
from frayproof_audit.corpus.inputs.field_map import ConfigError
from frayproof_audit.corpus.run.audit_config import AuditConfig
from tests.corpus_support import MAX_RECORD_BYTES, good_lines, mixed_corpus, write_contract, write_jsonl
from tests.helpers import REPO, run_cli

DATA_TABLES = ("pairs", "findings", "mutants")
RUN_COLUMNS_THAT_DIFFER = ("started_at", "finished_at", "duration_s", "backend", "n_jobs", "argv",
                           "options", "inputs")
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """Kill them: workers run without a nanny, so no process of theirs outlives them."""
    for process in processes:
        process.kill()
    for process in processes:
        process.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`tcp://127.0.0.1:PORT` of a Dask scheduler with two single-threaded worker processes."""
    distributed = pytest.importorskip("dask.distributed")
    folder = tmp_path_factory.mktemp("dask")
    address = f"tcp://127.0.0.1:{_free_port()}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": REPO}
    processes = [subprocess.Popen([BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port",
                                   address.rsplit(":", 1)[1], "--no-dashboard"], **quiet)]
    try:
        for name in ("w1", "w2"):
            processes.append(subprocess.Popen(
                [BIN / "dask", "worker", address, "--nthreads", "1", "--no-dashboard", "--no-nanny",
                 "--name", name, "--local-directory", str(folder / name)], **quiet))
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        _stop(processes)


def _worker_pids(address: str) -> list[int]:
    from dask.distributed import Client

    with Client(address, timeout=30) as client:
        return sorted(client.run(os.getpid).values())


def _rows(out: Path | str, table: str) -> pl.DataFrame:
    frame = read_table(out, table).collect()
    if table == "runs":
        return frame.drop(RUN_COLUMNS_THAT_DIFFER)
    return frame.sort("pair_id", *(c for c in ("check", "operator", "message_index") if c in frame.columns),
                      nulls_last=True, maintain_order=True)


# --- Dask -----------------------------------------------------------------------------------------

def test_a_dask_cluster_gives_the_same_tables_as_loky(tmp_path: Path, cluster: str) -> None:
    inputs, records = mixed_corpus(tmp_path / "in")
    contract = write_contract(tmp_path)
    common: dict[str, Any] = {"run_id": "night", "shard_bytes": 3000, "max_record_bytes": MAX_RECORD_BYTES,
                              "fail_on": ("none",)}
    local = audit([str(inputs)], str(contract), str(tmp_path / "loky"), jobs=2, **common)
    remote = audit([str(inputs)], str(contract), str(tmp_path / "dask"), backend="dask", scheduler=cluster,
                   **common)
    assert remote.pairs == local.pairs == records
    assert remote.to_dict()["checks"] == local.to_dict()["checks"]
    for table in (*DATA_TABLES, "runs"):
        assert _rows(tmp_path / "dask", table).equals(_rows(tmp_path / "loky", table)), table
    (run,) = read_table(tmp_path / "dask", "runs").collect().to_dicts()
    assert run["backend"] == "dask" and run["n_jobs"] == 2  # the cluster's two worker threads


def test_a_dask_worker_killed_mid_run_loses_nothing(tmp_path: Path, cluster: str) -> None:
    inputs = tmp_path / "in"
    for night in range(4):
        write_jsonl(inputs / f"n{night}.jsonl", good_lines(8, start=100 * night, night=night))
    contract = write_contract(tmp_path)
    victim = _worker_pids(cluster)[0]
    killed: list[int] = []

    def kill_once(progress: Any) -> None:  # both workers are busy whenever a shard finishes
        if not killed:
            os.kill(victim, signal.SIGKILL)
            killed.append(progress.shards_done)

    summary = audit([str(inputs)], str(contract), str(tmp_path / "out"), backend="dask", scheduler=cluster,
                    run_id="r", shard_bytes=1500, fail_on=("none",), progress=kill_once)
    assert killed and killed[0] < summary.shards
    assert victim not in _worker_pids(cluster)  # it died; the other worker did its shards
    assert summary.not_audited == ()
    assert summary.pairs == summary.passed + summary.failed == 32
    pairs = read_table(tmp_path / "out", "pairs").collect()
    assert sorted(pairs["pair_id"]) == sorted(f"p{100 * n + i:04d}" for n in range(4) for i in range(8))


def test_dask_through_the_cli_with_a_local_cluster(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "in" / "a.jsonl", good_lines(8))
    contract = write_contract(tmp_path)
    done = run_cli("audit", data, "--contract", contract, "--out", tmp_path / "out", "--backend", "dask",
                   "--scheduler", "local", "--jobs", "2", "--shard-bytes", "2000", "--fail-on", "none",
                   "--format", "json", "-q", real=True, cwd=tmp_path)
    assert json.loads(done.stdout)["pairs"] == 8
    (run,) = read_table(tmp_path / "out", "runs").collect().to_dicts()
    assert (run["backend"], run["n_jobs"]) == ("dask", 2)


def test_a_local_dask_cluster_leaves_the_callers_environment_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each nanny writes `distributed.nanny.pre-spawn-environ` and PYTHONHASHSEED into this
    process's environment before spawning its worker; an audit takes them back when it ends,
    so the caller's later subprocesses do not inherit Dask's settings."""
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask.distributed")
    written = [*sorted(dask.config.get("distributed.nanny.pre-spawn-environ", {})), "PYTHONHASHSEED",
               "__DASK_PARENT_PID"]
    assert "MALLOC_TRIM_THRESHOLD_" in written
    for key in written:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # the caller's own value is put back, not removed
    before = dict(os.environ)
    data = write_jsonl(tmp_path / "in" / "a.jsonl", good_lines(4))
    summary = audit([str(data)], str(write_contract(tmp_path)), str(tmp_path / "out"), backend="dask",
                    scheduler="local", jobs=2, fail_on=("none",))
    assert summary.pairs == 4
    assert dict(os.environ) == before


def test_scheduler_needs_a_cluster_backend() -> None:
    with pytest.raises(ConfigError, match="--scheduler needs --backend dask or ray"):
        AuditConfig(inputs=("x",), out="o", scheduler="tcp://127.0.0.1:1")


# --- Ray -----------------------------------------------------------------------------------------

def _ray_installed() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


_WITHOUT_RAY = ("import sys; sys.modules['ray'] = None  # import ray: ImportError, as without the extra\n"
                "from frayproof_audit.cli import main; main(sys.argv[1:], prog_name='frayproof-audit')")


def test_ray_without_the_extra_is_one_line_exit_2(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "a.jsonl", good_lines(2))
    args = ["audit", data, "--contract", write_contract(tmp_path), "--out", tmp_path / "out",
            "--backend", "ray"]
    done = subprocess.run([sys.executable, "-c", _WITHOUT_RAY, *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "INPUT ERROR: --backend ray needs Ray: pip install 'frayproof-audit[ray]'")
    assert not (tmp_path / "out" / "runs").exists()


@pytest.mark.skipif(not _ray_installed(), reason="the ray extra is not installed")
def test_ray_gives_the_same_tables_as_loky(tmp_path: Path, ray_local: None) -> None:
    inputs, _ = mixed_corpus(tmp_path / "in")
    contract = write_contract(tmp_path)
    common: dict[str, Any] = {"run_id": "night", "shard_bytes": 3000, "max_record_bytes": MAX_RECORD_BYTES,
                              "fail_on": ("none",), "jobs": 2}
    audit([str(inputs)], str(contract), str(tmp_path / "loky"), **common)
    audit([str(inputs)], str(contract), str(tmp_path / "ray"), backend="ray", scheduler="local", **common)
    for table in DATA_TABLES:
        assert _rows(tmp_path / "ray", table).equals(_rows(tmp_path / "loky", table)), table


# --- Object storage (S3 API on 127.0.0.1) ---------------------------------------------------------

@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """An S3 API server (moto) with buckets `logs` and `audit`; yields the environment that
    points clients at it (credentials come from the environment, as on a real host)."""
    s3fs = pytest.importorskip("s3fs")
    server_module = pytest.importorskip("moto.server")
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = _free_port()
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    from frayproof_audit.corpus.inputs import location

    # s3fs keeps its instances by constructor arguments, which do not include the endpoint read
    # from the environment: one made for another module's server would still point there.
    s3fs.S3FileSystem.clear_instance_cache()
    location._filesystem.cache_clear()
    # moto keeps its buckets per process, not per server: start from none, whatever ran before.
    import urllib.request

    urllib.request.urlopen(urllib.request.Request(f"{env['AWS_ENDPOINT_URL']}/moto-api/reset",
                                                  method="POST"), timeout=30).close()
    try:
        fs, _ = location.filesystem("s3://logs")
        fs.mkdir("logs")
        fs.mkdir("audit")
        yield env
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
        location._filesystem.cache_clear()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.stop()


def _s3_cli(env: dict[str, str], *args: Any, entry: tuple[str, ...] = ("frayproof_audit",),
            expect: int | None = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", *entry, *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env}, check=False)
    if expect is not None:
        assert done.returncode == expect, done.stderr
    return done


def _objects(prefix: str) -> list[str]:
    from frayproof_audit.corpus.inputs import location

    fs, path = location.filesystem(prefix)
    fs.invalidate_cache()
    return sorted(fs.find(path))


def test_inputs_and_dataset_on_s3_and_a_commit_killed_midway(tmp_path: Path, s3: dict[str, str]) -> None:
    from frayproof_audit.corpus.inputs import location

    inputs, records = mixed_corpus(tmp_path / "in")
    fs, _ = location.filesystem("s3://logs")
    fs.put(str(inputs), "logs/night", recursive=True)
    contract = write_contract(tmp_path)
    args = ["audit", "s3://logs/night", "--contract", contract, "--out", "s3://audit/ds", "--run-id", "n1",
            "--shard-bytes", "10000", "--max-record-bytes", MAX_RECORD_BYTES, "--fail-on", "none",
            "--format", "json", "-q", "--jobs", "1", "--no-mutate"]
    options: dict[str, Any] = {"run_id": "n1", "shard_bytes": 10000, "max_record_bytes": MAX_RECORD_BYTES,
                               "fail_on": ("none",), "jobs": 1, "mutate": False}
    first = audit(["s3://logs/night"], str(contract), "s3://audit/ds", **options)
    local = audit([str(inputs)], str(contract), str(tmp_path / "local"), **options)
    assert (first.pairs, first.passed, first.input_errors) == (records, local.passed, local.input_errors)
    remote_pairs = read_table("s3://audit/ds", "pairs").collect()
    assert remote_pairs["source"].str.starts_with("s3://logs/night/").all()
    keep = ["source_row", "status", "errors", "session_id", "log_date"]
    key = pl.col("source").str.split("/").list.last()
    assert remote_pairs.with_columns(key).sort("source", "source_row").select("source", *keep).equals(
        read_table(tmp_path / "local", "pairs").collect().with_columns(key).sort("source", "source_row")
        .select("source", *keep))
    assert compute_stats("s3://audit/ds").runs == 1

    # the same run again, killed after the old run was withdrawn and the new files copied in
    killed = _s3_cli(s3, *args, entry=("tests.scale_faults", "kill-at-commit"), expect=None)
    assert killed.returncode == -signal.SIGKILL
    assert read_table("s3://audit/ds", "runs").collect().height == 0  # never a mix of old and new
    assert any("/_staging/" in path for path in _objects("s3://audit/ds"))
    # the next run of that id clears what the dead one left, and commits
    again = audit(["s3://logs/night"], str(contract), "s3://audit/ds", **options)
    assert again.pairs == records
    left = _objects("s3://audit/ds")
    assert not any("/_staging/" in path for path in left)
    (run,) = read_table("s3://audit/ds", "runs").collect().to_dicts()
    listed = {f"audit/ds/{name}" for name in run["files"]} | {"audit/ds/runs/part-n1.parquet"}
    assert set(left) == listed  # every object is a committed one
    assert read_table("s3://audit/ds", "pairs").collect().height == records


def test_two_audits_with_one_run_id_on_s3_one_commits_the_other_is_refused(
        tmp_path: Path, s3: dict[str, str]) -> None:
    from frayproof_audit.corpus.inputs import location

    inputs, records = mixed_corpus(tmp_path / "in")
    contract = write_contract(tmp_path)
    out = "s3://audit/same-id"
    args = ["audit", inputs, "--contract", contract, "--out", out, "--run-id", "nightly",
            "--max-record-bytes", MAX_RECORD_BYTES, "--fail-on", "none", "-q", "--jobs", "1",
            "--no-mutate"]
    fs, _ = location.filesystem(out)
    first = subprocess.Popen([sys.executable, "-m", "tests.scale_faults", "pause-at-commit",
                              *map(str, args)], cwd=REPO, env={**os.environ, **s3},
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.monotonic() + 60
        while not fs.exists("audit/same-id/_staging/nightly.lock"):
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.1)
            fs.invalidate_cache()
        second = _s3_cli(s3, *args, expect=2)  # while the first holds the run id
        assert second.stderr.startswith("OUTPUT ERROR: another audit holds run id 'nightly' in "
                                        f"'{out}' (pid {first.pid} on ")
        assert "give this run another --run-id" in second.stderr
        _, stderr = first.communicate(timeout=120)  # closes its stdin: now it commits
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, stderr
    (run,) = read_table(out, "runs").collect().to_dicts()
    assert run["pairs"] == records and read_table(out, "pairs").collect().height == records
    left = _objects(out)
    assert set(left) == {f"audit/same-id/{name}" for name in run["files"]} | {
        "audit/same-id/runs/part-nightly.parquet"}  # no lock, no staging, nothing of the refused run
    # with the first one done, the id is free again
    assert _s3_cli(s3, *args, "--format", "json").returncode == 0


def test_a_damaged_dataset_on_s3_is_an_input_error_naming_the_file(
        tmp_path: Path, s3: dict[str, str]) -> None:
    from frayproof_audit.corpus.dataset.checked_files import DatasetError, committed_files
    from frayproof_audit.corpus.inputs import location

    out = "s3://audit/damaged"
    audit([str(write_jsonl(tmp_path / "a.jsonl", good_lines(6)))], str(write_contract(tmp_path)),
          out, jobs=1, run_id="r1", mutate=False)
    fs, _ = location.filesystem(out)
    part = committed_files(out, "pairs")[0]
    fs.pipe_file(part, b"PAR1" + b"not parquet" * 50)  # damaged in place
    done = _s3_cli(s3, "stats", out, expect=2)
    assert done.stderr.startswith(f"INPUT ERROR: damaged dataset: cannot read '{part}' (run 'r1'): "
                                  "Parquet magic bytes not found"), done.stderr
    with pytest.raises(DatasetError, match="damaged dataset: cannot read"):
        read_table(out, "pairs").collect()
    fs.rm(part)
    fs.invalidate_cache()
    done = _s3_cli(s3, "stats", out, expect=2)
    assert done.stderr.strip() == f"INPUT ERROR: damaged dataset: run 'r1' lists '{part}', which is missing"


def test_incremental_runs_on_s3_rerun_rotate_and_a_damaged_runs_file(
        tmp_path: Path, s3: dict[str, str]) -> None:
    """Inputs and OUT on an object store: a same-id rerun re-audits its night (issue 23 D1), a
    renamed object is the file audited under its old name, a damaged `runs` object is exit 2."""
    from frayproof_audit.corpus.inputs import location

    fs, _ = location.filesystem("s3://logs")
    fs.pipe_file("logs/inc/a.jsonl", b"".join(good_lines(5)))
    contract, out = write_contract(tmp_path), "s3://audit/incremental"

    def run(run_id: str) -> Any:
        fs.invalidate_cache()
        return audit(["s3://logs/inc"], str(contract), out, run_id=run_id, incremental=True, jobs=1,
                     mutate=False, fail_on=("none",))

    assert run("n1").pairs == 5
    assert run("n1").pairs == 5  # not 0: the run it replaces never counts
    fs.mv("logs/inc/a.jsonl", "logs/inc/a-1.jsonl")
    fs.pipe_file("logs/inc/a.jsonl", b"".join(good_lines(2, start=5)))
    second = run("n2")
    assert second.pairs == 2 and second.skipped is not None and second.skipped.moved_inputs == 1
    assert sorted(read_table(out, "pairs").collect()["pair_id"]) == [f"p{i:04d}" for i in range(7)]
    runs_object = "audit/incremental/runs/part-n1.parquet"
    fs.pipe_file(runs_object, b"PAR1" + b"garbage" * 40)
    done = _s3_cli(s3, "audit", "s3://logs/inc", "--contract", contract, "--out", out, "--run-id", "n3",
                   "--incremental", "--no-mutate", "--jobs", "1", "-q", expect=2)
    expected = f"INPUT ERROR: damaged dataset: cannot read '{runs_object}' (run 'n1'): "
    assert done.stderr.startswith(expected), done.stderr


# --- Incremental nightly runs ---------------------------------------------------------------------

def test_incremental_runs_audit_only_what_is_new(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_jsonl(logs / "a.jsonl", good_lines(5))
    write_jsonl(logs / "b.jsonl.gz", good_lines(3, start=50))
    contract = write_contract(tmp_path)
    out = tmp_path / "out"

    def run(run_id: str) -> Any:
        return audit([str(logs)], str(contract), str(out), run_id=run_id, incremental=True, jobs=1,
                     shard_bytes=1500, fail_on=("none",))

    first = run("n1")
    assert first.pairs == 8 and first.skipped is not None and first.skipped.new_inputs == 2
    # a new file, and lines appended to a.jsonl
    with open(logs / "a.jsonl", "ab") as handle:
        handle.write(b"".join(good_lines(4, start=5)))
    write_jsonl(logs / "c.jsonl", good_lines(2, start=80))
    second = run("n2")
    assert second.pairs == 6
    assert second.skipped is not None
    assert second.skipped.to_dict() == {
        "skipped_records": 8, "unchanged_inputs": 1, "unchanged_records": 3, "appended_inputs": 1,
        "appended_records_skipped": 5, "changed_inputs": 0, "new_inputs": 1, "moved_inputs": 0,
        "moved_records_skipped": 0, "held_back_lines": 0, "held_back": []}
    assert "incremental: skipped 8 already audited record(s)" in second.to_text()
    assert second.to_dict()["incremental"]["skipped_records"] == 8
    new = read_table(out, "pairs").filter(pl.col("run_id") == "n2").collect()
    assert sorted(new["pair_id"]) == ["p0005", "p0006", "p0007", "p0008", "p0080", "p0081"]
    assert sorted(new.filter(pl.col("source").str.ends_with("a.jsonl"))["source_row"]) == [6, 7, 8, 9]
    # nothing new: nothing audited, everything accounted for, and not a failure
    third = run("n3")
    assert third.pairs == 0 and third.exit_code == 0
    assert third.skipped is not None and third.skipped.records == 14
    # a rewritten file is audited again in full; another contract re-audits everything
    write_jsonl(logs / "c.jsonl", good_lines(2, start=90))
    fourth = run("n4")
    assert fourth.skipped is not None and fourth.skipped.changed_inputs == 1 and fourth.pairs == 2
    # the fingerprint is of the normalised contract: a comment changes nothing
    (tmp_path / "commented.yaml").write_text(contract.read_text() + "\n# reviewed\n")
    fifth = audit([str(logs)], str(tmp_path / "commented.yaml"), str(out), run_id="n5", incremental=True,
                  jobs=1, fail_on=("none",))
    assert fifth.pairs == 0 and fifth.skipped is not None and fifth.skipped.records == 14
    runs = read_table(out, "runs").collect()
    assert runs["pairs"].sum() == 5 + 3 + 6 + 2  # each record audited once (c.jsonl twice: rewritten)


# --- The executor interface -------------------------------------------------------------------------

def test_every_loky_worker_imports_the_engine_when_it_starts() -> None:
    """`start_worker` is loky's initializer: each worker imports the engine as soon as it is up
    (while the parent plans), not in its first task, and none waits for the others to start."""
    from benchmarks.pool_probe import worker_state
    from frayproof_audit.corpus.run.executor import Executor

    executor: Executor[None, int, tuple[int, bool]] = Executor("loky", 2)
    with executor.start():
        executor.submit(worker_state, None, list(range(6)))
        results = list(executor.completed())
    assert len({pid for pid, _ in results}) == 2
    assert all(loaded for _, loaded in results)


def _die_on_three(_shared: None, task: int) -> int:
    if task == 3:
        os._exit(9)
    time.sleep(0.05)
    return task


@pytest.mark.parametrize(("backend", "scheduler"), [
    ("loky", None),
    pytest.param("ray", "local", marks=pytest.mark.skipif(not _ray_installed(),
                                                          reason="the ray extra is not installed")),
])
def test_a_lost_worker_names_the_tasks_in_flight_and_the_rest_are_accounted_for(
        backend: str, scheduler: str | None, request: pytest.FixtureRequest) -> None:
    from frayproof_audit.corpus.run.executor import IN_FLIGHT_PER_WORKER, Executor, WorkerLost

    if backend == "ray":
        request.getfixturevalue("ray_local")

    tasks = list(range(16))
    executor: Executor[None, int, int] = Executor(backend, 2, scheduler)
    with executor:
        executor.submit(_die_on_three, None, tasks)
        done: list[int] = []
        with pytest.raises(WorkerLost) as lost:
            done.extend(executor.completed())
        in_flight = set(lost.value.in_flight)
        # Handed out ahead of the results: IN_FLIGHT_PER_WORKER per worker in the pool, plus
        # tasks that finished (and so freed a place) while the loss was being noticed, before
        # this thread took their results: under load, up to one per worker (the suite saw
        # {2..7} of 8 tasks).
        assert 3 in in_flight and len(in_flight) <= 2 * IN_FLIGHT_PER_WORKER + 2 * 2
        assert not in_flight & set(done)
        rest = [task for task in tasks if task not in done and task not in in_flight]
        executor.submit(_die_on_three, None, [task for task in rest + sorted(in_flight) if task != 3])
        done.extend(executor.completed())  # a fresh pool takes over
    assert sorted(done) == [task for task in tasks if task != 3]
