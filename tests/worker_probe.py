"""Tasks for executor tests that import nothing of frayproof_audit, so a worker's modules are
what its start-up imported, not what unpickling the task did."""

from __future__ import annotations

import os
import sys
import time

ENGINE = "frayproof_audit.corpus.worker"


def engine_loaded(_shared: None, _task: int) -> tuple[int, bool]:
    """(the worker's pid, whether the engine was imported before this task ran)."""
    loaded = ENGINE in sys.modules
    time.sleep(0.2)  # long enough that the other worker takes the next task
    return os.getpid(), loaded
