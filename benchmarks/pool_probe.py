"""A task that tells `bench_audit.pool_start_cpu` which worker ran it. It imports nothing of
frayproof_audit, so unpickling it in a worker adds nothing to what the worker's start-up costs."""

from __future__ import annotations

import os
import time

HOLD_S = 0.2
"""Long enough that a free worker takes the next task instead of the busy one; sleeping uses no CPU."""


def worker_pid(_shared: None, _task: int) -> int:
    time.sleep(HOLD_S)
    return os.getpid()
