"""The cyclic garbage collector paused while a loop that makes no reference cycles runs.

Two loops keep many objects alive and drop many more, none of them in a cycle, so that every
object they drop is freed by its reference count: judging one pair's mutants, and a session
source replaying one file (`Source.cycle_free`). CPython's full collections walk every live
object, more often the more there are, which made both grow faster than their input:

* mutation, one record of tool-call exchanges, audit contract: 1,000 messages 42 µs per mutant
  with the collector, 40 without; 16,000 messages 73 with, 44 without
  (`tests/test_mutation_collector.py` holds "no cycle" for every contract the benchmarks use);
* a Claude Code transcript (`bench_sources`): 12.5 MB at 116 MB/s with the collector and 128
  without; 50 MB at 64 MB/s with it and 112 without (`tests/test_source_collector.py` holds
  "no cycle" for every file of the cycle-free sources in the tests and examples).

Paused, the cost stays flat, at no cost in memory since nothing was left for the collector to
find. The collector's state is restored on the way out, exception or not, and a collector that
someone else paused stays paused.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off; reference counting frees as always."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
