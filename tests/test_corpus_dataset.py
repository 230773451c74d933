"""The dataset: documented types in Polars and DuckDB, metadata, determinism, replace, cleanup."""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frayproof_audit.checks import CONDITIONS
from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.dataset.checked_files import committed_files
from frayproof_audit.corpus.store.arrow_tables import (
    FINDINGS_SCHEMA,
    SCHEMAS,
    TABLES,
    TABLES_SCHEMA_VERSION,
    TableBuilder,
    file_metadata,
)
from frayproof_audit.corpus.store.layout import STAGING
from frayproof_audit.corpus.store.parquet_files import write_parquet
from frayproof_audit.report import VIOLATION_FIELDS
from tests.corpus_support import (
    MAX_RECORD_BYTES,
    good_lines,
    line,
    mixed_corpus,
    record,
    write_contract,
    write_jsonl,
)

DATA_TABLES = ("pairs", "findings", "mutants")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One audit of the mixed corpus (every format, every bad kind), mutation on."""
    folder = tmp_path_factory.mktemp("dataset")
    inputs, _ = mixed_corpus(folder / "in")
    audit([str(inputs)], str(write_contract(folder)), str(folder / "out"), jobs=1, run_id="night-1",
          max_record_bytes=MAX_RECORD_BYTES, shard_bytes=3000)
    return folder / "out"


POLARS_TYPES = {"string": pl.String(), "int64": pl.Int64(), "int32": pl.Int32(), "double": pl.Float64(),
                "bool": pl.Boolean(),
                "timestamp[us, tz=UTC]": pl.Datetime("us", "UTC"),
                "list<item: string not null>": pl.List(pl.String())}


def _polars_type(field: Any) -> pl.DataType:
    return POLARS_TYPES[str(field.type)]


@pytest.mark.parametrize("table", TABLES)
def test_polars_reads_every_table_with_documented_types(dataset: Path, table: str) -> None:
    frame = read_table(dataset, table).collect()
    assert frame.height > 0
    expected = {f.name: _polars_type(f) for f in SCHEMAS[table]}
    if table != "runs":
        expected["log_date"] = pl.Date()
    assert dict(frame.schema) == expected
    # the plain directory scan users will write gives the same rows
    if table != "runs":
        direct = pl.scan_parquet(dataset / table).collect()
        assert direct.height == frame.height and direct.schema["log_date"] == pl.Date()


DUCK_TYPES = {"string": "VARCHAR", "int64": "BIGINT", "int32": "INTEGER", "double": "DOUBLE",
              "bool": "BOOLEAN",
              "timestamp[us, tz=UTC]": "TIMESTAMP WITH TIME ZONE", "list<item: string not null>": "VARCHAR[]"}


@pytest.mark.parametrize("table", TABLES)
def test_duckdb_reads_every_table_with_partitions(dataset: Path, table: str) -> None:
    pattern = f"{dataset}/{table}/**/*.parquet" if table != "runs" else f"{dataset}/runs/*.parquet"
    con = duckdb.connect()
    query = f"SELECT * FROM read_parquet('{pattern}', hive_partitioning = true)"
    described = con.sql(f"DESCRIBE {query}").fetchall()
    types = {name: kind for name, kind, *_ in described}
    expected = {f.name: DUCK_TYPES[str(f.type)] for f in SCHEMAS[table]}
    if table != "runs":
        expected["log_date"] = "DATE"
    assert types == expected
    count = con.sql(f"SELECT count(*) FROM read_parquet('{pattern}', hive_partitioning = true)").fetchall()
    assert count == [(read_table(dataset, table).collect().height,)]


def test_every_file_carries_the_metadata_keys(dataset: Path) -> None:
    files = [f for table in TABLES for f in committed_files(dataset, table)]
    assert len(files) > 4
    for path in files:
        meta = {k.decode(): v.decode() for k, v in (pq.read_schema(path).metadata or {}).items()}
        assert meta["frayproof_audit.schema_version"] == str(TABLES_SCHEMA_VERSION)
        assert meta["run_id"] == "night-1"
        assert len(meta["contract_sha256"]) == 64
        assert meta["frayproof_audit.version"]
        assert meta["frayproof_audit.table"] == Path(path).relative_to(dataset).parts[0]


def test_runs_row_is_the_commit_record(dataset: Path) -> None:
    (run,) = read_table(dataset, "runs").collect().to_dicts()
    pairs = read_table(dataset, "pairs").collect()
    assert run["pairs"] == pairs.height
    assert run["passed"] + run["failed"] + run["input_errors"] == run["pairs"]
    assert run["input_errors"] == pairs.filter(pl.col("status") == "input_error").height
    assert run["not_audited_shards"] == [] and run["not_audited_records"] == 0
    assert "tool_pairs" in run["contract_text"]
    assert json.loads(run["options"])["max_record_bytes"] == MAX_RECORD_BYTES
    assert all((dataset / name).is_file() for name in run["files"])
    listed = {str(dataset / name) for name in run["files"]}
    on_disk = {str(p) for t in DATA_TABLES for p in (dataset / t).glob("log_date=*/*.parquet")}
    assert listed == on_disk
    assert not any((dataset / STAGING).iterdir())


def test_part_files_follow_the_layout(dataset: Path) -> None:
    for table in DATA_TABLES:
        for path in (dataset / table).rglob("*.parquet"):
            assert path.parent.name.startswith("log_date=")
            datetime.strptime(path.parent.name[len("log_date="):], "%Y-%m-%d")
            assert path.name.startswith("part-night-1-") and path.parent.parent.name == table
    assert [p.name for p in (dataset / "runs").iterdir()] == ["part-night-1.parquet"]


def _tables(out: Path) -> dict[str, pl.DataFrame]:
    return {t: read_table(out, t).collect() for t in DATA_TABLES}


def test_identical_tables_with_one_job_two_processes_and_threads(tmp_path: Path) -> None:
    contract = write_contract(tmp_path)
    inputs = tmp_path / "in"
    write_jsonl(inputs / "a.jsonl", [*good_lines(30), b"{oops\n", *good_lines(15, start=30, night=1)])
    write_jsonl(inputs / "b.jsonl.gz", good_lines(6, start=60, night=2))
    results = {}
    for name, jobs, backend in (("one", 1, "loky"), ("loky2", 2, "loky"), ("threads", 2, "threading")):
        out = tmp_path / name
        audit([str(inputs)], str(contract), str(out), jobs=jobs, backend=backend, run_id="same",
              shard_bytes=4000)
        results[name] = (_tables(out), sorted(str(p.relative_to(out)) for p in out.rglob("part-*")))
    one_tables, one_files = results["one"]
    assert len([f for f in one_files if f.startswith("pairs/")]) > 4
    for other in ("loky2", "threads"):
        tables, files = results[other]
        assert files == one_files
        for table in DATA_TABLES:
            assert tables[table].equals(one_tables[table]), (other, table)
    assert one_tables["pairs"].height == 52


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_run_id_replaces_that_run_only(tmp_path: Path) -> None:
    contract = str(write_contract(tmp_path))
    out = tmp_path / "out"
    first = write_jsonl(tmp_path / "first.jsonl", good_lines(8))
    other = write_jsonl(tmp_path / "other.jsonl", good_lines(5, start=50, night=1))
    audit([str(first)], contract, str(out), jobs=1, run_id="a", mutate=False)
    audit([str(other)], contract, str(out), jobs=1, run_id="b", mutate=False)
    b_files = {p: _digest(p) for p in out.rglob("part-b*.parquet")}
    replacement = write_jsonl(tmp_path / "replacement.jsonl", good_lines(3, start=90, night=2))
    audit([str(replacement)], contract, str(out), jobs=1, run_id="a", mutate=False)
    pairs = read_table(out, "pairs").collect()
    assert pairs.group_by("run_id").len().sort("run_id").rows() == [("a", 3), ("b", 5)]
    assert set(pairs.filter(pl.col("run_id") == "a")["source"]) == {str(replacement)}
    assert {p: _digest(p) for p in out.rglob("part-b*.parquet")} == b_files
    assert not [p for p in out.rglob("part-a-*.parquet") if "2025-06-02" in str(p)]
    assert sorted(read_table(out, "runs").collect()["run_id"]) == ["a", "b"]


@pytest.mark.parametrize("compactor", ["../../escape", "a/b", "log_date=1999-01-01", "x=y/../z", ".."])
def test_compactor_names_cannot_escape_or_break_the_layout(tmp_path: Path, compactor: str) -> None:
    value = record(0, compactor="keep_all") | {"compactor": compactor}
    path = write_jsonl(tmp_path / "in.jsonl", [line(value)])
    out = tmp_path / "deep" / "out"
    audit([str(path)], str(write_contract(tmp_path)), str(out), jobs=1, run_id="r", mutate=False)
    written = [p for p in tmp_path.rglob("*.parquet") if p.parent.name != "out"]
    assert all(out in p.parents for p in written if p != path)
    for table in DATA_TABLES:
        for file in (out / table).rglob("*.parquet"):
            folder, name = file.relative_to(out / table).parts  # exactly one level: the partition
            datetime.strptime(folder, "log_date=%Y-%m-%d")
            assert name == "part-r-00000.parquet"
    assert [p.parent.name for p in (out / "pairs").rglob("*.parquet")] == ["log_date=2025-06-02"]
    assert read_table(out, "pairs").collect()["compactor"].to_list() == [compactor]
    con = duckdb.connect()
    got = con.sql(f"SELECT compactor, log_date FROM read_parquet('{out}/pairs/**/*.parquet')").fetchall()
    assert got == [(compactor, datetime(2025, 6, 2).date())]


def test_leftovers_of_dead_runs_are_cleaned_and_live_ones_kept(tmp_path: Path) -> None:
    contract = str(write_contract(tmp_path))
    out = tmp_path / "out"
    data = write_jsonl(tmp_path / "a.jsonl", good_lines(4))
    audit([str(data)], contract, str(out), jobs=1, run_id="kept", mutate=False)
    orphan = out / "pairs" / "log_date=2025-06-02" / "part-dead-00000.parquet"
    shutil.copy(next((out / "pairs").rglob("part-kept-*.parquet")), orphan)
    dead = out / STAGING / "dead.1.abc"
    dead.mkdir()
    (out / STAGING / "dead.1.abc.lock").touch()
    live = out / STAGING / "live.2.def"
    live.mkdir()
    with open(out / STAGING / "live.2.def.lock", "ab") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        assert read_table(out, "pairs").collect().height == 4  # the orphan is never counted
        audit([str(data)], contract, str(out), jobs=1, run_id="next", mutate=False)
    assert not orphan.exists() and not dead.exists()
    assert live.exists()
    assert sorted(read_table(out, "runs").collect()["run_id"]) == ["kept", "next"]


def test_empty_tables_still_have_a_readable_file(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "a.jsonl", [line(record(0, compactor="keep_all"))])
    out = tmp_path / "out"
    audit([str(data)], str(write_contract(tmp_path)), str(out), jobs=1, run_id="r", mutate=False)
    assert read_table(out, "findings").collect().height == 0
    assert read_table(out, "mutants").collect().height == 0
    con = duckdb.connect()
    got = con.sql(f"SELECT count(*) FROM read_parquet('{out}/findings/**/*.parquet')").fetchall()
    assert got == [(0,)]


_text = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=30)
_violation = st.fixed_dictionaries({
    "check": st.sampled_from(["tool_pair_integrity", "pinned_content", "retention", "structure"]),
    "code": st.none() | st.sampled_from(sorted(CONDITIONS)),
    "severity": st.sampled_from(["error", "warning"]),
    "snapshot": st.sampled_from(["before", "after"]),
    "message_index": st.none() | st.integers(min_value=0, max_value=2**31 - 1),
    "tool_call_id": st.none() | _text,
    "pin": st.none() | _text,
    "rule": st.none() | _text,
    "message": _text,
})


@settings(max_examples=40, deadline=None)
@given(
    violations=st.lists(_violation, max_size=12),
    compactor=st.none() | _text,
    logged=st.none() | st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)),
)
def test_findings_round_trip_through_parquet_and_polars(
    tmp_path_factory: pytest.TempPathFactory,
    violations: list[dict[str, Any]],
    compactor: str | None,
    logged: datetime | None,
) -> None:
    folder = tmp_path_factory.mktemp("roundtrip")
    logged_at = logged.replace(tzinfo=UTC) if logged is not None else None
    builder = TableBuilder(FINDINGS_SCHEMA)
    rows = []
    for index, violation in enumerate(violations):
        row = {"run_id": "r", "pair_id": f"p{index}", "compactor": compactor, "logged_at": logged_at,
               **{name: violation[name] for name in VIOLATION_FIELDS},
               "repairable": (None, True, False)[index % 3],
               "origin": (None, "introduced", "inherited")[index % 3]}
        builder.append("2025-06-02", row)
        rows.append(row)
    for log_date, table in builder.by_log_date().items():
        write_parquet(table, folder / f"log_date={log_date}" / "part-r-00000.parquet",
                      file_metadata("findings", "r", "0" * 64))
    if not rows:
        assert builder.by_log_date() == {}
        return
    back = pl.read_parquet(folder / "log_date=2025-06-02" / "part-r-00000.parquet").to_dicts()
    for row in back:
        if row["logged_at"] is not None:
            row["logged_at"] = row["logged_at"].astimezone(UTC)
    assert back == rows
