"""Shards are handed out largest first, and the dataset does not depend on the order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from frayproof_audit.corpus import audit, read_table
from frayproof_audit.corpus.inputs.expansion import InputFile
from frayproof_audit.corpus.inputs.shard_plan import Shard
from frayproof_audit.corpus.run import audit_run as run
from frayproof_audit.corpus.run import worker
from tests.corpus_support import good_lines, write_contract, write_jsonl

_SOURCE = InputFile("in.jsonl", "jsonl", 1 << 20)


def _shard(ordinal: int, size: int) -> Shard:
    return Shard(ordinal, _SOURCE, 0, size, 1, 1, size)


@given(st.lists(st.integers(0, 50), max_size=30))
def test_largest_first_ties_in_plan_order(sizes: list[int]) -> None:
    shards = [_shard(ordinal, size) for ordinal, size in enumerate(sizes)]
    ordered = run.dispatch_order(shards)
    assert sorted(shard.ordinal for shard in ordered) == list(range(len(sizes)))
    keys = [(-shard.weight, shard.ordinal) for shard in ordered]
    assert keys == sorted(keys)


class _Recorder:
    """`audit_shard` that notes the order in which shards start."""

    def __init__(self) -> None:
        self.started: list[int] = []

    def __call__(self, task: worker.ShardTask) -> worker.ShardResult:
        self.started.append(task.shard.ordinal)
        return worker.audit_shard(task)


def _corpus(folder: Path) -> list[Path]:
    """Three inputs in plan order: a small file (one shard), a `.gz` file (one shard, weighed by
    its compressed size) and a file cut into four shards of unequal sizes."""
    return [
        write_jsonl(folder / "a-small.jsonl", good_lines(2)),
        write_jsonl(folder / "b.jsonl.gz", good_lines(60, start=100)),
        write_jsonl(folder / "c-four.jsonl", good_lines(12, start=200)),
    ]


def _pairs(out: Path) -> pl.DataFrame:
    table = read_table(str(out), "pairs").collect()
    return table.drop("run_id").sort("source", "source_row")


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_a_run_starts_its_biggest_shards_first_and_writes_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    inputs = [str(path) for path in _corpus(tmp_path / "in")]
    contract = str(write_contract(tmp_path))
    recorder = _Recorder()
    monkeypatch.setattr(run, "audit_shard", recorder)
    options: dict[str, Any] = {"mutate": False, "fail_on": (), "shard_bytes": 4096}
    audit(inputs, contract, str(tmp_path / "out"), jobs=1, **options)
    shards = run.plan(run.expand_inputs(tuple(inputs), str(tmp_path / "out")).files, 4096)
    weights = {shard.ordinal: shard.weight for shard in shards}
    assert len(shards) >= 4 and len(set(weights.values())) > 1
    assert recorder.started == sorted(weights, key=lambda ordinal: (-weights[ordinal], ordinal))
    assert recorder.started[0] == max(weights, key=weights.__getitem__) != 0

    monkeypatch.setattr(run, "dispatch_order", list)  # plan order, as before
    monkeypatch.setattr(run, "audit_shard", worker.audit_shard)
    audit(inputs, contract, str(tmp_path / "plan-order"), jobs=2, backend=backend, **options)
    assert _pairs(tmp_path / "out").equals(_pairs(tmp_path / "plan-order"))
