"""Giving a giant record's memory back to the system before the next one is read.

A worker's peak is what one record needs at once, plus whatever the C allocator kept of the
records before it. glibc's `malloc` keeps a lot: a block of 128 KiB or more gets its own
mapping and is returned to the system when freed, but each such free raises that threshold to
the block's size (up to 32 MiB), so after one giant record the blocks of the next (the parser's
rewrites, the values' pieces) come from the heap, and a freed heap is only given back from its
top. Arrow's pool (mimalloc) cannot reuse those pages, so a Parquet row's decoding stacks on
top of them. Measured on three 50 MB records (`bench_audit`, peak above a 1-record run / the
record): JSONL 3.97 → 3.78, Parquet with a page per row 8.96 → 7.27, with pyarrow's default
pages 12.25 → 11.17.

So once a worker meets a record of `BIG_RECORD_BYTES` or more, it fixes the threshold at
`MMAP_THRESHOLD_BYTES` (no more raising it; the setting is the whole process's, the caller's
own when the audit runs in-process), and after every such record it trims the heap
(`malloc_trim`). Ordinary records never touch the allocator. Where the C library is not glibc
both are no-ops.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

BIG_RECORD_BYTES = 8 * 1024 * 1024
"""A record this big (its size as read) makes the worker give memory back after it."""
MMAP_THRESHOLD_BYTES = 4 * 1024 * 1024
"""Blocks this big always get their own mapping, so freeing one returns it to the system."""
_M_MMAP_THRESHOLD = -3
"""glibc's `mallopt` parameter number for the mapping threshold (malloc.h)."""


@functools.cache
def _libc() -> Any:
    """glibc's `mallopt` and `malloc_trim` through ctypes, or None where they do not exist."""
    try:
        libc = ctypes.CDLL(None)
        mallopt, malloc_trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        return None
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    malloc_trim.argtypes, malloc_trim.restype = (ctypes.c_size_t,), ctypes.c_int
    return libc


@functools.cache
def _fix_threshold(libc: Any) -> bool:
    """Once per process: the mapping threshold stays at `MMAP_THRESHOLD_BYTES` from now on."""
    return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def before_record(size: int) -> bool:
    """Called before a record of `size` bytes is audited: when it is big, fix the mapping
    threshold (once per process), so its own blocks are returned as they are freed. True
    when the threshold is fixed."""
    if size < BIG_RECORD_BYTES:
        return False
    libc = _libc()
    return libc is not None and _fix_threshold(libc)


def after_record(size: int) -> bool:
    """Called once a record of `size` bytes has been let go: when it was big, give the heap's
    free pages back (`malloc_trim`). True when memory was trimmed."""
    if size < BIG_RECORD_BYTES:
        return False
    libc = _libc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
