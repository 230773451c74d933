"""A worker gives a giant record's memory back: the mapping threshold fixed, the heap trimmed."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.run import heap
from tests.corpus_support import line, record, write_contract, write_jsonl, write_parquet

GLIBC = heap._libc() is not None
needs_glibc = pytest.mark.skipif(not GLIBC, reason="the C library is not glibc")

# Frees a 30 MiB mapped block (glibc then raises its mapping threshold to 30 MiB), so the
# 5 MiB blocks written after it come from the heap; freed, they stay resident (below the trim
# threshold, which rose with it) unless the threshold was fixed first or the heap is trimmed.
_HEAP = """
import sys
from frayproof_audit.corpus.run import heap
def rss():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096
fix, trim = sys.argv[1] == "fix", sys.argv[2] == "trim"
if fix:
    assert heap.before_record(heap.BIG_RECORD_BYTES)
block = b"x" * (30 << 20)
del block
start = rss()
blocks = [b"y" * (5 << 20) for _ in range(8)]
keep = b"z" * 100  # allocated last: the heap's top stays in use
grown = rss() - start
del blocks
if trim:
    assert heap.after_record(heap.BIG_RECORD_BYTES)
print(grown, rss() - start)
"""


def _heap_run(fix: bool, trim: bool) -> tuple[int, int]:
    glibc_defaults = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")}
    done = subprocess.run([sys.executable, "-c", _HEAP, "fix" if fix else "-", "trim" if trim else "-"],
                          capture_output=True, text=True, check=True, env=glibc_defaults)
    grown, left = done.stdout.split()
    return int(grown), int(left)


@needs_glibc
def test_without_either_a_giant_records_blocks_stay_resident() -> None:
    grown, left = _heap_run(fix=False, trim=False)
    assert grown >= 35 << 20
    assert left >= 30 << 20  # the control: what the two remedies must give back


@needs_glibc
@pytest.mark.parametrize(("fix", "trim"), [(True, False), (False, True)])
def test_a_fixed_threshold_or_a_trim_gives_the_blocks_back(fix: bool, trim: bool) -> None:
    grown, left = _heap_run(fix, trim)
    assert grown >= 35 << 20
    assert left < 5 << 20


def test_ordinary_records_never_touch_the_allocator(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(heap, "_libc", lambda: calls.append("libc"))
    assert not heap.before_record(heap.BIG_RECORD_BYTES - 1)
    assert not heap.after_record(heap.BIG_RECORD_BYTES - 1)
    assert calls == []


def test_without_glibc_the_hooks_do_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_libc", lambda: None)
    assert not heap.before_record(1 << 30)
    assert not heap.after_record(1 << 30)


class _FakeLibc:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[int, ...]]] = []

    def mallopt(self, *args: int) -> int:
        self.calls.append(("mallopt", args))
        return 1

    def malloc_trim(self, *args: int) -> int:
        self.calls.append(("malloc_trim", args))
        return 1


@pytest.fixture
def fake_libc(monkeypatch: pytest.MonkeyPatch) -> Iterator[_FakeLibc]:
    fake = _FakeLibc()
    monkeypatch.setattr(heap, "_libc", lambda: fake)
    heap._fix_threshold.cache_clear()
    yield fake
    heap._fix_threshold.cache_clear()


def _big_record(index: int) -> dict[str, Any]:
    value = record(index)
    value["before"][1]["content"] = "long " * 6000  # 30 KB against about 1 KB
    return value


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_the_worker_trims_after_each_big_record_and_fixes_the_threshold_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_libc: _FakeLibc, kind: str
) -> None:
    records = [record(0), _big_record(1), record(2), _big_record(3)]
    monkeypatch.setattr(heap, "BIG_RECORD_BYTES", 15_000)  # between the two kinds of record
    if kind == "jsonl":
        path = write_jsonl(tmp_path / "in.jsonl", [line(value) for value in records])
    else:
        path = write_parquet(tmp_path / "in.parquet", records)
    summary = audit(str(path), str(write_contract(tmp_path)), str(tmp_path / "out"), jobs=1,
                    mutate=False, fail_on=())
    assert summary.pairs == 4
    assert fake_libc.calls == [("mallopt", (-3, heap.MMAP_THRESHOLD_BYTES)),
                               ("malloc_trim", (0,)), ("malloc_trim", (0,))]
    pairs = read_table(str(tmp_path / "out"), "pairs").collect()
    assert pairs.height == 4
    assert sorted(pairs["pair_id"].to_list()) == ["p0000", "p0001", "p0002", "p0003"]
    assert set(pairs["status"].to_list()) <= {"pass", "fail"}  # every record audited as usual
