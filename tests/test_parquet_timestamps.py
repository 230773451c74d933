"""Parquet timestamps as `logged_at`: every unit, with or without a time zone, at microseconds.

pandas and polars write nanosecond columns by default, Spark writes INT96; all of them are times a
log legitimately holds. A time Python's `datetime` cannot hold (outside the years 1-9999) costs its
own row, with a reason naming it, never the run.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.inputs.shard_reader import at_microseconds
from tests.corpus_support import record
from tests.helpers import run_cli

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
INT64 = (-(2**63), 2**63 - 1)
WRITABLE = {"s": (INT64[0] // 1000 + 1, INT64[1] // 1000), "ms": INT64, "us": INT64, "ns": INT64}
"""What each unit can hold in Parquet (which has no seconds: Arrow writes them as milliseconds)."""


def floor_micros(value: int, unit: str) -> datetime:
    """The instant `value` (in `unit` since the epoch) truncated to its microsecond (toward the
    earlier one, also before 1970), by integer arithmetic: what `logged_at` must read."""
    return EPOCH + timedelta(microseconds=value * 10**6 // PER_SECOND[unit])


def snapshots(count: int) -> dict[str, list[str]]:
    """`count` passing before/after pairs as JSON text columns."""
    rows = [record(index, compactor="keep_all") for index in range(count)]
    return {"before": [json.dumps(row["before"]) for row in rows],
            "after": [json.dumps(row["after"]) for row in rows]}


def pairs(out: Path) -> pl.DataFrame:
    return read_table(out, "pairs").collect().sort("source", "source_row")


def run(tmp_path: Path, table: pa.Table, **options: Any) -> pl.DataFrame:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "t.parquet"
    pq.write_table(table, str(path))
    out = tmp_path / "out"
    audit([str(path)], None, str(out), jobs=1, mutate=False, max_input_error_rate=None,
          fail_on=("none",), **options)
    return pairs(out)


def test_polars_nanosecond_timestamps_are_read_at_microseconds(tmp_path: Path) -> None:
    """The issue's reproducer: 50 records, `time.time_ns()` values, cast to Datetime("ns", "UTC")."""
    nanos = [now if now % 1000 else now + 1 for now in (time.time_ns() for _ in range(50))]
    frame = pl.DataFrame({**snapshots(50), "logged_at": nanos})
    frame = frame.with_columns(pl.col("logged_at").cast(pl.Datetime("ns", "UTC")))
    frame.write_parquet(tmp_path / "p.parquet")
    for real, out in ((False, "o"), (True, "o2")):
        done = run_cli("audit", "p.parquet", "--out", out, "--format", "json", "-q",
                       expect=0, real=real, cwd=tmp_path)
        summary = json.loads(done.stdout)
        assert (summary["pairs"], summary["passed"], summary["input_errors"]) == (50, 50, 0)
        rows = pairs(tmp_path / out)
        assert rows["logged_at"].to_list() == [floor_micros(value, "ns") for value in nanos]
        assert rows["logged_at_missing"].to_list() == [False] * 50


CASES = [
    # (unit, value): times at the edges of what each unit and datetime can hold
    ("ns", -1), ("ns", -1001), ("ns", 1999), ("ns", 2**63 - 1), ("ns", -(2**63)),
    ("ns", 1_748_858_400_123_456_789),
    ("us", 253_402_300_799_999_999), ("us", -62_135_596_800_000_000), ("us", -1),
    ("ms", 253_402_300_799_999), ("ms", -62_135_596_800_000), ("ms", 1_748_858_400_123),
    ("s", 253_402_300_799), ("s", -62_135_596_800), ("s", 0),
]


def test_every_unit_with_or_without_a_time_zone(tmp_path: Path) -> None:
    """A naive timestamp is UTC (as a string without an offset is); an aware one is converted."""
    for number, zone in enumerate((None, "UTC", "+05:30", "Europe/Paris", "America/New_York")):
        for unit in PER_SECOND:
            values = [value for kind, value in CASES if kind == unit]
            table = pa.table({**snapshots(len(values)),
                              "logged_at": pa.array(values, pa.timestamp(unit, tz=zone))})
            rows = run(tmp_path / f"{number}-{unit}", table)
            assert rows["input_error"].to_list() == [None] * len(values), (zone, unit)
            assert rows["logged_at"].to_list() == [floor_micros(v, unit) for v in values], (zone, unit)


def test_times_python_cannot_hold_cost_only_their_rows(tmp_path: Path) -> None:
    outside = [("s", WRITABLE["s"][1]), ("s", WRITABLE["s"][0]), ("s", 253_402_300_800),
               ("s", -62_135_596_801), ("ms", 2**63 - 1), ("ms", 253_402_300_800_000),
               ("us", -62_135_596_800_000_001), ("us", 2**63 - 1)]
    for number, (unit, value) in enumerate(outside):
        for zone in (None, "UTC", "Asia/Tokyo"):
            times = pa.array([1_748_858_400 * PER_SECOND[unit], value, None], pa.timestamp(unit, tz=zone))
            rows = run(tmp_path / f"{number}-{zone}", pa.table({**snapshots(3), "logged_at": times}))
            assert rows["status"].to_list() == ["pass", "input_error", "pass"], (unit, value, zone)
            reason = rows["input_error"][1]
            assert reason.startswith(f"{tmp_path / f'{number}-{zone}' / 't.parquet'} row 1: column "
                                     "'logged_at' holds "), reason
            assert "outside the years 1-9999" in reason, reason
            assert rows["logged_at_missing"].to_list() == [False, True, True]  # filed under the run date


def test_a_time_zone_python_does_not_know_still_names_the_instant(tmp_path: Path) -> None:
    """Arrow stores every aware timestamp as a UTC instant; the zone only says how to show it. So
    a zone name Python does not know, or a local time past the year 9999 of an instant before it
    (9999-12-31T23:59:59.999999Z is the year 10000 in UTC+14), loses nothing."""
    cases = [("ns", "Mars/Olympus_Mons", [1_748_858_400_000_000_123, -1]),
             ("us", "Pacific/Kiritimati", [1_748_858_400_000_000, 253_402_300_799_999_999]),
             ("s", "-12:00", [1_748_858_400, -62_135_596_800])]
    for unit, zone, values in cases:
        times = pa.array(values, pa.timestamp(unit, tz=zone))
        rows = run(tmp_path / unit, pa.table({**snapshots(2), "logged_at": times}))
        assert rows["input_error"].to_list() == [None, None], zone
        assert rows["logged_at"].to_list() == [floor_micros(value, unit) for value in values]


def test_nanoseconds_inside_a_struct_and_through_a_field_mapping(tmp_path: Path) -> None:
    nanos = [1_748_858_400_123_456_789, -5]
    meta = pa.StructArray.from_arrays(
        [pa.array([*nanos, None], pa.timestamp("ns", tz="UTC")), pa.array(["a", "b", "c"])],
        names=["at", "who"])
    rows = run(tmp_path, pa.table({**snapshots(3), "meta": meta}),
               fields={"logged_at": "meta.at", "compactor": "meta.who"})
    assert rows["input_error"].to_list() == [None] * 3
    assert rows["logged_at"].to_list()[:2] == [floor_micros(value, "ns") for value in nanos]
    assert rows["logged_at_missing"].to_list() == [False, False, True]
    assert rows["compactor"].to_list() == ["a", "b", "c"]


def test_spark_int96_times_outside_the_nanosecond_range_read_right(tmp_path: Path) -> None:
    """INT96 is read at microseconds: at nanoseconds Arrow wraps the years outside 1677-2262."""
    times = [datetime(2500, 1, 1, 0, 0, 0, 123456), datetime(1500, 6, 2, 10, 0), datetime(2025, 6, 2)]
    table = pa.table({**snapshots(3), "logged_at": pa.array(times, pa.timestamp("us"))})
    path = tmp_path / "spark.parquet"
    pq.write_table(table, str(path), use_deprecated_int96_timestamps=True)
    audit([str(path)], None, str(tmp_path / "out"), jobs=1, mutate=False)
    assert pairs(tmp_path / "out")["logged_at"].to_list() == [t.replace(tzinfo=UTC) for t in times]


def unit_and_values(unit: str) -> st.SearchStrategy[tuple[str, list[int]]]:
    low, high = WRITABLE[unit]
    near = st.integers(-(10**18), 10**18).map(lambda nanos: nanos // (10**9 // PER_SECOND[unit]))
    values = st.integers(low, high) | near  # anywhere, and in 1938-2001 (10^18 ns of 1970)
    return st.tuples(st.just(unit), st.lists(values, min_size=1, max_size=12))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(tuple(PER_SECOND)).flatmap(unit_and_values),
       zone=st.sampled_from((None, "UTC", "-03:00", "Australia/Sydney")))
def test_any_timestamp_is_its_microsecond_or_its_rows_input_error(
    tmp_path_factory: Any, case: tuple[str, list[int]], zone: str | None
) -> None:
    unit, values = case
    folder = tmp_path_factory.mktemp("ts")
    table = pa.table({**snapshots(len(values)), "logged_at": pa.array(values, pa.timestamp(unit, tz=zone))})
    rows = run(folder, table)
    assert rows.height == len(values)
    for value, (status, logged_at, reason) in zip(
            values, rows.select("status", "logged_at", "input_error").iter_rows(), strict=True):
        try:
            expected = floor_micros(value, unit)
        except OverflowError:
            assert status == "input_error" and "outside the years 1-9999" in reason, (value, reason)
        else:
            assert (status, logged_at) == ("pass", expected), (value, reason)


def test_at_microseconds_keeps_slices_nulls_and_nesting() -> None:
    """Lists of structs of nanoseconds (a message list with times in it), sliced as a batch is."""
    nanos = [[{"at": -1, "n": 1}, None, {"at": None, "n": 2}], None, [], [{"at": 2**63 - 1, "n": 3}]]
    kind = pa.list_(pa.struct([("at", pa.timestamp("ns", tz="UTC")), ("n", pa.int64())]))
    array = pa.array([[{"at": -(2**63), "n": 0}], *nanos], kind).slice(1)
    batch = at_microseconds(pa.RecordBatch.from_arrays([array, pa.array([1, 2, 3, 4])], names=["m", "x"]))
    assert batch.schema.field("m").type == pa.list_(
        pa.struct([("at", pa.timestamp("us", tz="UTC")), ("n", pa.int64())]))

    def floored(value: Any) -> Any:
        if isinstance(value, list):
            return [floored(item) for item in value]
        if isinstance(value, dict):
            return {**value, "at": None if value["at"] is None else floor_micros(value["at"], "ns")}
        return value

    assert batch.column(0).to_pylist() == floored(nanos)
    assert batch.column(1).to_pylist() == [1, 2, 3, 4]
    plain = pa.RecordBatch.from_arrays([pa.array([1])], names=["x"])
    assert at_microseconds(plain) is plain
