"""Where a check-only audit's CPU goes, stage by stage, and the least any audit that checks must spend.

The library's `audit()` runs in this process (`--jobs 1`, check-only) with the steps a worker
takes for each record timed where the worker calls them (its module's names, wrapped for the
run): reading a line and hashing it (`read_shard`), strict parsing (`parse_json_record_sized`),
building the neutral views of both snapshots (`_load`), the checks and the blame
(`check_blamed`), and the repair behind `findings.repairable` (`repair_pair`). The rest of the
run's CPU is planning, the pairs and findings rows, the Parquet files and the commit.

`floor_s` is the work an audit cannot skip and still check every record as the contract says:
strict parsing (as `bench_audit.strict_seconds` times it: reading and parsing each line),
hashing each line (the `record_sha256` the incremental runs and `show` rely on; timed alone, on
lines already in memory, so the reading is not counted twice), the views and the checks. No
repair, no rows, no Parquet: a bound no real run reaches.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frayproof_audit.corpus.run import worker

STAGES = {
    "read_shard": "reading and hashing",
    "parse_json_record_sized": "strict parsing",
    "_load": "views",
    "check_blamed": "checks and blame",
    "repair_pair": "repair",
}
"""The worker's name for each timed step, and what the step is."""


@dataclass(frozen=True, slots=True)
class Shares:
    """CPU seconds per stage of one in-process check-only audit, and of the whole run."""

    stages: dict[str, float]
    total_s: float

    @property
    def rest_s(self) -> float:
        return self.total_s - sum(self.stages.values())

    def line(self) -> str:
        parts = [f"{STAGES[name]} {seconds:.2f}" for name, seconds in self.stages.items()]
        return (f"{', '.join(parts)}, the rest (planning, rows, Parquet, commit) {self.rest_s:.2f};"
                f" total {self.total_s:.2f} s")


def _timed(function: Callable[..., Any], name: str, spent: dict[str, float]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] += time.process_time() - start
    return timed


def _timed_iterator(function: Callable[..., Iterator[Any]], name: str,
                    spent: dict[str, float]) -> Callable[..., Iterator[Any]]:
    """A generator function whose every step (its `next`) is timed, not the caller's work between."""
    def timed(*args: Any, **kwargs: Any) -> Iterator[Any]:
        steps = function(*args, **kwargs)
        while True:
            start = time.process_time()
            try:
                item = next(steps)
            except StopIteration:
                return
            finally:
                spent[name] += time.process_time() - start
            yield item
    return timed


@contextlib.contextmanager
def _instrumented(spent: dict[str, float]) -> Iterator[None]:
    originals = {name: getattr(worker, name) for name in STAGES}
    try:
        for name, function in originals.items():
            wrap = _timed_iterator if name == "read_shard" else _timed
            setattr(worker, name, wrap(function, name, spent))
        yield
    finally:
        for name, function in originals.items():
            setattr(worker, name, function)


def measure(path: Path, contract: Path, scratch: Path, repeat: int) -> Shares:
    """The run with the least CPU of `repeat` (after a warm-up run), its stages as timed in it."""
    from frayproof_audit.corpus import audit

    best: Shares | None = None
    for attempt in range(repeat + 1):
        spent = dict.fromkeys(STAGES, 0.0)
        out = scratch / "stages"
        shutil.rmtree(out, ignore_errors=True)
        with _instrumented(spent):
            start = time.process_time()
            audit([str(path)], str(contract), str(out), jobs=1, mutate=False, fail_on=("none",),
                  run_id=f"stages-{attempt}")
            total = time.process_time() - start
        shutil.rmtree(out, ignore_errors=True)
        if attempt and (best is None or total < best.total_s):
            best = Shares(spent, total)
    assert best is not None
    return best


def hashing_seconds(path: Path, repeat: int) -> float:
    """CPU seconds of `sha256` over every line, the lines already in memory: best of `repeat`."""
    lines = path.read_bytes().splitlines()
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for line in lines:
            hashlib.sha256(line).hexdigest()
        best = min(best, time.process_time() - start)
    return best


def floor_s(shares: Shares, strict_s: float, hashing_s: float) -> float:
    """`strict_s` + `hashing_s` + the run's views and checks (module docstring)."""
    return strict_s + hashing_s + shares.stages["_load"] + shares.stages["check_blamed"]
