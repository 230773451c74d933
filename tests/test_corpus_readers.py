"""Inputs: expansion (files, globs, folders, Hive), shard planning, every format, field mapping."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from unittest import mock

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.inputs.expansion import InputFile, InputFileError, input_files
from frayproof_audit.corpus.inputs.field_map import ConfigError, FieldMap, load_fields_file, parse_field_specs
from frayproof_audit.corpus.inputs.shard_plan import plan
from frayproof_audit.corpus.run.audit_config import AuditConfig
from tests.corpus_support import (
    COMPACTORS,
    FAILING,
    good_lines,
    line,
    record,
    write_contract,
    write_jsonl,
    write_parquet,
)
from tests.helpers import REPO


def run(tmp_path: Path, *inputs: Path | str, **options: object) -> pl.DataFrame:
    """Audit with one job, no mutation; the pairs table sorted by (source, source_row)."""
    contract = write_contract(tmp_path)
    options.setdefault("mutate", False)
    options.setdefault("jobs", 1)
    audit([str(i) for i in inputs], str(contract), str(tmp_path / "out"), **options)  # type: ignore[arg-type]
    return read_table(tmp_path / "out", "pairs").collect().sort("source", "source_row")


# --- expansion ---------------------------------------------------------------------------

def test_folders_are_searched_recursively_and_hidden_entries_skipped(tmp_path: Path) -> None:
    data = tmp_path / "logs"
    for name in ("a.jsonl", "deep/b.jsonl.gz", "deep/er/c.parquet", "d.ndjson", "e.jsonl.zst"):
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        (data / name).write_bytes(b"")
    for name in (".hidden.jsonl", "_staging/x.jsonl", ".git/y.jsonl", "notes.txt", "_SUCCESS"):
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        (data / name).write_bytes(b"")
    found = input_files([str(data)])
    assert [Path(s.path).relative_to(data).as_posix() for s in found] == [
        "a.jsonl", "d.ndjson", "deep/b.jsonl.gz", "deep/er/c.parquet", "e.jsonl.zst",
    ]
    assert [s.kind for s in found] == ["jsonl", "jsonl", "jsonl.gz", "parquet", "jsonl.zst"]


def test_globs_files_and_duplicates(tmp_path: Path) -> None:
    for name in ("n1.jsonl", "n2.jsonl", "other.jsonl.gz"):
        (tmp_path / name).write_bytes(b"")
    found = input_files([str(tmp_path / "n*.jsonl"), str(tmp_path / "n1.jsonl"), str(tmp_path / "**/*.gz")])
    assert [Path(s.path).name for s in found] == ["n1.jsonl", "n2.jsonl", "other.jsonl.gz"]


def test_hive_folder_values_are_read_from_the_path(tmp_path: Path) -> None:
    path = tmp_path / "compactor=trim%2Fv2" / "log_date=2025-06-02" / "part-0.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    (source,) = input_files([str(tmp_path)])
    assert dict(source.hive) == {"compactor": "trim/v2", "log_date": "2025-06-02"}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: str(p / "missing.jsonl"), "does not exist"),
        (lambda p: str(p / "*.jsonl"), "matches no files"),
        (lambda p: (p / "x.csv").touch() or str(p / "x.csv"), "is not .jsonl"),
        (lambda p: (p / "empty").mkdir() or str(p / "empty"), "holds no .jsonl"),
    ],
    ids=["missing", "glob-without-match", "unsupported-file", "empty-folder"],
)
def test_unusable_inputs_fail_before_any_work(tmp_path: Path, make: object, message: str) -> None:
    given_path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(InputFileError, match=message):
        input_files([given_path])


def test_unreadable_file_is_a_source_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    path = write_jsonl(tmp_path / "a.jsonl", good_lines(1))
    path.chmod(0)
    with pytest.raises(InputFileError, match="cannot read"):
        input_files([str(path)])


# --- shard planning -----------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=0, max_value=40), min_size=0, max_size=30),
    shard_bytes=st.integers(min_value=1, max_value=200),
    trailing_newline=st.booleans(),
)
def test_jsonl_ranges_cover_the_file_at_line_starts(
    tmp_path_factory: pytest.TempPathFactory, lengths: list[int], shard_bytes: int, trailing_newline: bool
) -> None:
    folder = tmp_path_factory.mktemp("plan")
    data = b"\n".join(b"x" * n for n in lengths) + (b"\n" if trailing_newline and lengths else b"")
    path = folder / "a.jsonl"
    path.write_bytes(data)
    shards = plan((InputFile(str(path), "jsonl", len(data)),), shard_bytes)
    position, line_no = 0, 1
    for shard in shards:
        assert shard.start == position
        assert shard.start == 0 or data[shard.start - 1 : shard.start] == b"\n"
        assert shard.first_row == line_no
        piece = data[shard.start : shard.stop]
        lines = piece.count(b"\n") + (0 if piece.endswith(b"\n") else 1)
        assert shard.records == lines
        position, line_no = shard.stop, line_no + lines
    assert position == len(data)
    if len(data) > 0:
        assert all(s.stop - s.start >= shard_bytes or s is shards[-1] for s in shards)


def test_big_jsonl_is_split_and_compressed_files_are_one_shard(tmp_path: Path) -> None:
    plain = write_jsonl(tmp_path / "a.jsonl", good_lines(30))
    gz = write_jsonl(tmp_path / "b.jsonl.gz", good_lines(30))
    parquet = write_parquet(tmp_path / "c.parquet", [record(i) for i in range(10)], row_group_size=3)
    shards = plan(input_files([str(tmp_path)]), 4000)
    kinds = [s.file.kind for s in shards]
    assert kinds.count("jsonl") > 3
    assert kinds.count("jsonl.gz") == 1
    assert [(s.start, s.stop, s.first_row, s.records) for s in shards if s.file.kind == "parquet"] == [
        (0, 1, 0, 3), (1, 2, 3, 3), (2, 3, 6, 3), (3, 4, 9, 1),
    ]
    assert [s.ordinal for s in shards] == list(range(len(shards)))
    assert "lines 1-" in shards[0].name and plain.name in shards[0].name
    assert gz.name in next(s.name for s in shards if s.file.kind == "jsonl.gz")
    assert "row group 0, rows 0-2" in next(s.name for s in shards if s.file.path == str(parquet))


# --- formats --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["a.jsonl", "a.jsonl.gz", "a.jsonl.zst", "a.ndjson"])
def test_every_jsonl_compression_gives_the_same_pairs(tmp_path: Path, name: str) -> None:
    write_jsonl(tmp_path / "in" / name, good_lines(8))
    pairs = run(tmp_path, tmp_path / "in", shard_bytes=1500)
    assert pairs["source_row"].to_list() == list(range(1, 9))
    assert pairs["pair_id"].to_list() == [f"p{i:04d}" for i in range(8)]
    expected = ["fail" if COMPACTORS[i % 4] in FAILING else "pass" for i in range(8)]
    assert pairs["status"].to_list() == expected


@pytest.mark.parametrize("nested", [False, True], ids=["json-strings", "nested-lists"])
def test_parquet_before_after_as_json_strings_or_nested_lists(tmp_path: Path, nested: bool) -> None:
    records = [record(i) for i in range(8)]
    write_parquet(tmp_path / "in.parquet", records, nested=nested, row_group_size=3)
    pairs = run(tmp_path, tmp_path / "in.parquet")
    assert pairs["source_row"].to_list() == list(range(8))
    expected = ["fail" if COMPACTORS[i % 4] in FAILING else "pass" for i in range(8)]
    assert pairs["status"].to_list() == expected
    assert pairs["messages_before"].to_list() == [len(records[0]["before"])] * 8


def test_parquet_timestamp_column_and_integer_ids(tmp_path: Path) -> None:
    rows = [{"pair_id": 7, "session_id": 3, "before": json.dumps(record(0)["before"]),
             "after": json.dumps(record(0)["after"]),
             "logged_at": datetime(2025, 6, 4, 23, 30, tzinfo=UTC)}]
    pq.write_table(pa.Table.from_pylist(rows), str(tmp_path / "t.parquet"))
    pairs = run(tmp_path, tmp_path / "t.parquet")
    assert pairs.select("pair_id", "session_id", "log_date").row(0) == ("7", "3", datetime(2025, 6, 4).date())


def test_crlf_bom_and_blank_lines(tmp_path: Path) -> None:
    lines = good_lines(3)
    data = b"\xef\xbb\xbf" + lines[0].replace(b"\n", b"\r\n") + b"\n  \n" + lines[1] + b"\n" + lines[2][:-1]
    (tmp_path / "a.jsonl").write_bytes(data)
    pairs = run(tmp_path, tmp_path / "a.jsonl")
    assert pairs["source_row"].to_list() == [1, 4, 6]
    assert pairs["input_error"].to_list() == [None, None, None]


def test_default_pair_id_is_source_and_row(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a.jsonl", [line({k: v for k, v in record(0).items() if k != "pair_id"})])
    pairs = run(tmp_path, tmp_path / "a.jsonl")
    assert pairs["pair_id"].to_list() == [f"{tmp_path / 'a.jsonl'}:1"]


# --- field mapping -------------------------------------------------------------------------

def _nested(index: int) -> dict[str, object]:
    rec = record(index)
    return {
        "request": {"messages": rec["before"], "id": rec["pair_id"]},
        "response": {"messages": rec["after"]},
        "meta.compactor": rec["compactor"],
        "ts": rec["logged_at"],
    }


FIELDS = {"before": "request.messages", "after": "response.messages", "pair_id": "request.id",
          "compactor": "meta.compactor", "logged_at": "ts"}


def test_dotted_paths_and_literal_dotted_keys(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a.jsonl", [line(_nested(i)) for i in range(4)])
    pairs = run(tmp_path, tmp_path / "a.jsonl", fields=FIELDS)
    assert pairs["pair_id"].to_list() == ["p0000", "p0001", "p0002", "p0003"]
    assert pairs["compactor"].to_list() == list(COMPACTORS)
    assert pairs["status"].to_list() == ["pass", "pass", "fail", "fail"]


def test_dotted_paths_into_parquet_structs(tmp_path: Path) -> None:
    pq.write_table(pa.Table.from_pylist([_nested(i) for i in range(4)]), str(tmp_path / "s.parquet"))
    pairs = run(tmp_path, tmp_path / "s.parquet", fields=FIELDS)
    assert pairs["status"].to_list() == ["pass", "pass", "fail", "fail"]
    assert pairs["compactor"].to_list() == list(COMPACTORS)


def test_a_mapped_field_that_is_missing_names_its_path(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a.jsonl", [line(record(0))])
    pairs = run(tmp_path, tmp_path / "a.jsonl", fields={"after": "response.messages"})
    assert pairs["input_error"][0].endswith("line 1: after (at 'response.messages') is missing")


def test_fields_config_file(tmp_path: Path) -> None:
    config = tmp_path / "audit.yaml"
    config.write_text("fields:\n  before: request.messages\n  after: response.messages\n")
    assert load_fields_file(config) == {"before": "request.messages", "after": "response.messages"}
    config.write_text("fields: {before: x}\nworkers: 3\n")
    with pytest.raises(ConfigError, match="workers: unknown key"):
        load_fields_file(config)
    with pytest.raises(ConfigError, match="Cannot read config"):
        load_fields_file(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("specs", "message"),
    [(["before"], "expected NAME=PATH"), (["colour=x"], "unknown field"), (["before="], "non-empty"),
     (["before=a..b"], "empty segment")],
)
def test_bad_field_specs(specs: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        FieldMap().with_specs(parse_field_specs(specs))


def test_hive_folder_fills_a_missing_field(tmp_path: Path) -> None:
    rec = {k: v for k, v in record(1).items() if k != "compactor"}
    write_jsonl(tmp_path / "in" / "compactor=window" / "a.jsonl", [line(rec)])
    pairs = run(tmp_path, tmp_path / "in")
    assert pairs["compactor"].to_list() == ["window"]


def test_config_validation() -> None:
    with pytest.raises(ConfigError, match="no inputs"):
        AuditConfig(inputs=(), out="o")
    with pytest.raises(ConfigError, match="run id"):
        AuditConfig(inputs=("a",), out="o", run_id="../escape")
    with pytest.raises(ConfigError, match="cannot be combined"):
        AuditConfig(inputs=("a",), out="o", fail_on=("none", "failures"))
    with pytest.raises(ConfigError, match="backend"):
        AuditConfig(inputs=("a",), out="o", backend="spark")
    with pytest.raises(ConfigError, match="jobs"):
        AuditConfig(inputs=("a",), out="o", n_jobs=0)


def test_jobs_minus_one_uses_only_the_workers_the_input_keeps_busy() -> None:
    from frayproof_audit.corpus.run.executor import AUTO_BYTES_PER_WORKER, effective_jobs

    assert effective_jobs(-1, 10, 1000) == 1  # small input: no pool at all
    assert effective_jobs(-1, 1, 10**12) == 1  # one shard: one worker
    assert effective_jobs(3, 10, 1000) == 3  # an explicit --jobs is honoured
    assert effective_jobs(-1, 64, 64 * AUTO_BYTES_PER_WORKER) >= 1
    assert effective_jobs(8, 2) == 2


@given(n_jobs=st.sampled_from([-1, 1, 2, 3, 8]), tasks=st.integers(0, 70), cores=st.integers(1, 64),
       weight=st.none() | st.integers(0, 80 * 48 * 1024 * 1024))
def test_jobs_without_counting_cores_equal_the_formula(
        n_jobs: int, tasks: int, cores: int, weight: int | None) -> None:
    """`effective_jobs` skips counting the cores (importing joblib) where one task or a small
    input decides the answer; it still equals the formula whatever the core count."""
    import joblib

    from frayproof_audit.corpus.run.executor import AUTO_BYTES_PER_WORKER, effective_jobs

    wanted = n_jobs
    if n_jobs == -1:
        wanted = cores if weight is None else min(cores, max(1, weight // AUTO_BYTES_PER_WORKER))
    with mock.patch.object(joblib, "cpu_count", return_value=cores):
        assert effective_jobs(n_jobs, tasks, weight) == max(1, min(wanted, tasks))


def test_a_small_run_never_imports_joblib(tmp_path: Path) -> None:
    """The shortcut above is the point: a small audit with the default `--jobs -1` runs in its
    own process without importing joblib and loky (a sixth of its fixed cost)."""
    probe = ("import sys\nfrom frayproof_audit.cli import main\n"
             "try:\n    main(sys.argv[1:], prog_name='frayproof-audit')\n"
             "except SystemExit as end:\n    assert end.code == 0, end.code\n"
             "print('joblib' in sys.modules)")
    args = ["audit", str(REPO / "examples" / "agent-logs"), "--out", str(tmp_path / "out"), "-q"]
    done = subprocess.run([sys.executable, "-c", probe, *args], cwd=REPO, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "False"
