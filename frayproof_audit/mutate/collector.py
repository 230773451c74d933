"""The cyclic garbage collector paused while one pair's mutants are judged.

Judging mutants makes no reference cycles: every object the loop drops is freed by its
reference count (`tests/test_mutation_collector.py` holds that for every contract the
benchmarks use, on both paths). But the loop keeps many objects alive (the record, its
indexes, an outcome per mutant), and CPython's full collections walk all of them, more often
the longer the record. Measured on one record of tool-call exchanges, audit contract: 1,000
messages 42 µs per mutant with the collector, 40 without; 16,000 messages 73 with, 44 without.
That made the cost per mutant grow with the record. Paused, it stays flat, at no cost in
memory since nothing was left for the collector to find.

The collector's state is restored on the way out, exception or not, and a collector that
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
