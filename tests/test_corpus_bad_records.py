"""Bad input never stops a run and is never lost: one `input_error` row per bad record."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl
import pytest

from frayproof_audit.corpus import audit, read_table
from tests.corpus_support import (
    BAD_LINES,
    MAX_RECORD_BYTES,
    good_lines,
    mixed_corpus,
    record,
    write_contract,
    write_jsonl,
    write_parquet,
)


def pairs_of(tmp_path: Path, *inputs: Path, **options: object) -> pl.DataFrame:
    contract = write_contract(tmp_path)
    options.setdefault("jobs", 1)
    audit([str(i) for i in inputs], str(contract), str(tmp_path / "out"), run_id="bad",
          max_record_bytes=MAX_RECORD_BYTES, **options)  # type: ignore[arg-type]
    return read_table(tmp_path / "out", "pairs").collect()


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_each_bad_kind_is_exactly_one_input_error_row(tmp_path: Path, kind: str) -> None:
    value, fragment = BAD_LINES[kind]
    path = write_jsonl(tmp_path / "in" / "night.jsonl", [*good_lines(2), value, *good_lines(2, start=2)])
    pairs = pairs_of(tmp_path, path, mutate=False)
    assert pairs.height == 5
    bad = pairs.filter(pl.col("status") == "input_error")
    assert bad.height == 1
    row = bad.row(0, named=True)
    assert row["source"] == str(path) and row["source_row"] == 3
    assert row["input_error"].startswith(f"{path} line 3: ")
    assert fragment in row["input_error"]
    assert row["errors"] is None and row["mutants_applicable"] is None
    assert len(row["record_sha256"]) == 64


def test_rows_in_pairs_equal_records_in_a_corpus_with_every_bad_kind(tmp_path: Path) -> None:
    folder, records = mixed_corpus(tmp_path / "in")
    pairs = pairs_of(tmp_path, folder, shard_bytes=2000)
    assert pairs.height == records
    assert pairs.filter(pl.col("status") == "input_error").height == len(BAD_LINES)
    keys = pairs.select("source", "source_row")
    assert keys.unique().height == records
    reasons = pairs["input_error"].drop_nulls().to_list()
    for _, fragment in BAD_LINES.values():
        assert sum(fragment in reason for reason in reasons) >= 1, fragment


def test_bad_parquet_rows_name_the_row(tmp_path: Path) -> None:
    rows = [record(i) for i in range(4)]
    path = write_parquet(tmp_path / "in.parquet", rows)
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path).to_pylist()
    table[1]["after"] = "[{not json"
    table[2]["after"] = json.dumps({"role": "user"})
    pq.write_table(pa.Table.from_pylist(table), str(path))
    pairs = pairs_of(tmp_path, path, mutate=False).sort("source_row")
    assert pairs["status"].to_list()[1:3] == ["input_error", "input_error"]
    assert pairs["input_error"][1].startswith(f"{path} row 1: after is not valid JSON")
    expected = f"{path} row 2: after must be an array of message objects, got an object"
    assert pairs["input_error"][2] == expected


def test_nested_parquet_with_a_non_finite_number(tmp_path: Path) -> None:
    rec = record(0)
    rec["after"] = [dict(m, score=float("nan")) for m in rec["after"]]
    path = write_parquet(tmp_path / "n.parquet", [rec], nested=True)
    pairs = pairs_of(tmp_path, path, mutate=False)
    assert pairs["input_error"][0] == f"{path} row 0: after holds a non-finite number"


def test_a_corrupt_gzip_keeps_what_was_read_and_reports_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl.gz"
    data = gzip.compress(b"".join(good_lines(40)))
    path.write_bytes(data[: len(data) * 2 // 3])
    pairs = pairs_of(tmp_path, path, mutate=False).sort("source_row")
    bad = pairs.filter(pl.col("status") == "input_error")
    assert bad.height == 1
    assert "cannot read the stream" in bad["input_error"][0]
    assert bad["source_row"][0] == pairs.height  # reported right after the last good line
    assert pairs.height > 1


def test_input_errors_keep_the_fields_that_could_be_read(tmp_path: Path) -> None:
    value = json.dumps({**record(3), "after": "oops"}).encode() + b"\n"
    path = write_jsonl(tmp_path / "a.jsonl", [value])
    pairs = pairs_of(tmp_path, path, mutate=False)
    row = pairs.row(0, named=True)
    assert (row["pair_id"], row["compactor"], row["session_id"]) == ("p0003", "drop_system", "s3")
    assert str(row["log_date"]) == "2025-06-02"
