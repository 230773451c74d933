"""A task that says which worker ran it and whether that worker had the engine before it: for
`bench_audit.pool_start_cpu` and the executor's tests. It imports nothing of frayproof_audit, so
unpickling it in a worker adds nothing to what the worker's start-up imported or cost."""

from __future__ import annotations

import os
import sys
import time

ENGINE = "frayproof_audit.corpus.run.worker"
HOLD_S = 0.2
"""Long enough that a free worker takes the next task instead of the busy one; sleeping uses no CPU."""


def worker_state(_shared: None, _task: int) -> tuple[int, bool]:
    """(the worker's pid, whether the engine was imported before this task ran)."""
    loaded = ENGINE in sys.modules
    time.sleep(HOLD_S)
    return os.getpid(), loaded
